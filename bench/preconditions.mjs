// Before anything is measured: the peers' packages are installed, and this package (its addon and
// its JS) is copied aside and checked to be the release build the figures are meant to describe.

import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { MCP_PACKAGES, OURS, PEERS, PEER_PACKAGES, TRACING_PACKAGES } from './lineup.mjs'
import { contenders, die, opts, quick, saved, workloads } from './settings.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')

/** A peer contender without its packages in bench/node_modules cannot run: say how to install them. */
export function checkPeersInstalled() {
  const needed = [
    ...(contenders.some((c) => PEERS.includes(c)) ? PEER_PACKAGES : []),
    ...(contenders.includes('ours-traced') ? TRACING_PACKAGES : []),
    ...(workloads.includes('mcp') ? MCP_PACKAGES : []),
  ]
  if (!saved) {
    for (const pkg of needed) {
      if (!existsSync(path.join(here, 'node_modules', pkg, 'package.json'))) {
        die(`${pkg} is not installed in bench/node_modules: run \`npm ci --prefix bench\` first`)
      }
    }
  }
}

// Other developers share this tree and may rebuild the addon (even as a debug build) while the
// benchmark runs: it measures a copy taken now, loaded through binding.js's
// NAPI_RS_NATIVE_LIBRARY_PATH override. `--addon FILE` measures another build (e.g. a stashed one,
// or target/x86_64-unknown-linux-gnu/release/libanthropic_tool_calling.so). The package's JS
// (index.js, binding.js, package.json: every top-level .js / .mjs, and lib/) is copied too, into
// the same directory, and the `ours` contenders load it from there (BENCH_PACKAGE_DIR): an edit
// or a merge in progress in the shared tree cannot break a measurement half-way.
//
// Returns the environment of the stand-in and of every child (no ANTHROPIC_* variable of the shell
// leaks into a contender), and what is known of the addon measured (null when `ours` is not).
export function preparePackage() {
  const addonSource = path.resolve(opts.addon ?? path.join(root, 'anthropic-tool-calling.linux-x64-gnu.node'))
  const packageCopy = path.join(os.tmpdir(), `anthropic-tool-calling-bench-${process.pid}`)
  const addonCopy = path.join(packageCopy, 'anthropic-tool-calling.node')
  const childEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANTHROPIC_') && !['BENCH_QUICK', 'BENCH_PACKAGE_DIR', 'NAPI_RS_NATIVE_LIBRARY_PATH'].includes(k)))
  let addon = saved ? saved.addon : null
  if (!saved && contenders.some((c) => OURS.includes(c))) {
    if (!existsSync(addonSource)) die(`no addon at ${addonSource}: run \`npm run build\` first`)
    mkdirSync(packageCopy, { recursive: true })
    process.on('exit', () => rmSync(packageCopy, { recursive: true, force: true }))
    copyFileSync(addonSource, addonCopy)
    for (const file of readdirSync(root)) {
      if (file === 'package.json' || /\.(c|m)?js$/.test(file)) copyFileSync(path.join(root, file), path.join(packageCopy, file))
    }
    cpSync(path.join(root, 'lib'), path.join(packageCopy, 'lib'), { recursive: true })
    // The copy finds `@opentelemetry/api` (its optional peer) where an app's installed package
    // would: in the app's node_modules, here bench/node_modules. So `ours` is a run with the API
    // installed and no tracer provider, and `ours-traced` registers its provider on the very
    // module the package loads (one copy, one realpath; its contender checks that).
    const api = path.join(here, 'node_modules', '@opentelemetry', 'api')
    if (existsSync(api)) {
      mkdirSync(path.join(packageCopy, 'node_modules', '@opentelemetry'), { recursive: true })
      symlinkSync(api, path.join(packageCopy, 'node_modules', '@opentelemetry', 'api'), 'dir')
    }
    try {
      JSON.parse(readFileSync(path.join(packageCopy, 'package.json'), 'utf8'))
    } catch (e) {
      die(`the package's package.json does not parse (a merge in progress?): ${e.message}`)
    }
    childEnv.NAPI_RS_NATIVE_LIBRARY_PATH = addonCopy
    childEnv.BENCH_PACKAGE_DIR = packageCopy
    const probe = spawnSync(process.execPath, ['-p', `require(${JSON.stringify(path.join(packageCopy, 'binding.js'))}).buildProfile()`], { env: childEnv, encoding: 'utf8' })
    if (probe.status !== 0) die(`cannot load the addon ${addonSource}: ${probe.stderr.trim().split('\n').slice(-3).join(' ')}`)
    const st = statSync(addonSource)
    addon = {
      source: path.relative(root, addonSource).startsWith('..') ? addonSource : path.relative(root, addonSource) || addonSource,
      profile: probe.stdout.trim(),
      mtimeMs: st.mtimeMs,
      size: st.size,
      sha256: createHash('sha256').update(readFileSync(addonCopy)).digest('hex').slice(0, 12),
    }
    if (addon.profile !== 'release') {
      const banner = `\n${'!'.repeat(78)}\n!! The addon is a ${addon.profile} build: its figures mean nothing. Run \`npm run build\` (release) first.\n${'!'.repeat(78)}\n\n`
      if (quick || opts['allow-debug']) process.stderr.write(banner)
      else die(`the addon ${addon.source} is a ${addon.profile} build; run \`npm run build\` (release) first (or pass --addon FILE, or --allow-debug: never written to RESULTS.md)`)
    }
  }
  return { childEnv, addon }
}
