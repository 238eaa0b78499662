// What a run is recorded with, so its figures can be told apart from another's: the machine, the
// commit of this package measured, and the versions of the peers.

import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')

/** The version of a peer package installed in bench/node_modules. */
export function versionOf(pkg) {
  try {
    return JSON.parse(readFileSync(path.join(here, 'node_modules', pkg, 'package.json'), 'utf8')).version
  } catch {
    return 'not installed'
  }
}

/** The commit measured, and whether the engine's sources differ from it (others edit this tree). */
export function sourceState() {
  const git = (args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' })
  const head = git(['rev-parse', '--short', 'HEAD']).stdout?.trim() || 'unknown'
  const dirty = git(['status', '--porcelain', '--', 'src', 'Cargo.toml', 'Cargo.lock', 'build.rs', 'index.js', 'binding.js']).stdout?.trim()
  return { head, dirty: Boolean(dirty) }
}

/** The machine: cores, CPU model, memory, Node and the OS. */
export function machine() {
  let model = os.cpus()[0]?.model ?? 'unknown'
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'))
    if (line) model = line.split(':')[1].trim()
  } catch {}
  return {
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    cpu: model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
  }
}
