// Before anything is measured: the peers' packages are installed, and this package (its addon and
// its JS) is copied aside and checked to be the release build the figures are meant to describe;
// with --against, the other commit's too, once its worktree is made and its addon built.

import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { hostPlatform } from '../scripts/platform.mjs'
import { ensureBuilt, ensureNodeModules, ensureWorktree } from './against.mjs'
import { ALL_OURS, BEDROCK_PACKAGES, MCP_PACKAGES, OURS, PEERS, PEER_PACKAGES, TRACING_PACKAGES } from './lineup.mjs'
import { against, contenders, die, lacking, opts, quick, saved, workloads } from './settings.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')
/** The addon `npm run build` makes on this machine (anthropic-tool-calling.linux-x64-gnu.node …). */
const ADDON_NAME = `anthropic-tool-calling.${hostPlatform()}.node`

/** A peer contender without its packages in bench/node_modules cannot run: say how to install them. */
export function checkPeersInstalled() {
  const needed = [
    ...(contenders.some((c) => PEERS.includes(c)) ? PEER_PACKAGES : []),
    ...(contenders.includes('ours-traced') ? TRACING_PACKAGES : []),
    ...(workloads.includes('mcp') ? MCP_PACKAGES : []),
    ...(workloads.includes('bedrock') && contenders.some((c) => PEERS.includes(c)) ? BEDROCK_PACKAGES : []),
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
  const addonSource = path.resolve(opts.addon ?? path.join(root, ADDON_NAME))
  const childEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANTHROPIC_') && !['BENCH_QUICK', 'BENCH_PACKAGE_DIR', 'NAPI_RS_NATIVE_LIBRARY_PATH'].includes(k)))
  let addon = saved ? saved.addon : null
  if (!saved && contenders.some((c) => ALL_OURS.includes(c))) {
    if (!existsSync(addonSource)) die(`no addon at ${addonSource}: run \`npm run build\` first`)
    addon = copyPackage(root, addonSource, path.join(os.tmpdir(), `anthropic-tool-calling-bench-${process.pid}`), childEnv)
    if (addon.profile !== 'release') {
      const banner = `\n${'!'.repeat(78)}\n!! The addon is a ${addon.profile} build: its figures mean nothing. Run \`npm run build\` (release) first.\n${'!'.repeat(78)}\n\n`
      // Against another commit, whose addon is always built release, even a smoke run refuses a debug one.
      if (against && !opts['allow-debug']) {
        die(`the addon measured as this tree's, ${addon.source}, is a ${addon.profile} build: comparing it with ${against.short}'s release build means nothing; run \`npm run build\` (release) first`)
      }
      if (quick || opts['allow-debug']) process.stderr.write(banner)
      else die(`the addon ${addon.source} is a ${addon.profile} build; run \`npm run build\` (release) first (or pass --addon FILE, or --allow-debug: never written to RESULTS.md)`)
    }
  }
  return { childEnv, addon }
}

/**
 * `--against REF`: the ref's worktree made (or found), its node_modules, its release addon built
 * with its own `npm run build` (or found built), and its package copied aside as this tree's is.
 * Returns the environment of its children (`env` with its copy in place of this tree's) and what
 * is known of its addon.
 */
export function prepareRef(env) {
  const log = (m) => console.log(`bench: --against ${against.ref} (${against.short}): ${m}`)
  const refEnv = { ...env }
  let addon
  try {
    const { dir, created } = ensureWorktree(root, against.sha)
    log(`${created ? 'checked out in' : 'its worktree is'} ${path.relative(root, dir)}`)
    ensureNodeModules(root, dir, log)
    const built = ensureBuilt(root, against.sha, dir, ADDON_NAME, process.env, log)
    addon = copyPackage(dir, built, path.join(os.tmpdir(), `anthropic-tool-calling-bench-${process.pid}-${against.short}`), refEnv)
  } catch (e) {
    die(e.message)
  }
  // A commit from before buildProfile() existed: its addon was built by its `npm run build`, which is a release build.
  if (addon.profile === null) addon.profile = 'release'
  if (addon.profile !== 'release') die(`${against.short}'s addon ${addon.source} is a ${addon.profile} build: its \`npm run build\` does not build release`)
  for (const why of lacking) log(`no row for ${why}`)
  return { env: refEnv, addon: { ...addon, ref: against.ref, sha: against.sha } }
}

/** One hash of the package's JS as copied: each file's path and bytes, in name order. */
function hashFiles(dir, files) {
  const hash = createHash('sha256')
  for (const file of [...files].sort()) {
    const full = path.join(dir, file)
    if (!statSync(full).isFile()) continue
    hash.update(`${file.split(path.sep).join('/')}\0`).update(readFileSync(full)).update('\0')
  }
  return hash.digest('hex').slice(0, 12)
}

/**
 * Copies a package (its top-level .js / .mjs / .cjs, package.json and lib/ if it has one, from `from`) and the
 * addon `addonSource` into `to`, removed when the bench exits, and points `env` at the copy.
 * Returns what is known of the addon: its profile as its buildProfile() says (null when it has
 * none), size, time and hash.
 */
function copyPackage(from, addonSource, to, env) {
  const addonCopy = path.join(to, 'anthropic-tool-calling.node')
  mkdirSync(to, { recursive: true })
  process.on('exit', () => rmSync(to, { recursive: true, force: true }))
  copyFileSync(addonSource, addonCopy)
  const js = []
  for (const file of readdirSync(from)) {
    if (file === 'package.json' || /\.(c|m)?js$/.test(file)) {
      copyFileSync(path.join(from, file), path.join(to, file))
      js.push(file)
    }
  }
  // lib/ came with the engine's wings (issue 35); a commit before them (--against) has none.
  if (existsSync(path.join(from, 'lib'))) {
    cpSync(path.join(from, 'lib'), path.join(to, 'lib'), { recursive: true })
    for (const file of readdirSync(path.join(to, 'lib'), { recursive: true })) js.push(path.join('lib', file))
  }
  // The copy finds `@opentelemetry/api` (its optional peer) where an app's installed package
  // would: in the app's node_modules, here bench/node_modules. So `ours` is a run with the API
  // installed and no tracer provider, and `ours-traced` registers its provider on the very
  // module the package loads (one copy, one realpath; its contender checks that).
  const api = path.join(here, 'node_modules', '@opentelemetry', 'api')
  if (existsSync(api)) {
    mkdirSync(path.join(to, 'node_modules', '@opentelemetry'), { recursive: true })
    symlinkSync(api, path.join(to, 'node_modules', '@opentelemetry', 'api'), 'dir')
  }
  try {
    JSON.parse(readFileSync(path.join(to, 'package.json'), 'utf8'))
  } catch (e) {
    die(`the package.json of ${from} does not parse (a merge in progress?): ${e.message}`)
  }
  env.NAPI_RS_NATIVE_LIBRARY_PATH = addonCopy
  env.BENCH_PACKAGE_DIR = to
  const probe = spawnSync(process.execPath, ['-p', `const b = require(${JSON.stringify(path.join(to, 'binding.js'))}); typeof b.buildProfile === 'function' ? b.buildProfile() : ''`], { env, encoding: 'utf8' })
  if (probe.status !== 0) die(`cannot load the addon ${addonSource}: ${probe.stderr.trim().split('\n').slice(-3).join(' ')}`)
  const st = statSync(addonSource)
  return {
    source: path.relative(root, addonSource).startsWith('..') ? addonSource : path.relative(root, addonSource) || addonSource,
    profile: probe.stdout.trim() || null,
    mtimeMs: st.mtimeMs,
    size: st.size,
    sha256: createHash('sha256').update(readFileSync(addonCopy)).digest('hex').slice(0, 12),
    jsSha256: hashFiles(to, js),
  }
}
