// `npm run bench -- --against <git-ref>`: the working tree against another commit of this package,
// measured in one run. The ref is resolved to its commit with git, checked out once in a git
// worktree of its own under bench/.against/<sha> (gitignored, kept: the next run against the same
// commit builds nothing), and its release addon built there with its own `npm run build`; the
// bench's own harness (this tree's bench/) then measures both, taking turns round after round.
//
// Nothing here reads the command line (settings.mjs does, and calls in): the functions take the
// repository's root, so the tests run them on a repository of their own.

import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'

/** The contenders that load this package, and what a ref must have for each to be measured in it. */
export const OURS_FEATURES = {
  ours: null,
  'ours-hooks': 'hooks',
  'ours-traced': 'tracing',
}

/** Where the refs are kept, under the repository's root. */
export const CACHE = path.join('bench', '.against')

/** npm is npm.cmd on Windows, which only a shell runs. */
const WINDOWS = process.platform === 'win32'

const git = (root, args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' })

/**
 * The commit `ref` names in the repository at `root`: `{ ref, sha, short }`. Throws an Error
 * whose message says what was wrong and what to do (no such ref, not a commit, no git).
 */
export function resolveRef(root, ref) {
  if (typeof ref !== 'string' || ref.trim() === '') throw new Error('--against needs a git ref: a branch, a tag, a commit or an expression like HEAD~1')
  // A ref cannot start with a dash; an argument that does is an option git would read as one.
  if (ref.startsWith('-')) throw new Error(`--against: ${ref} is not a git ref (it starts with a dash)`)
  const found = git(root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])
  if (found.error) throw new Error(`--against: git could not be run (${found.error.message}); it is needed to check out ${ref}`)
  if (found.status !== 0) {
    throw new Error(`--against: ${ref} names no commit in this repository (git rev-parse --verify '${ref}^{commit}' found none): give a branch, a tag or a commit, and fetch it first if it is a remote one`)
  }
  const sha = found.stdout.trim()
  return { ref, sha, short: sha.slice(0, 9) }
}

/** The worktree of commit `sha`: one directory a commit, so a second run against it reuses what the first built. */
export function cacheDir(root, sha) {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) throw new Error(`not a full commit id: ${sha}`)
  return path.join(root, CACHE, sha)
}

/** The file that says a commit's release addon was built whole: beside its worktree, never in it. */
export const builtMarker = (root, sha) => `${cacheDir(root, sha)}.built`

/**
 * What the commit `sha` has of the features measured in rows of their own, read from its files
 * without checking it out: its hooks (`onToolCall`, `onToolResult` and `onStepFinish` in its
 * index.d.ts) and its tracing (lib/telemetry.js). A commit too old for one has no row for it.
 */
export function refFeatures(root, sha) {
  const show = (file) => {
    const r = git(root, ['show', `${sha}:${file}`])
    return r.status === 0 ? r.stdout : null
  }
  const types = show('index.d.ts') ?? ''
  const pkg = show('package.json')
  let build = null
  try {
    build = JSON.parse(pkg ?? 'null')?.scripts?.build ?? null
  } catch {}
  return {
    build,
    hooks: ['onToolCall', 'onToolResult', 'onStepFinish'].every((h) => types.includes(h)),
    tracing: git(root, ['cat-file', '-e', `${sha}:lib/telemetry.js`]).status === 0,
  }
}

/** Why a ref cannot be measured at all (no `npm run build` to make its addon), or null. */
export function unusableWhy(ref, features) {
  if (!features.build) return `--against: ${ref.ref} (${ref.short}) has no \`npm run build\` script in its package.json, so its release addon cannot be built`
  return null
}

/** The ref's name of a contender: `ours@1a2b3c4d5`. */
export const refName = (contender, short) => `${contender}@${short}`

/** The contender a name stands for (`ours-hooks@1a2b3c4d5` → `ours-hooks`). */
export const baseOf = (name) => name.split('@')[0]

/**
 * The ref's contenders: each of ours among `contenders` that the ref has the feature of, named
 * for the ref. `features` as refFeatures returns it; `lacking` gets the ones left out, and why.
 */
export function refContenders(contenders, features, short, lacking = []) {
  const out = []
  for (const c of contenders) {
    if (!(c in OURS_FEATURES)) continue
    const needs = OURS_FEATURES[c]
    if (needs !== null && !features[needs]) lacking.push(`${c}: ${short} has no ${needs}`)
    else out.push(refName(c, short))
  }
  return out
}

/**
 * How the ref's worktree gets the packages its build needs: a link to the working tree's
 * node_modules when both lockfiles are the same text, else `npm ci` of its own (or nothing, when
 * what it has still fits). `has`: 'none', 'link' or 'own' (a node_modules of its own).
 */
export function nodeModulesPlan({ refLock, treeLock, treeHasModules, has }) {
  const same = refLock !== null && refLock === treeLock && treeHasModules
  if (same) return has === 'none' ? 'link' : 'keep'
  // A link to a tree whose lockfile is no longer the ref's (the tree moved on) is replaced.
  return has === 'own' ? 'keep' : 'ci'
}

/**
 * The worktree of `sha` at cacheDir(root, sha): made with `git worktree add --detach`, or reused
 * when it is already there at that commit. A directory there that is not (half made, or git's
 * record of it pruned) is removed and made again. Returns `{ dir, created }`.
 */
export function ensureWorktree(root, sha) {
  const dir = cacheDir(root, sha)
  if (existsSync(dir)) {
    const head = git(dir, ['rev-parse', 'HEAD'])
    const top = git(dir, ['rev-parse', '--show-toplevel'])
    if (head.status === 0 && head.stdout.trim() === sha && top.status === 0 && realpathSync(top.stdout.trim()) === realpathSync(dir)) return { dir, created: false }
    rmSync(dir, { recursive: true, force: true })
    rmSync(builtMarker(root, sha), { force: true })
  }
  mkdirSync(path.dirname(dir), { recursive: true })
  // A worktree removed by hand is still in git's list until pruned, and git refuses to add it again
  // without --force (which overrides that alone here: the directory is gone, and --detach takes no branch).
  const added = git(root, ['worktree', 'add', '--force', '--detach', dir, sha])
  if (added.status !== 0) throw new Error(`--against: git worktree add ${path.relative(root, dir)} ${sha.slice(0, 9)} failed: ${added.stderr.trim()}`)
  return { dir, created: true }
}

function readOrNull(file) {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return null
  }
}

/** Gives the ref's worktree its node_modules (see nodeModulesPlan); `log` says what was done. */
export function ensureNodeModules(root, dir, log) {
  const modules = path.join(dir, 'node_modules')
  let has = 'none'
  try {
    has = lstatSync(modules).isSymbolicLink() ? 'link' : 'own'
  } catch {}
  const treeModules = path.join(root, 'node_modules')
  const plan = nodeModulesPlan({
    refLock: readOrNull(path.join(dir, 'package-lock.json')),
    treeLock: readOrNull(path.join(root, 'package-lock.json')),
    treeHasModules: existsSync(treeModules),
    has,
  })
  if (plan === 'keep') return plan
  if (plan === 'link') {
    symlinkSync(realpathSync(treeModules), modules, 'dir')
    log(`its package-lock.json is the working tree's: node_modules linked to ${realpathSync(treeModules)}`)
    return plan
  }
  rmSync(modules, { recursive: true, force: true })
  log('its package-lock.json differs from the working tree\'s: npm ci in its worktree')
  const ci = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'], shell: WINDOWS })
  if (ci.status !== 0) throw new Error(`--against: npm ci in ${dir} failed (${ci.error?.message ?? `exit ${ci.status}`}); its output is above`)
  return plan
}

/**
 * The ref's release addon, built once with its own `npm run build` in its worktree (cargo's
 * target dir: $CARGO_TARGET_DIR when set, else bench/.against/target, shared by every ref so a
 * build after another is incremental). Returns the path of the .node.
 */
export function ensureBuilt(root, sha, dir, addonName, env, log) {
  const addon = path.join(dir, addonName)
  const marker = builtMarker(root, sha)
  if (existsSync(marker) && existsSync(addon)) {
    log(`its release addon was built before (${path.relative(root, addon)})`)
    return addon
  }
  const targetDir = env.CARGO_TARGET_DIR || path.join(root, CACHE, 'target')
  log(`building its release addon: npm run build (CARGO_TARGET_DIR=${targetDir}); a few minutes the first time`)
  const built = spawnSync('npm', ['run', 'build'], { cwd: dir, env: { ...env, CARGO_TARGET_DIR: targetDir }, stdio: ['ignore', 'inherit', 'inherit'], shell: WINDOWS })
  if (built.status !== 0) throw new Error(`--against: npm run build in ${dir} failed (${built.error?.message ?? `exit ${built.status}`}); its output is above`)
  if (!existsSync(addon)) throw new Error(`--against: npm run build in ${dir} made no ${addonName}`)
  writeFileSync(marker, `${sha}\n`)
  return addon
}
