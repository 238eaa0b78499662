// The command line of `npm run bench`, read once, when bench/run.mjs imports this module: the flags
// checked, the defaults filled in (a quick run has its own), and what follows from them — which
// contenders, workloads and concurrencies, whether RESULTS.md is rewritten, how many runs a
// measurement takes. A bad flag stops the bench here, before anything is started.
//
// With --from-json FILE nothing is measured: the selection and settings come from that file, so its
// report is printed as it was measured.
//
// With --against REF the ref is resolved here (an unknown one stops the bench before anything
// starts); its worktree is made and its addon built later, by run.mjs (against.mjs).

import { readFileSync } from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { refContenders, refFeatures, resolveRef, unusableWhy } from './against.mjs'
import { ALL_CONTENDERS, BEDROCK_CONTENDERS, MCP_CONTENDERS, OURS, STREAM_CONTENDERS, measuredOn } from './lineup.mjs'
import { WORKLOADS } from './workloads.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')

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
      against: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
} catch (e) {
  process.stderr.write(`bench: ${e.message} (see npm run bench -- --help)\n`)
  process.exit(2)
}
export const opts = parsed.values

// The help is the header comment of bench/run.mjs, the entry point, so it is written once.
if (opts.help) {
  const text = readFileSync(path.join(here, 'run.mjs'), 'utf8')
  process.stdout.write(`${text.slice(0, text.indexOf('\nimport ')).replace(/^\/\/ ?/gm, '')}\n`)
  process.exit(0)
}

export const quick = opts.quick || ['1', 'true', 'yes'].includes(String(process.env.BENCH_QUICK ?? '').toLowerCase())

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

/** Stops the bench before (or instead of) measuring: a bad flag, or something it needs is missing. */
export function die(message) {
  process.stderr.write(`bench: ${message}\n`)
  process.exit(2)
}

if (opts.against !== undefined && opts['from-json'] !== undefined) die('--against and --from-json: a saved run is only reported; measure again to compare with another commit')
if (opts.against !== undefined && opts.write) die('--against and --write: a comparison with another commit is never written to RESULTS.md')

// --from-json FILE: no measurement, the report (and with --write, RESULTS.md) from a --json file.
export const saved = opts['from-json'] ? readSaved(opts['from-json']) : null
function readSaved(file) {
  let json
  try {
    json = JSON.parse(readFileSync(file, 'utf8'))
  } catch (e) {
    die(`--from-json: ${e.message}`)
  }
  if (!Array.isArray(json?.raw)) die(`--from-json: ${file} is not a --json file of npm run bench`)
  return json
}
const fromRaw = (key, order) => order.filter((x) => saved.raw.some((r) => String(r[key]) === String(x)))

// --against REF: the commit it names, and what that commit has (hooks, tracing); a run of it
// measures ours, ours-hooks and ours-traced on order and heavy unless told otherwise, with no peer.
export const against = saved ? (saved.against ?? null) : opts.against === undefined ? null : resolveAgainst(opts.against)
function resolveAgainst(ref) {
  try {
    const resolved = resolveRef(root, ref)
    const features = refFeatures(root, resolved.sha)
    const why = unusableWhy(resolved, features)
    if (why) die(why)
    return { ...resolved, features }
  } catch (e) {
    die(e.message)
  }
}
export const AGAINST_CONTENDERS = OURS
export const AGAINST_WORKLOADS = ['order', 'heavy']

export const contenders = saved
  ? fromRaw('contender', ALL_CONTENDERS)
  : list(opts.contenders, ALL_CONTENDERS, against ? AGAINST_CONTENDERS : ALL_CONTENDERS, 'contenders')
/** The ref's twins of ours among the contenders (`ours@1a2b3c4d5` …), and the ones its commit is too old for. */
export const lacking = []
export const refs = against ? (saved ? fromRaw('contender', OURS.map((c) => `${c}@${against.short}`)) : refContenders(contenders, against.features, against.short, lacking)) : []
if (against && !saved && refs.length === 0) die(`--against: none of --contenders ${contenders.join(',')} loads this package, so there is nothing to compare with ${against.short}`)
export const workloads = saved
  ? fromRaw('workload', Object.keys(WORKLOADS))
  : list(opts.workloads, Object.keys(WORKLOADS), against ? AGAINST_WORKLOADS : Object.keys(WORKLOADS), 'workloads')
export const concurrencies = saved ? fromRaw('concurrency', [1, 64]) : list(opts.concurrency, ['1', '64'], ['1', '64'], 'concurrency').map(Number)
export const rounds = saved ? saved.rounds : number(opts.rounds, quick ? 1 : 3, 'rounds', { min: 1, integer: true })
export const seconds = saved ? saved.seconds : number(opts.seconds, quick ? 10 : 5, 'seconds', { min: 0.1 })
export const warmup = saved ? saved.warmup : number(opts.warmup, quick ? 5 : 1.5, 'warmup')
const maxRunsOption = number(opts['max-runs'], undefined, 'max-runs', { min: 1, integer: true })
export const priority = saved ? (saved.settings?.priority ?? (opts.priority === undefined ? null : Number(opts.priority))) : opts.priority === undefined ? null : Number(opts.priority)
export const noEld = saved ? Boolean(saved.settings?.noEld) : opts['no-eld']
if (priority !== null && !(Number.isInteger(priority) && priority >= -20 && priority <= 19)) die(`--priority must be a niceness from -20 to 19, got ${opts.priority}`)

/** `--priority N`: the stand-in and every child start under `nice -n N` (below 0 needs root), all their threads too. */
export const niceArgs = priority === null ? [] : ['-n', String(priority), process.execPath]
export const launcher = priority === null ? process.execPath : 'nice'

// RESULTS.md has four generated sections: order + heavy (every contender, both concurrencies), the
// streaming cell, the mcp cell and the bedrock cell (ours, sdk, ai, both concurrencies each). A run
// rewrites each one it measured whole.
const bothConcurrencies = concurrencies.length === 2
export const mainComplete = contenders.length === ALL_CONTENDERS.length && ['order', 'heavy', 'heavy-objects'].every((w) => workloads.includes(w)) && bothConcurrencies
export const streamComplete = STREAM_CONTENDERS.every((c) => contenders.includes(c)) && workloads.includes('stream') && bothConcurrencies
export const mcpComplete = MCP_CONTENDERS.every((c) => contenders.includes(c)) && workloads.includes('mcp') && bothConcurrencies
export const bedrockComplete = BEDROCK_CONTENDERS.every((c) => contenders.includes(c)) && workloads.includes('bedrock') && bothConcurrencies
export const write = opts['no-write'] || against ? false : (opts.write ?? (!saved && !quick && (mainComplete || streamComplete || mcpComplete || bedrockComplete)))
if (write && quick) die('--write and --quick: a quick run is not a measurement; run without --quick to write RESULTS.md')

/**
 * The contenders of a cell, the ref's twins included: the streaming and mcp workloads have no
 * floor, and only some workloads are traced or hooked.
 */
export const cellContenders = (workload) => [...contenders, ...refs].filter((c) => measuredOn(c, workload))

/**
 * Per measurement: how many runs warm up and how many are measured (quick: counted, not timed; a
 * streamed run lasts ~150 ms of paced events, so the streaming cell counts fewer at concurrency 1).
 */
export function limits(concurrency, workload) {
  if (quick && WORKLOADS[workload]?.stream) return { warmupRuns: 2, maxRuns: maxRunsOption ?? Math.max(8, concurrency) }
  if (quick) return { warmupRuns: 4, maxRuns: maxRunsOption ?? Math.max(16, concurrency) }
  return { warmupRuns: 1_000_000, maxRuns: maxRunsOption ?? 1_000_000 }
}
