// `npm run bench`: this package against its peers on the same tools and the same conversations.
//
// One stand-in API process (bench/server.mjs: the strict mock with a scripted handler), and each
// measurement in a fresh child process (bench/child.mjs), the contenders taking turns, round after
// round; the tables show the median of the rounds. See bench/RESULTS.md for what each figure means.
//
//   npm run bench                          full run (3 rounds × 3 workloads × 2 concurrencies × 4 contenders, and the
//                                          streaming cell: 3 rounds × 2 concurrencies × 3 contenders), writes bench/RESULTS.md
//   npm run bench -- --workloads stream    the streaming cell only (writes its section of bench/RESULTS.md)
//   npm run bench -- --quick               a smoke run (1 round, a few hundred runs; also BENCH_QUICK=1); writes nothing
//   npm run bench -- --contenders ours --workloads heavy --concurrency 64 --rounds 5
//                                          one contender / workload / concurrency (writes nothing)
//
// Options: --rounds N (3), --seconds S measured per measurement (5), --warmup S (1.5), --max-runs N,
// --contenders ours,sdk,ai,floor, --workloads order,heavy,heavy-objects,stream, --concurrency 1,64, --json FILE (raw figures),
// --write / --no-write (bench/RESULTS.md: by default each section whose cells were all measured, by
// every contender, is rewritten: order + heavy, and the streaming cell), --addon FILE (the build to measure, default the root's
// .node; it is copied first, so a rebuild during the run changes nothing), --allow-debug (measure a
// debug addon anyway; never written),
// --no-eld (no event-loop delay monitor: its 1 ms timer costs a little CPU in every contender),
// --priority N (niceness of the stand-in and the children, e.g. --priority=-10 on a machine shared with builds).
// --from-json FILE (measure nothing: print the report of a --json file; with --write, put it in RESULTS.md).

import { spawn, spawnSync, fork } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { STREAM_DELAY_MS, WORKLOADS } from './workloads.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')

const ALL_CONTENDERS = ['ours', 'sdk', 'ai', 'floor']
const PEERS = ['sdk', 'ai']
/** The streaming workload has no floor: ours, the SDK's messages.stream loop and the AI SDK's streamText. */
const STREAM_CONTENDERS = ['ours', 'sdk', 'ai']
const LABEL = {
  ours: 'anthropic-tool-calling',
  sdk: '@anthropic-ai/sdk toolRunner',
  ai: 'ai generateText',
  floor: 'floor: bare node:http',
}
const STREAM_LABEL = {
  ours: 'anthropic-tool-calling streamWithTools',
  sdk: '@anthropic-ai/sdk messages.stream loop',
  ai: 'ai streamText',
}
const label = (contender, workload) => (WORKLOADS[workload]?.stream ? STREAM_LABEL : LABEL)[contender]
/** The contenders of a cell: the streaming workload has no floor. */
const cellContenders = (workload) => (WORKLOADS[workload]?.stream ? contenders.filter((c) => STREAM_CONTENDERS.includes(c)) : contenders)
const PEER_PACKAGES = ['@anthropic-ai/sdk', 'ai', '@ai-sdk/anthropic', 'zod']

let parsed
try {
  parsed = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      'max-runs': { type: 'string' },
      contenders: { type: 'string' },
      workloads: { type: 'string' },
      concurrency: { type: 'string' },
      json: { type: 'string' },
      write: { type: 'boolean' },
      'no-write': { type: 'boolean', default: false },
      'allow-debug': { type: 'boolean', default: false },
      addon: { type: 'string' },
      'no-eld': { type: 'boolean', default: false },
      priority: { type: 'string' },
      'from-json': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
} catch (e) {
  process.stderr.write(`bench: ${e.message} (see npm run bench -- --help)\n`)
  process.exit(2)
}
const opts = parsed.values

if (opts.help) {
  const text = readFileSync(fileURLToPath(import.meta.url), 'utf8')
  process.stdout.write(`${text.slice(0, text.indexOf('\nimport ')).replace(/^\/\/ ?/gm, '')}\n`)
  process.exit(0)
}

const quick = opts.quick || ['1', 'true', 'yes'].includes(String(process.env.BENCH_QUICK ?? '').toLowerCase())

function list(value, allowed, fallback, what) {
  if (value === undefined) return fallback
  const items = value.split(',').map((s) => s.trim()).filter(Boolean)
  for (const item of items) if (!allowed.includes(item)) die(`--${what}: ${item} is not one of ${allowed.join(', ')}`)
  return items
}

function number(value, fallback, what, { min = 0, integer = false } = {}) {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) die(`--${what} must be ${integer ? 'an integer' : 'a number'} ≥ ${min}, got ${value}`)
  return n
}

function die(message) {
  process.stderr.write(`bench: ${message}\n`)
  process.exit(2)
}

// --from-json FILE: no measurement, the report (and with --write, RESULTS.md) from a --json file.
let saved = null
if (opts['from-json']) {
  try {
    saved = JSON.parse(readFileSync(opts['from-json'], 'utf8'))
  } catch (e) {
    die(`--from-json: ${e.message}`)
  }
  if (!Array.isArray(saved?.raw)) die(`--from-json: ${opts['from-json']} is not a --json file of npm run bench`)
}
const fromRaw = (key, order) => order.filter((x) => saved.raw.some((r) => String(r[key]) === String(x)))

const contenders = saved ? fromRaw('contender', ALL_CONTENDERS) : list(opts.contenders, ALL_CONTENDERS, ALL_CONTENDERS, 'contenders')
const workloads = saved ? fromRaw('workload', Object.keys(WORKLOADS)) : list(opts.workloads, Object.keys(WORKLOADS), Object.keys(WORKLOADS), 'workloads')
const concurrencies = saved ? fromRaw('concurrency', [1, 64]) : list(opts.concurrency, ['1', '64'], ['1', '64'], 'concurrency').map(Number)
const rounds = saved ? saved.rounds : number(opts.rounds, quick ? 1 : 3, 'rounds', { min: 1, integer: true })
const seconds = saved ? saved.seconds : number(opts.seconds, quick ? 10 : 5, 'seconds', { min: 0.1 })
const warmup = saved ? saved.warmup : number(opts.warmup, quick ? 5 : 1.5, 'warmup')
const maxRunsOption = number(opts['max-runs'], undefined, 'max-runs', { min: 1, integer: true })
const priority = saved ? (saved.settings?.priority ?? (opts.priority === undefined ? null : Number(opts.priority))) : opts.priority === undefined ? null : Number(opts.priority)
const noEld = saved ? Boolean(saved.settings?.noEld) : opts['no-eld']
if (priority !== null && !(Number.isInteger(priority) && priority >= -20 && priority <= 19)) die(`--priority must be a niceness from -20 to 19, got ${opts.priority}`)

/** `--priority N`: the stand-in and every child start under `nice -n N` (below 0 needs root), all their threads too. */
const niceArgs = priority === null ? [] : ['-n', String(priority), process.execPath]
const launcher = priority === null ? process.execPath : 'nice'

// RESULTS.md has two generated sections: order + heavy (every contender, both concurrencies), and
// the streaming cell (ours, sdk, ai, both concurrencies). A run rewrites each one it measured whole.
const bothConcurrencies = concurrencies.length === 2
const mainComplete = contenders.length === ALL_CONTENDERS.length && ['order', 'heavy', 'heavy-objects'].every((w) => workloads.includes(w)) && bothConcurrencies
const streamComplete = STREAM_CONTENDERS.every((c) => contenders.includes(c)) && workloads.includes('stream') && bothConcurrencies
const write = opts['no-write'] ? false : (opts.write ?? (!saved && !quick && (mainComplete || streamComplete)))
if (write && quick) die('--write and --quick: a quick run is not a measurement; run without --quick to write RESULTS.md')

/**
 * Per measurement: how many runs warm up and how many are measured (quick: counted, not timed; a
 * streamed run lasts ~150 ms of paced events, so the streaming cell counts fewer at concurrency 1).
 */
function limits(concurrency, workload) {
  if (quick && WORKLOADS[workload]?.stream) return { warmupRuns: 2, maxRuns: maxRunsOption ?? Math.max(8, concurrency) }
  if (quick) return { warmupRuns: 4, maxRuns: maxRunsOption ?? Math.max(16, concurrency) }
  return { warmupRuns: 1_000_000, maxRuns: maxRunsOption ?? 1_000_000 }
}

// ---------------------------------------------------------------------------------------------
// Preconditions: peer packages installed, the release addon
// ---------------------------------------------------------------------------------------------

if (!saved && contenders.some((c) => PEERS.includes(c))) {
  for (const pkg of PEER_PACKAGES) {
    if (!existsSync(path.join(here, 'node_modules', pkg, 'package.json'))) {
      die(`${pkg} is not installed in bench/node_modules: run \`npm ci --prefix bench\` first`)
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
const addonSource = path.resolve(opts.addon ?? path.join(root, 'anthropic-tool-calling.linux-x64-gnu.node'))
const packageCopy = path.join(os.tmpdir(), `anthropic-tool-calling-bench-${process.pid}`)
const addonCopy = path.join(packageCopy, 'anthropic-tool-calling.node')
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANTHROPIC_') && !['BENCH_QUICK', 'BENCH_PACKAGE_DIR', 'NAPI_RS_NATIVE_LIBRARY_PATH'].includes(k)))
let addon = saved ? saved.addon : null
if (!saved && contenders.includes('ours')) {
  if (!existsSync(addonSource)) die(`no addon at ${addonSource}: run \`npm run build\` first`)
  mkdirSync(packageCopy, { recursive: true })
  process.on('exit', () => rmSync(packageCopy, { recursive: true, force: true }))
  copyFileSync(addonSource, addonCopy)
  for (const file of readdirSync(root)) {
    if (file === 'package.json' || /\.(c|m)?js$/.test(file)) copyFileSync(path.join(root, file), path.join(packageCopy, file))
  }
  cpSync(path.join(root, 'lib'), path.join(packageCopy, 'lib'), { recursive: true })
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
const addonTrusted = addon === null || addon.profile === 'release'

// ---------------------------------------------------------------------------------------------
// The stand-in API process
// ---------------------------------------------------------------------------------------------

function startServer() {
  const server = fork(path.join(here, 'server.mjs'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: childEnv,
    ...(priority === null ? {} : { execPath: launcher, execArgv: niceArgs }),
  })
  const pending = new Map()
  let nextId = 0
  server.on('message', (msg) => {
    if (msg?.type === 'stats' && pending.has(msg.id)) {
      pending.get(msg.id)(msg.stats)
      pending.delete(msg.id)
    }
  })
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the stand-in API did not start within 15 s')), 15_000)
    server.once('message', (msg) => {
      clearTimeout(timer)
      if (msg?.type === 'ready') resolve(msg.url)
      else reject(new Error(`the stand-in API said ${JSON.stringify(msg)}`))
    })
    server.once('exit', (code) => reject(new Error(`the stand-in API exited (${code})`)))
  })
  function stats() {
    return new Promise((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => reject(new Error('the stand-in API did not answer for its stats within 10 s')), 10_000)
      pending.set(id, (s) => {
        clearTimeout(timer)
        resolve(s)
      })
      server.send({ type: 'stats', id })
    })
  }
  return { process: server, ready, stats }
}

// ---------------------------------------------------------------------------------------------
// One measurement
// ---------------------------------------------------------------------------------------------

function measure(url, contender, workload, concurrency) {
  const { warmupRuns, maxRuns } = limits(concurrency, workload)
  const args = [
    path.join(here, 'child.mjs'),
    '--contender', contender,
    '--workload', workload,
    '--concurrency', String(concurrency),
    '--url', url,
    '--seconds', String(seconds),
    '--warmup-seconds', String(warmup),
    '--warmup-runs', String(warmupRuns),
    '--max-runs', String(maxRuns),
  ]
  // The streaming cell has no event-loop delay monitor: a streamed run lasts ~150 ms, and the
  // monitor's 1 ms timer would add ~3 ms of main-thread CPU to each run at concurrency 1.
  if (noEld || WORKLOADS[workload]?.stream) args.push('--no-eld')
  return new Promise((resolve) => {
    const child = spawn(launcher, [...niceArgs, ...args], { cwd: here, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const limitMs = (warmup + seconds + 180) * 1000
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop()
      let result = null
      try {
        result = line ? JSON.parse(line) : null
      } catch {}
      if (err.trim()) process.stderr.write(err.replace(/^/gm, `  [${contender}] `))
      if (!result || result.fatal || code !== 0) {
        const why = result?.fatal ?? (signal ? `killed by ${signal} after ${Math.round(limitMs / 1000)} s` : `exited ${code}`)
        resolve({ contender, workload, concurrency, failures: 1, firstFailure: `the measurement failed: ${why}`, broken: true })
      } else resolve(result)
    })
  })
}

// ---------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------

/** The figures of the tables: key, heading, which way is better, how to print it. */
const FIGURES = [
  { key: 'runsPerSec', head: 'runs/s', better: 'max', fmt: (v) => fix(v, v >= 100 ? 0 : 1) },
  { key: 'cpuUsPerRun', head: 'CPU µs/run', better: 'min', fmt: (v) => fix(v, 0) },
  { key: 'mainUsPerRun', head: 'main busy µs/run', better: 'min', fmt: (v) => fix(v, 0) },
  { key: 'mainCpuUsPerRun', head: 'main CPU µs/run', better: 'min', fmt: (v) => fix(v, 0) },
  { key: 'p50Ms', head: 'p50 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  { key: 'p99Ms', head: 'p99 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  { key: 'p99OverP50', head: 'p99 / p50', better: 'min', fmt: (v) => fix(v, 2) },
  { key: 'coldP99Ms', head: 'cold p99 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  { key: 'eldP99Ms', head: 'ELD p99 ms', better: 'min', fmt: (v) => fix(v, 2) },
  { key: 'peakRssMb', head: 'peak RSS MB', better: 'min', fmt: (v) => fix(v, 1) },
]

/** The streaming cell's figures: time to first text part first, then the others (no ELD: the cell runs without the monitor). */
const STREAM_FIGURES = [
  FIGURES[0],
  { key: 'ttfpP50Ms', head: 'first text p50 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  { key: 'ttfpP99Ms', head: 'first text p99 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  ...FIGURES.slice(1).filter((f) => f.key !== 'eldP99Ms'),
]
const figuresOf = (workload) => (WORKLOADS[workload]?.stream ? STREAM_FIGURES : FIGURES)

function fix(v, digits) {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits)
}

function median(xs) {
  const s = xs.filter((x) => x !== null && x !== undefined && Number.isFinite(x)).sort((a, b) => a - b)
  if (s.length === 0) return null
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function summarise(measurements) {
  const ok = measurements.filter((m) => !m.broken)
  const row = { rounds: measurements.length, failures: 0, firstFailure: null, runs: 0 }
  for (const m of measurements) {
    row.failures += m.failures ?? 0
    row.firstFailure ??= m.firstFailure ?? null
    row.runs += m.runs ?? 0
  }
  for (const f of [...FIGURES, ...STREAM_FIGURES]) row[f.key] ??= median(ok.map((m) => m[f.key]))
  row.apiUsPerRun = median(ok.map((m) => m.apiUsPerRun))
  row.spread = { runsPerSec: spread(ok.map((m) => m.runsPerSec)), cpuUsPerRun: spread(ok.map((m) => m.cpuUsPerRun)) }
  return row
}

/** max ÷ min over the rounds: how far apart the rounds were (1.00× = identical). */
function spread(xs) {
  const v = xs.filter((x) => Number.isFinite(x) && x > 0)
  return v.length < 2 ? null : Math.max(...v) / Math.min(...v)
}

/** ours ÷ x, for a figure (for runs/s: ours ÷ best too, so > 1 is better). */
function ratio(ours, other) {
  if (ours === null || other === null || other === 0) return null
  return ours / other
}

function bestPeer(rows, figure) {
  const values = PEERS.map((p) => rows[p]?.[figure.key]).filter((v) => v !== null && v !== undefined)
  if (values.length === 0) return null
  return figure.better === 'max' ? Math.max(...values) : Math.min(...values)
}

function cellTable(rows, workload) {
  const FIGURES = figuresOf(workload)
  const present = ALL_CONTENDERS.filter((c) => rows[c])
  const head = ['contender', ...FIGURES.map((f) => f.head), 'stand-in µs/run', 'spread runs/s, CPU', 'runs', 'failures']
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`]
  for (const c of present) {
    const r = rows[c]
    const flag = r.failures > 0 ? ` ⚠ FAILED` : ''
    const spreads = r.spread.runsPerSec === null ? '–' : `${fmtRatio(r.spread.runsPerSec)}, ${fmtRatio(r.spread.cpuUsPerRun)}`
    lines.push(`| ${label(c, workload)}${flag} | ${FIGURES.map((f) => f.fmt(r[f.key])).join(' | ')} | ${fix(r.apiUsPerRun, 0)} | ${spreads} | ${r.runs} | ${r.failures} |`)
  }
  if (rows.ours) {
    const peers = PEERS.filter((p) => rows[p])
    if (peers.length > 0) {
      const cells = FIGURES.map((f) => fmtRatio(ratio(rows.ours[f.key], bestPeer(rows, f))))
      lines.push(`| *ours ÷ best peer* | ${cells.join(' | ')} | | | | |`)
    }
    if (rows.floor) {
      const cells = FIGURES.map((f) => fmtRatio(ratio(rows.ours[f.key], rows.floor[f.key])))
      lines.push(`| *ours ÷ floor* | ${cells.join(' | ')} | | | | |`)
    }
  }
  return lines.join('\n')
}

function fmtRatio(r) {
  return r === null ? '–' : `${r.toFixed(2)}×`
}

/** The issue's targets, at concurrency 64, for each workload. */
function targetsTable(summary) {
  const keys = workloads.filter((w) => !WORKLOADS[w].stream).map((w) => `${w}@64`).filter((k) => summary[k]?.ours)
  if (keys.length === 0) return null
  const fig = Object.fromEntries(FIGURES.map((f) => [f.key, f]))
  const targets = [
    { name: 'CPU per run ≤ 0.5× best peer', value: (rows) => ratio(rows.ours?.cpuUsPerRun, bestPeer(rows, fig.cpuUsPerRun)), ok: (v) => v <= 0.5, fmt: fmtRatio },
    { name: 'main-thread busy per run ≤ 0.15× best peer', value: (rows) => ratio(rows.ours?.mainUsPerRun, bestPeer(rows, fig.mainUsPerRun)), ok: (v) => v <= 0.15, fmt: fmtRatio },
    { name: 'throughput ≥ 2× best peer', value: (rows) => ratio(rows.ours?.runsPerSec, bestPeer(rows, fig.runsPerSec)), ok: (v) => v >= 2, fmt: fmtRatio },
    { name: 'event-loop delay p99 ≤ 5 ms', value: (rows) => rows.ours?.eldP99Ms ?? null, ok: (v) => v <= 5, fmt: (v) => `${fix(v, 2)} ms` },
    { name: 'peak RSS ≤ best peer', value: (rows) => ratio(rows.ours?.peakRssMb, bestPeer(rows, fig.peakRssMb)), ok: (v) => v <= 1, fmt: fmtRatio },
    { name: 'stretch: CPU per run ≤ floor', value: (rows) => ratio(rows.ours?.cpuUsPerRun, rows.floor?.cpuUsPerRun ?? null), ok: (v) => v <= 1, fmt: fmtRatio },
  ]
  const head = ['target (concurrency 64)', ...keys.map((k) => k.replace('@64', ''))]
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`]
  for (const t of targets) {
    const vals = keys.map((k) => {
      const v = t.value(summary[k])
      return v === null || v === undefined ? '–' : `${t.fmt(v)} ${t.ok(v) ? '✓' : '✗'}`
    })
    lines.push(`| ${t.name} | ${vals.join(' | ')} |`)
  }
  return lines.join('\n')
}

/** Issue 14 (fair under load), at concurrency 64, for each non-streamed workload. */
function fairnessTable(summary) {
  const keys = workloads.filter((w) => !WORKLOADS[w].stream).map((w) => `${w}@64`).filter((k) => summary[k]?.ours)
  if (keys.length === 0) return null
  const fig = Object.fromEntries(FIGURES.map((f) => [f.key, f]))
  const vs = (key) => (rows) => ratio(rows.ours?.[key] ?? null, bestPeer(rows, fig[key]))
  const targets = [
    { name: 'p99 ≤ best peer', value: vs('p99Ms'), ok: (v) => v <= 1, fmt: fmtRatio },
    { name: 'p99 / p50 ≤ 2.5', value: (rows) => rows.ours?.p99OverP50 ?? null, ok: (v) => v <= 2.5, fmt: (v) => fix(v, 2) },
    { name: 'main-thread CPU per run ≤ 0.15× best peer', value: vs('mainCpuUsPerRun'), ok: (v) => v <= 0.15, fmt: fmtRatio },
    { name: 'cold start: first wave p99 ÷ best peer (no target)', value: vs('coldP99Ms'), fmt: fmtRatio },
  ]
  const head = ['target (concurrency 64)', ...keys.map((k) => k.replace('@64', ''))]
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`]
  for (const t of targets) {
    const vals = keys.map((k) => {
      const v = t.value(summary[k])
      if (v === null || v === undefined) return '–'
      return t.ok ? `${t.fmt(v)} ${t.ok(v) ? '✓' : '✗'}` : t.fmt(v)
    })
    lines.push(`| ${t.name} | ${vals.join(' | ')} |`)
  }
  return lines.join('\n')
}

/** The streaming cell against the best peer, at each concurrency (issue 11: main thread ≤ 0.2×). */
function streamTargetsTable(summary) {
  const keys = workloads.filter((w) => WORKLOADS[w].stream).flatMap((w) => concurrencies.map((c) => `${w}@${c}`)).filter((k) => summary[k]?.ours)
  if (keys.length === 0 || !keys.some((k) => PEERS.some((p) => summary[k][p]))) return null
  const fig = Object.fromEntries(STREAM_FIGURES.map((f) => [f.key, f]))
  const vs = (key) => (rows) => ratio(rows.ours?.[key] ?? null, bestPeer(rows, fig[key]))
  const rowsOf = [
    { name: 'time to first text part, p50', value: vs('ttfpP50Ms') },
    { name: 'time to first text part, p99', value: vs('ttfpP99Ms') },
    { name: 'main-thread CPU per run ≤ 0.2× best peer', value: vs('mainCpuUsPerRun'), ok: (v) => v <= 0.2 },
    { name: 'main-thread busy per run', value: vs('mainUsPerRun') },
    { name: 'CPU per run (all threads)', value: vs('cpuUsPerRun') },
    { name: 'runs/s', value: vs('runsPerSec') },
  ]
  const head = ['ours ÷ best peer', ...keys.map((k) => `concurrency ${k.split('@')[1]}`)]
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`]
  for (const t of rowsOf) {
    const vals = keys.map((k) => {
      const v = t.value(summary[k])
      if (v === null || v === undefined) return '–'
      return t.ok ? `${fmtRatio(v)} ${t.ok(v) ? '✓' : '✗'}` : fmtRatio(v)
    })
    lines.push(`| ${t.name} | ${vals.join(' | ')} |`)
  }
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------
// The machine
// ---------------------------------------------------------------------------------------------

function versionOf(pkg) {
  try {
    return JSON.parse(readFileSync(path.join(here, 'node_modules', pkg, 'package.json'), 'utf8')).version
  } catch {
    return 'not installed'
  }
}

/** The commit measured, and whether the engine's sources differ from it (others edit this tree). */
function sourceState() {
  const git = (args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' })
  const head = git(['rev-parse', '--short', 'HEAD']).stdout?.trim() || 'unknown'
  const dirty = git(['status', '--porcelain', '--', 'src', 'Cargo.toml', 'Cargo.lock', 'build.rs', 'index.js', 'binding.js']).stdout?.trim()
  return { head, dirty: Boolean(dirty) }
}

function machine() {
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

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

const cells = []
for (const w of workloads) for (const c of concurrencies) cells.push({ workload: w, concurrency: c, key: `${w}@${c}` })

const started = saved ? new Date(saved.started) : new Date()
const load0 = saved ? (saved.load0 ?? null) : os.loadavg()
const m = saved ? saved.machine : machine()
const source = saved ? (saved.source ?? { head: 'unknown', dirty: false }) : sourceState()
const raw = saved ? saved.raw : []
const problems = saved ? (saved.problems ?? []) : []
let stoppedEarly = saved ? Boolean(saved.stoppedEarly) : false
if (saved) console.log(`bench: the report of ${opts['from-json']} (measured ${started.toISOString()}); nothing is measured`)
else await measureAll()

async function measureAll() {
  const measurements = cells.reduce((n, cell) => n + cellContenders(cell.workload).length, 0)
  console.log(`bench: ${quick ? 'QUICK (smoke run, figures are not measurements)' : 'full run'}: ${rounds} round(s) × ${cells.length} cell(s), ${measurements} measurement(s) a round, ${quick ? 'counted runs' : `${warmup} s warm-up + ${seconds} s measured each`}`)
  console.log(`machine: ${m.nproc} × ${m.cpu}, ${m.memGiB} GiB, Node ${m.node}; load average ${load0.map((x) => x.toFixed(2)).join(' ')}`)
  if (addon) console.log(`addon: ${addon.source}: ${addon.profile} build, ${(addon.size / 2 ** 20).toFixed(1)} MiB, built ${new Date(addon.mtimeMs).toISOString()}, sha256 ${addon.sha256}… (measured from a copy)`)
  if (!quick && load0[0] > 0.5 * m.nproc) {
    console.log(`bench: warning: the machine is busy (1-min load ${load0[0].toFixed(2)} on ${m.nproc} cores); figures will be noisy`)
  }

  const server = startServer()
  let url
  try {
    url = await server.ready
  } catch (e) {
    die(e.message)
  }
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) die(`the stand-in API is at ${url}, not on loopback`)

  try {
    for (let round = 0; round < rounds; round++) {
      for (const [i, cell] of cells.entries()) {
        // Each round and cell starts with another contender, so no one always runs first or last.
        const inCell = cellContenders(cell.workload)
        if (inCell.length === 0) continue
        const shift = (round + i) % inCell.length
        const order = [...inCell.slice(shift), ...inCell.slice(0, shift)]
        for (const contender of order) {
          const before = await server.stats()
          const result = await measure(url, contender, cell.workload, cell.concurrency)
          const after = await server.stats()
          result.round = round
          result.load1 = os.loadavg()[0]
          // The stand-in's side: exactly the expected requests, every one answered 200, no mismatch.
          const requests = after.requests - before.requests
          const non200 = Object.entries(after.statuses)
            .map(([code, n]) => [code, n - (before.statuses[code] ?? 0)])
            .filter(([code, n]) => code !== '200' && n > 0)
          const mismatches = after.mismatches - before.mismatches
          if (!result.broken) {
            const expected = result.totalRuns * result.requestsPerRun
            if (requests !== expected) {
              result.failures++
              result.firstFailure ??= `the stand-in saw ${requests} requests, expected ${expected}`
            }
            result.apiUsPerRun = result.totalRuns > 0 ? (after.cpuUs - before.cpuUs) / result.totalRuns : null
          }
          if (non200.length > 0) {
            result.failures++
            result.firstFailure ??= `the stand-in answered ${non200.map(([c, n]) => `${n}× ${c}`).join(', ')}: ${after.lastRefusal}`
          }
          if (mismatches > 0) {
            result.failures++
            result.firstFailure ??= `${mismatches} conversation(s) were not the workload's: ${after.lastMismatch}`
          }
          if (contender === 'ours' && result.info?.buildProfile && result.info.buildProfile !== addon.profile) {
            problems.push(`a child loaded a ${result.info.buildProfile} addon, not the ${addon.profile} copy`)
            result.debugAddon = true
          }
          raw.push(result)
          const status = result.failures > 0 ? `FAILED (${result.failures}): ${result.firstFailure}` : 'ok'
          console.log(
            `[round ${round + 1}/${rounds}] ${cell.workload} c=${cell.concurrency} ${contender.padEnd(5)} ` +
              `${fix(result.runsPerSec, 0).padStart(6)} runs/s  CPU ${fix(result.cpuUsPerRun, 0).padStart(6)} µs/run  ` +
              `main ${fix(result.mainUsPerRun, 0).padStart(6)} µs/run  p99 ${fix(result.p99Ms, 1)} ms  ` +
              `${result.ttfpP50Ms === null || result.ttfpP50Ms === undefined ? '' : `TTFP p50 ${fix(result.ttfpP50Ms, 2)} ms  `}${result.runs ?? 0} runs  ${status}`,
          )
        }
      }
    }
  } catch (e) {
    stoppedEarly = true
    problems.push(e.message)
  } finally {
    server.process.send({ type: 'stop' })
    setTimeout(() => server.process.kill('SIGKILL'), 5000).unref()
  }
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const summary = {}
for (const cell of cells) {
  const rows = {}
  for (const c of cellContenders(cell.workload)) {
    const ms = raw.filter((r) => r.contender === c && r.workload === cell.workload && r.concurrency === cell.concurrency)
    if (ms.length > 0) rows[c] = summarise(ms)
  }
  summary[cell.key] = rows
}

const failed = []
const failedStream = []
for (const [key, rows] of Object.entries(summary)) {
  const into = WORKLOADS[key.split('@')[0]].stream ? failedStream : failed
  for (const [c, r] of Object.entries(rows)) if (r.failures > 0) into.push(`${c} ${key.replace('@', ' c=')}: ${r.failures} failure(s), first: ${r.firstFailure}`)
}
const allFailed = [...failed, ...failedStream]

const load1 = saved ? (saved.load1 ?? null) : os.loadavg()
if (!saved) console.log(`bench: load average at the end ${load1.map((x) => x.toFixed(2)).join(' ')}`)
const sections = []
const targets = targetsTable(summary)
if (targets) sections.push(`### Targets (issue 4), ours against the best peer\n\n${targets}`)
const fairness = fairnessTable(summary)
if (fairness) sections.push(`### Targets (issue 14, fair under load), ours against the best peer\n\n${fairness}`)
for (const cell of cells.filter((c) => !WORKLOADS[c.workload].stream)) {
  sections.push(`### ${cell.workload}, concurrency ${cell.concurrency}\n\n${cellTable(summary[cell.key], cell.workload)}`)
}
const report = sections.join('\n\n')
const streamSections = []
const streamTargets = streamTargetsTable(summary)
if (streamTargets) streamSections.push(`#### Streaming, ours against the best peer (same run)\n\n${streamTargets}`)
for (const cell of cells.filter((c) => WORKLOADS[c.workload].stream)) {
  streamSections.push(`#### Streaming (${cell.workload}), concurrency ${cell.concurrency}\n\n${cellTable(summary[cell.key], cell.workload)}`)
}
const streamReport = streamSections.join('\n\n')

console.log(`\n${[report, streamReport].filter(Boolean).join('\n\n')}\n`)
if (allFailed.length > 0) console.log(`FAILED — a contender's conversations were not all correct:\n${allFailed.map((f) => `  ${f}`).join('\n')}\n`)
for (const p of problems) console.log(`bench: warning: ${p}`)
if (addon && !addonTrusted) console.log('bench: warning: the addon is a debug build: these figures mean nothing')

if (opts.json) {
  writeFileSync(opts.json, `${JSON.stringify({ started, machine: m, source, addon, quick, rounds, seconds, warmup, settings: { priority, noEld }, load0, load1, problems, stoppedEarly, raw, summary }, null, 2)}\n`)
  console.log(`bench: raw figures written to ${opts.json}`)
}

if (write) {
  if (!addonTrusted || stoppedEarly || raw.some((r) => r.debugAddon)) {
    console.log('bench: not writing bench/RESULTS.md: not a complete run of one release build')
  } else if (!mainComplete && !streamComplete) {
    console.log('bench: not writing bench/RESULTS.md: no section was measured whole (order + heavy by every contender, or the streaming cell by ours, sdk and ai; both concurrencies)')
  } else {
    if (mainComplete) {
      writeResults({
        report,
        failed,
        load0,
        load1,
        begin: '<!-- bench:begin: generated by `npm run bench`; what is between these markers is replaced on each full run -->',
        end: '<!-- bench:end -->',
        heading: '## Latest run',
        contenders: 'every contender',
      })
    }
    if (streamComplete) {
      writeResults({
        report: streamReport,
        failed: failedStream,
        load0,
        load1,
        begin: '<!-- bench:stream:begin: generated by `npm run bench` (or `-- --workloads stream`); replaced on each run that measures the whole streaming cell -->',
        end: '<!-- bench:stream:end -->',
        heading: '### Latest streaming run',
        contenders: 'every streaming contender',
        extra: `- The stand-in paces every streamed reply: ${STREAM_DELAY_MS} ms between two SSE events (\`setTimeout\`), the same for every contender.`,
      })
    }
  }
}

function writeResults({ report, failed, load0, load1, begin, end, heading, contenders: who, extra }) {
  const file = path.join(here, 'RESULTS.md')
  const versions = PEER_PACKAGES.map((p) => `\`${p}\` ${versionOf(p)}`).join(', ')
  const generated = [
    begin,
    `${heading}: ${started.toISOString().replace('T', ' ').slice(0, 16)} UTC`,
    '',
    `- Machine: ${m.nproc} × ${m.cpu} (\`nproc\` ${m.nproc}), ${m.memGiB} GiB, ${m.os}; Node ${m.node}. ` +
      (load0 && load1 ? `Load average ${load0[0].toFixed(2)} at the start, ${load1[0].toFixed(2)} at the end (other work shares this machine).` : 'Load average not recorded.'),
    addon
      ? `- This package at commit ${source.head}${source.dirty ? ' plus uncommitted engine changes in the tree' : ''}: \`${addon.source}\` (\`buildProfile()\` = \`${addon.profile}\`, ${(addon.size / 2 ** 20).toFixed(1)} MiB, sha256 ${addon.sha256}…), built ${new Date(addon.mtimeMs).toISOString().slice(0, 16).replace('T', ' ')} UTC.`
      : '- This package was not measured.',
    `- Peers: ${versions}.`,
    `- ${rounds} rounds; each measurement ${warmup} s warm-up + ${seconds} s measured in a fresh process; the median of the rounds is shown.` +
      `${priority === null ? '' : ` Stand-in and contenders under \`nice -n ${priority}\`.`}${noEld ? ' No event-loop delay monitor (--no-eld).' : ''}`,
    ...(extra ? [extra] : []),
    failed.length > 0 ? `- **FAILED**: ${failed.join('; ')}` : `- Every conversation of ${who} was checked and correct (0 failures).`,
    '',
    report,
    end,
  ].join('\n')
  let text
  if (existsSync(file)) {
    const old = readFileSync(file, 'utf8')
    const a = old.indexOf(begin.slice(0, 20))
    const b = old.indexOf(end)
    text = a >= 0 && b > a ? old.slice(0, a) + generated + old.slice(b + end.length) : `${old.trimEnd()}\n\n${generated}\n`
  } else {
    text = `# Benchmark results\n\n${generated}\n`
  }
  writeFileSync(file, text)
  console.log(`bench: bench/RESULTS.md written (${heading.replace(/^#+ /, '')})`)
}

process.exitCode = allFailed.length > 0 || stoppedEarly ? 1 : 0
