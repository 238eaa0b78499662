// `npm run bench -- --against <ref>`, the parts that need no release build: the ref resolved to
// its commit, the worktree kept under bench/.against/<sha> (made once, reused, made again when it
// is gone), what a commit has of the features measured in rows of their own, how its build is
// run, the command line's refusals, and the table of ratios from figures given here.
//
// Git runs on a repository of the test's own in a temporary directory, never on this one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  baseOf,
  builtMarker,
  cacheDir,
  ensureBuilt,
  ensureWorktree,
  nodeModulesPlan,
  refContenders,
  refFeatures,
  resolveRef,
} from '../bench/against.mjs'
import { AGAINST_FIGURES, againstReport, againstTable, ratioSummary, roundRatios } from '../bench/against-report.mjs'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')

/** A repository of two commits: the first without hooks or tracing, the second with both; tag v1 on the first. */
function makeRepo() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-against-'))
  const git = (...args) => {
    const r = spawnSync('git', ['-c', 'user.name=bench test', '-c', 'user.email=bench@example.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' })
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`)
    return r.stdout.trim()
  }
  git('init', '-q')
  const build = "node -e \"require('fs').writeFileSync('addon.node', 'built with ' + process.env.CARGO_TARGET_DIR)\""
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'anthropic-tool-calling', scripts: { build } }))
  writeFileSync(path.join(dir, 'index.d.ts'), 'export declare function runWithTools(): void\n')
  writeFileSync(path.join(dir, '.gitignore'), '/bench/.against\n')
  git('add', '-A')
  git('commit', '-q', '-m', 'first')
  git('tag', 'v1')
  mkdirSync(path.join(dir, 'lib'))
  writeFileSync(path.join(dir, 'lib', 'telemetry.js'), "'use strict'\n")
  writeFileSync(path.join(dir, 'index.d.ts'), 'export interface Hooks { onToolCall?(): void; onToolResult?(): void; onStepFinish?(): void }\n')
  git('add', '-A')
  git('commit', '-q', '-m', 'second')
  return { dir, git, first: git('rev-parse', 'HEAD~1'), second: git('rev-parse', 'HEAD') }
}

test('a ref is resolved to its commit, by any of its names', (t) => {
  const repo = makeRepo()
  t.after(() => rmSync(repo.dir, { recursive: true, force: true }))
  assert.deepEqual(resolveRef(repo.dir, 'HEAD~1'), { ref: 'HEAD~1', sha: repo.first, short: repo.first.slice(0, 9) })
  for (const name of ['v1', repo.first, repo.first.slice(0, 10)]) assert.equal(resolveRef(repo.dir, name).sha, repo.first, name)
  assert.equal(resolveRef(repo.dir, 'HEAD').sha, repo.second)
})

test('a ref that names no commit is refused with what to do', (t) => {
  const repo = makeRepo()
  t.after(() => rmSync(repo.dir, { recursive: true, force: true }))
  assert.throws(() => resolveRef(repo.dir, 'no-such-branch'), /--against: no-such-branch names no commit in this repository .*give a branch, a tag or a commit/)
  // A tree is an object, not a commit.
  assert.throws(() => resolveRef(repo.dir, 'HEAD^{tree}'), /names no commit/)
  assert.throws(() => resolveRef(repo.dir, 'HEAD~5'), /names no commit/)
  assert.throws(() => resolveRef(repo.dir, ''), /--against needs a git ref/)
  assert.throws(() => resolveRef(repo.dir, '--output=/tmp/x'), /is not a git ref \(it starts with a dash\)/)
})

test('the worktree of a commit is kept under bench/.against/<sha>: one directory whatever names the commit', (t) => {
  const repo = makeRepo()
  t.after(() => rmSync(repo.dir, { recursive: true, force: true }))
  const dir = cacheDir(repo.dir, repo.first)
  assert.equal(dir, path.join(repo.dir, 'bench', '.against', repo.first))
  for (const name of ['v1', 'HEAD~1', repo.first.slice(0, 8)]) assert.equal(cacheDir(repo.dir, resolveRef(repo.dir, name).sha), dir, name)
  assert.notEqual(cacheDir(repo.dir, repo.second), dir)
  assert.equal(builtMarker(repo.dir, repo.first), `${dir}.built`)
  assert.throws(() => cacheDir(repo.dir, 'v1'), /not a full commit id/)
  assert.throws(() => cacheDir(repo.dir, '../../etc'), /not a full commit id/)
})

test('the worktree is made once, reused, and made again when it is gone or is not one', (t) => {
  const repo = makeRepo()
  t.after(() => rmSync(repo.dir, { recursive: true, force: true }))
  const made = ensureWorktree(repo.dir, repo.first)
  assert.deepEqual(made, { dir: cacheDir(repo.dir, repo.first), created: true })
  // It is the first commit's tree: no lib/telemetry.js yet.
  assert.ok(existsSync(path.join(made.dir, 'package.json')))
  assert.equal(existsSync(path.join(made.dir, 'lib', 'telemetry.js')), false)
  assert.equal(repo.git('-C', made.dir, 'rev-parse', 'HEAD'), repo.first)
  // The working tree does not see it (gitignored).
  assert.equal(repo.git('status', '--porcelain'), '')

  writeFileSync(path.join(made.dir, 'kept.txt'), 'from the first run')
  assert.deepEqual(ensureWorktree(repo.dir, repo.first), { dir: made.dir, created: false })
  assert.equal(readFileSync(path.join(made.dir, 'kept.txt'), 'utf8'), 'from the first run')

  // Removed by hand (git still lists it until pruned): made again.
  rmSync(made.dir, { recursive: true, force: true })
  assert.equal(ensureWorktree(repo.dir, repo.first).created, true)
  assert.equal(repo.git('-C', made.dir, 'rev-parse', 'HEAD'), repo.first)

  // A directory there that is not its worktree (a copy, a half-made one): replaced, its marker with it.
  rmSync(made.dir, { recursive: true, force: true })
  repo.git('worktree', 'prune')
  mkdirSync(made.dir, { recursive: true })
  writeFileSync(path.join(made.dir, 'junk'), '')
  writeFileSync(builtMarker(repo.dir, repo.first), 'stale')
  assert.equal(ensureWorktree(repo.dir, repo.first).created, true)
  assert.equal(existsSync(path.join(made.dir, 'junk')), false)
  assert.equal(existsSync(builtMarker(repo.dir, repo.first)), false)
})

test('its addon is built once, with its own npm run build and the target dir given', (t) => {
  const repo = makeRepo()
  t.after(() => rmSync(repo.dir, { recursive: true, force: true }))
  const { dir } = ensureWorktree(repo.dir, repo.first)
  const said = []
  const env = { ...process.env, CARGO_TARGET_DIR: '' }
  const addon = ensureBuilt(repo.dir, repo.first, dir, 'addon.node', env, (m) => said.push(m))
  assert.equal(addon, path.join(dir, 'addon.node'))
  // No CARGO_TARGET_DIR: the one shared by every ref, under bench/.against.
  assert.equal(readFileSync(addon, 'utf8'), `built with ${path.join(repo.dir, 'bench', '.against', 'target')}`)
  assert.equal(readFileSync(builtMarker(repo.dir, repo.first), 'utf8').trim(), repo.first)
  assert.match(said.join('\n'), /building its release addon: npm run build/)

  // Built before: not again (the file is left as it is).
  writeFileSync(addon, 'untouched')
  said.length = 0
  ensureBuilt(repo.dir, repo.first, dir, 'addon.node', env, (m) => said.push(m))
  assert.equal(readFileSync(addon, 'utf8'), 'untouched')
  assert.match(said.join('\n'), /built before/)

  // No marker (a build that stopped half-way): built again, with $CARGO_TARGET_DIR when set.
  rmSync(builtMarker(repo.dir, repo.first))
  ensureBuilt(repo.dir, repo.first, dir, 'addon.node', { ...process.env, CARGO_TARGET_DIR: path.join(repo.dir, 'elsewhere') }, () => {})
  assert.equal(readFileSync(addon, 'utf8'), `built with ${path.join(repo.dir, 'elsewhere')}`)

  // A build that fails says so, and leaves no marker.
  rmSync(builtMarker(repo.dir, repo.first))
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ scripts: { build: 'node -e "process.exit(3)"' } }))
  assert.throws(() => ensureBuilt(repo.dir, repo.first, dir, 'addon.node', env, () => {}), /--against: npm run build in .* failed \(exit 3\)/)
  assert.equal(existsSync(builtMarker(repo.dir, repo.first)), false)
})

test('a commit too old for hooks or tracing has no row for them', (t) => {
  const repo = makeRepo()
  t.after(() => rmSync(repo.dir, { recursive: true, force: true }))
  const old = refFeatures(repo.dir, repo.first)
  assert.equal(old.hooks, false)
  assert.equal(old.tracing, false)
  assert.match(old.build, /writeFileSync/)
  const lacking = []
  assert.deepEqual(refContenders(['ours', 'ours-hooks', 'ours-traced', 'sdk', 'floor'], old, 'abc123456', lacking), ['ours@abc123456'])
  assert.deepEqual(lacking, ['ours-hooks: abc123456 has no hooks', 'ours-traced: abc123456 has no tracing'])

  const recent = refFeatures(repo.dir, repo.second)
  assert.equal(recent.hooks, true)
  assert.equal(recent.tracing, true)
  const twins = refContenders(['ours', 'ours-hooks', 'ours-traced', 'ai'], recent, 'def456789')
  assert.deepEqual(twins, ['ours@def456789', 'ours-hooks@def456789', 'ours-traced@def456789'])
  assert.deepEqual(twins.map(baseOf), ['ours', 'ours-hooks', 'ours-traced'])
})

test('its node_modules: a link to the tree\'s when the lockfiles are the same text, else npm ci', () => {
  const plan = (refLock, has, treeHasModules = true) => nodeModulesPlan({ refLock, treeLock: 'lock A', treeHasModules, has })
  assert.equal(plan('lock A', 'none'), 'link')
  assert.equal(plan('lock A', 'link'), 'keep')
  assert.equal(plan('lock A', 'own'), 'keep')
  assert.equal(plan('lock B', 'none'), 'ci')
  // A link made when the lockfiles were the same, and the tree's has changed since.
  assert.equal(plan('lock B', 'link'), 'ci')
  assert.equal(plan('lock B', 'own'), 'keep')
  assert.equal(plan(null, 'none'), 'ci')
  assert.equal(plan('lock A', 'none', false), 'ci')
})

/** A measurement as bench/child.mjs reports it (with the driver's round), the figures compared given. */
function measurement(contender, workload, concurrency, round, f, extra = {}) {
  return { contender, workload, concurrency, round, failures: 0, cpuUsPerRun: f[0], mainCpuUsPerRun: f[1], runsPerSec: f[2], p50Ms: f[3], p99Ms: f[4], startMs: f[5], ...extra }
}

test('the table of ratios: working tree ÷ ref per cell and contender, the median of the rounds and their range', () => {
  const ref = 'ours@abc123456'
  const raw = [
    // order c=64: three rounds; the tree costs 1.10×, 1.20×, 1.00× the ref's CPU in them.
    measurement('ours', 'order', 64, 0, [110, 40, 900, 10, 20, 8]),
    measurement(ref, 'order', 64, 0, [100, 40, 1000, 10, 10, 4]),
    measurement('ours', 'order', 64, 1, [120, 30, 950, 12, 24, 8]),
    measurement(ref, 'order', 64, 1, [100, 40, 1000, 10, 12, 4]),
    measurement('ours', 'order', 64, 2, [100, 50, 1000, 9, 22, 8]),
    measurement(ref, 'order', 64, 2, [100, 40, 1000, 10, 11, 4]),
    // ours-hooks at order c=64, one round, its ref side failed a conversation.
    measurement('ours-hooks', 'order', 64, 0, [150, 60, 800, 11, 21, 9]),
    measurement('ours-hooks@abc123456', 'order', 64, 0, [100, 60, 800, 11, 21, 9], { failures: 2 }),
    // heavy c=64: only the tree was measured (a ref twin that broke): no row.
    measurement('ours', 'heavy', 64, 0, [1000, 100, 90, 300, 400, 8]),
    { contender: ref, workload: 'heavy', concurrency: 64, round: 0, failures: 1, broken: true },
    // A peer is never compared.
    measurement('sdk', 'order', 64, 0, [500, 400, 300, 30, 60, 40]),
  ]
  const cells = [{ workload: 'order', concurrency: 64 }, { workload: 'heavy', concurrency: 64 }]
  const pairs = [{ tree: 'ours', ref }, { tree: 'ours-hooks', ref: 'ours-hooks@abc123456' }, { tree: 'ours-traced', ref: 'ours-traced@abc123456' }]

  assert.deepEqual(roundRatios(raw, { workload: 'order', concurrency: 64, tree: 'ours', ref, key: 'cpuUsPerRun' }).map((r) => +r.toFixed(6)), [1.1, 1.2, 1])
  assert.deepEqual(ratioSummary([1.1, 1.2, 1]), { median: 1.1, min: 1, max: 1.2, n: 3 })
  assert.equal(ratioSummary([]), null)

  const lines = againstTable(raw, { cells, pairs }).split('\n')
  assert.deepEqual(lines[0].split('|').map((s) => s.trim()).filter(Boolean), ['cell', 'contender', ...AGAINST_FIGURES.map((f) => f.head), 'rounds'])
  assert.deepEqual(AGAINST_FIGURES.map((f) => f.head), ['CPU per run', 'main-thread CPU per run', 'runs/s', 'p50', 'p99', 'cold start'])
  assert.match(lines[1], /^\| --- \| --- \|( ---: \|){7}$/)
  // One row a pair measured on both sides: ours and ours-hooks at order c=64; nothing for heavy or ours-traced.
  assert.equal(lines.length, 4)
  const cellsOf = (line) => line.split('|').slice(1, -1).map((s) => s.trim())
  assert.deepEqual(cellsOf(lines[2]), ['order c=64', 'ours', '1.10× (1.00–1.20)', '1.00× (0.75–1.25)', '0.95× (0.90–1.00)', '1.00× (0.90–1.20)', '2.00× (2.00–2.00)', '2.00× (2.00–2.00)', '3'])
  // One round: no range; a failure on either side is flagged.
  assert.deepEqual(cellsOf(lines[3]), ['order c=64', 'ours-hooks ⚠ FAILED', '1.50×', '1.00×', '1.00×', '1.00×', '1.00×', '1.00×', '1'])

  const report = againstReport(raw, { cells, pairs, against: { ref: 'main', short: 'abc123456' } })
  assert.match(report, /^### This working tree ÷ main \(abc123456\), same run\n/)
  assert.match(report, /Below 1\.00× the working tree costs less/)
  // Ratios only: no absolute figure of the input appears in the report.
  assert.doesNotMatch(report, /µs|\bms\b|\b110\b|\b900\b/)
  assert.doesNotMatch(report, /QUICK/)
  assert.match(againstReport(raw, { cells, pairs, against: { ref: 'main', short: 'abc123456' }, quick: true }), /\nQUICK: a smoke run .*its ratios are noise/)

  assert.equal(againstTable([measurement('ours', 'order', 1, 0, [1, 1, 1, 1, 1, 1])], { cells, pairs }), null)
  assert.match(againstReport([], { cells, pairs, against: { ref: 'abc123456', short: 'abc123456' } }), /Nothing to compare/)
})

/** The bench's command line, as `npm run bench -- …` runs it; it must stop before it starts anything. */
function bench(...args) {
  return spawnSync(process.execPath, [path.join(root, 'bench', 'run.mjs'), ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 })
}

test('npm run bench -- --against: an unknown ref, a missing one, and --write or --from-json with it stop the bench with a message and exit 2', () => {
  const unknown = bench('--quick', '--against', 'no-such-ref-for-the-bench')
  assert.equal(unknown.status, 2, unknown.stderr)
  assert.match(unknown.stderr, /^bench: --against: no-such-ref-for-the-bench names no commit in this repository/)
  assert.equal(unknown.stdout, '')

  const missing = bench('--against')
  assert.equal(missing.status, 2)
  assert.match(missing.stderr, /--against <value>' argument missing/)

  const written = bench('--against', 'HEAD', '--write')
  assert.equal(written.status, 2)
  assert.match(written.stderr, /--against and --write: a comparison with another commit is never written to RESULTS\.md/)

  const saved = bench('--against', 'HEAD', '--from-json', path.join(root, 'package.json'))
  assert.equal(saved.status, 2)
  assert.match(saved.stderr, /--against and --from-json/)
})
