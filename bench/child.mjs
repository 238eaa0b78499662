// One measurement: one contender, one workload, one concurrency, in a process of its own.
// Started by bench/run.mjs; prints one JSON line (the last line of stdout) with its figures.
//
//   node bench/child.mjs --contender ours --workload order --concurrency 64 --url http://127.0.0.1:PORT
//        [--mcp-url http://127.0.0.1:PORT/mcp] [--seconds 5] [--max-runs N] [--warmup-seconds 1] [--warmup-runs N] [--no-eld]
//
// `concurrency` workers each start a run as soon as their last one ended: a warm-up (until
// `warmup-seconds` or `warmup-runs`, whichever comes first), then the measured window (until
// `seconds` or `max-runs` completed runs), then a drain that is not measured. Per run, over the window:
//   CPU        process.cpuUsage() user + system: every thread of the process (Rust threads too)
//   main       performance.eventLoopUtilization().active: the main thread's busy time (wall clock,
//              so it grows when the machine is busy); also the main thread's own CPU time from
//              /proc/self/task/PID/sched, which a busy machine does not inflate
//   latency    p50 / p99 of the runs that started in the window (each counted when it ends, in the
//              drain if need be): steady-state runs only, none of the cold start's first wave, and no
//              slow run left out for ending after the window
//   cold p99   p99 of the first wave (the first `concurrency` runs, started together on a cold process
//              with no connection open yet): what a burst at start-up sees, reported apart
//   start      the contender's module imported and set up (for this package: `require` and its tools
//              registered), in this fresh process before any run: the cold start an app pays once
//   ELD p99    monitorEventLoopDelay at 1 ms resolution; it records whole intervals, so the 1 ms is
//              taken off: what is reported is the delay beyond the timer's own interval
//   peak RSS   process.resourceUsage().maxRSS over the life of the process
//   TTFP       (streaming workload) time to first text part: from the call to the first text delta
//              the consumer's loop sees, p50 / p99 of the runs that started in the window
// Every run is checked (final text, tool call count; the stand-in checks every tool result), and
// every tool must have run exactly once per call; a failure anywhere is counted. A contender may
// check more once every run is over (`finish`: ours-traced checks every run's spans). A streaming
// workload uses the contender's streaming form (bench/contenders/<name>-stream.mjs), and its runs are
// also checked on the text deltas: all of them joined must be every text of the conversation. The
// mcp workload uses the MCP form (<name>-mcp.mjs, against the MCP server at --mcp-url): its tools
// run in that server, never here, and the driver counts them there. The bedrock workload uses the
// Bedrock form (<name>-bedrock.mjs), whose --url is the stand-in's Bedrock door. A contender that cannot be
// measured in this build (`skip`: ours before registerMcpServer exists) prints why and no figures.

import { performance, monitorEventLoopDelay } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { readFileSync } from 'node:fs'
import { ALL_CONTENDERS, contenderModule, contendersOf } from './lineup.mjs'
import { API_KEY, WORKLOADS, toolStats, streamedText, useWorkload } from './workloads.mjs'

const { values } = parseArgs({
  options: {
    contender: { type: 'string' },
    workload: { type: 'string' },
    concurrency: { type: 'string', default: '1' },
    url: { type: 'string' },
    'mcp-url': { type: 'string' },
    seconds: { type: 'string', default: '5' },
    'max-runs': { type: 'string', default: '1000000' },
    'warmup-seconds': { type: 'string', default: '1' },
    'warmup-runs': { type: 'string', default: '1000000' },
    'eld-resolution': { type: 'string', default: '1' },
    'no-eld': { type: 'boolean', default: false },
  },
})

function fatal(message) {
  process.stdout.write(`${JSON.stringify({ fatal: message })}\n`)
  process.exit(1)
}

const name = values.contender
const workload = WORKLOADS[values.workload]
if (!ALL_CONTENDERS.includes(name)) fatal(`--contender must be one of ${ALL_CONTENDERS.join(', ')}`)
if (!workload) fatal(`--workload must be one of ${Object.keys(WORKLOADS).join(', ')}`)
if (!contendersOf(workload.name).includes(name)) fatal(`${name} has no ${workload.form} form: the ${workload.name} workload is measured with ${contendersOf(workload.name).join(', ')}`)
if (!values.url) fatal('--url of the stand-in API is required')
if (workload.form === 'mcp' && !values['mcp-url']) fatal('--mcp-url of the MCP server is required for the mcp workload')
const concurrency = Number(values.concurrency)
const seconds = Number(values.seconds)
const maxRuns = Number(values['max-runs'])
const warmupSeconds = Number(values['warmup-seconds'])
const warmupRuns = Number(values['warmup-runs'])
const eldResolution = Number(values['eld-resolution'])
for (const [k, v] of Object.entries({ concurrency, seconds, maxRuns, warmupSeconds, warmupRuns, eldResolution })) {
  if (!Number.isFinite(v) || v < 0) fatal(`bad --${k}: ${v}`)
}

// A hard bound on the whole process, whatever a contender does.
const watchdog = setTimeout(
  () => fatal(`watchdog: no result after ${Math.round(warmupSeconds + seconds + 120)} s`),
  (warmupSeconds + seconds + 120) * 1000,
)
watchdog.unref()

useWorkload(workload)
const expectedCalls = workload.rounds * workload.callsPerRound
const expectedStreamed = workload.stream ? streamedText(workload) : null
/** Tool runs in this process per run: none when the MCP server runs the tools. */
const localCalls = workload.form === 'mcp' ? 0 : expectedCalls
// Cold start: the contender's module imported and set up in this fresh process (for this package:
// its `require` and its tools registered), before any run.
const start0 = performance.now()
const contender = await (await import(`./contenders/${contenderModule(name, workload.name)}`)).setup({ url: values.url, mcpUrl: values['mcp-url'], apiKey: API_KEY, workload })
const startMs = performance.now() - start0
if (contender.skip) {
  process.stdout.write(`${JSON.stringify({ skipped: contender.skip, contender: name, workload: workload.name, concurrency })}\n`)
  process.exit(0)
}

let completed = 0
let failures = 0
let firstFailure = null

function fail(why) {
  failures++
  if (firstFailure === null) firstFailure = String(why).slice(0, 500)
}

/**
 * The main thread's own CPU time in µs: `se.sum_exec_runtime` of /proc/self/task/PID/sched (ns
 * precision), else utime + stime of .../stat (10 ms ticks), else null (no /proc).
 */
function mainThreadCpuUs() {
  const dir = `/proc/self/task/${process.pid}`
  try {
    const m = /^se\.sum_exec_runtime\s*:\s*([\d.]+)/m.exec(readFileSync(`${dir}/sched`, 'utf8'))
    if (m) return Number(m[1]) * 1000
  } catch {}
  try {
    const stat = readFileSync(`${dir}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10_000 // utime, stime in USER_HZ (100) ticks
  } catch {
    return null
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

// One continuous stream of runs, `concurrency` at a time: warm-up, then the measured window, then
// a drain that is not measured. The window's figures are steady-state ones: the pipeline is full
// when it opens and still full when it closes, so runs/s and the per-run figures are not skewed
// by ramp-up or by the last slow runs.
let phase = 'warmup'
let warmupCompleted = 0
/** Runs that ended in the window: runs/s and every per-run figure. */
let windowRuns = 0
const latencies = []
const ttfps = []
/** The first wave: the first `concurrency` runs, started together on a cold process. */
const coldLatencies = []
let started = 0
let window0 = null
let window1 = null
let eld = null
let measureTimer = null

function openWindow() {
  if (phase !== 'warmup') return
  phase = 'measure'
  eld = values['no-eld'] ? null : monitorEventLoopDelay({ resolution: Math.max(1, eldResolution) })
  eld?.enable()
  window0 = { t: performance.now(), cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), main: mainThreadCpuUs() }
  measureTimer = setTimeout(closeWindow, seconds * 1000)
}

function closeWindow() {
  if (phase !== 'measure') return
  phase = 'drain'
  clearTimeout(measureTimer)
  const main = mainThreadCpuUs()
  window1 = {
    t: performance.now(),
    cpu: process.cpuUsage(window0.cpu),
    elu: performance.eventLoopUtilization(window0.elu),
    main: main === null || window0.main === null ? null : main - window0.main,
  }
  eld?.disable()
}

function afterRun(latency, ttfp, startedIn, cold) {
  completed++
  if (cold) coldLatencies.push(latency)
  // Latency: the runs that started in the window, wherever they end (the drain waits for them).
  if (startedIn === 'measure') {
    latencies.push(latency)
    if (ttfp !== null) ttfps.push(ttfp)
  }
  if (phase === 'warmup') {
    warmupCompleted++
    if (warmupCompleted >= warmupRuns) openWindow()
  } else if (phase === 'measure') {
    windowRuns++
    if (windowRuns >= maxRuns) closeWindow()
  }
}

async function worker() {
  while (phase !== 'drain') {
    const startedIn = phase
    const cold = started++ < Math.max(1, concurrency)
    const t0 = performance.now()
    let ttfp = null
    try {
      const { text, calls, streamed, firstTextAt } = await contender.run()
      if (text !== workload.finalText) fail(`final text ${JSON.stringify(text).slice(0, 300)}`)
      else if (calls !== undefined && calls !== expectedCalls) fail(`${calls} tool calls, expected ${expectedCalls}`)
      else if (expectedStreamed !== null && streamed !== expectedStreamed) fail(`text deltas joined: ${JSON.stringify(streamed).slice(0, 300)}`)
      else if (expectedStreamed !== null && typeof firstTextAt !== 'number') fail('no text delta reached the consumer')
      if (typeof firstTextAt === 'number') ttfp = firstTextAt - t0
    } catch (err) {
      fail(err?.stack ?? err)
    }
    afterRun(performance.now() - t0, ttfp, startedIn, cold)
  }
}

const warmupTimer = setTimeout(openWindow, warmupSeconds * 1000)
if (warmupRuns === 0) openWindow()
await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker))
clearTimeout(warmupTimer)
// A contender may check something only once every run is over (ours-traced: the spans of every
// run, which its SDK exports in batches, later than the run ends). The window is closed: what
// `finish` does is not measured.
if (contender.finish) {
  try {
    const why = await contender.finish({ runs: completed })
    if (why) fail(why)
  } catch (err) {
    fail(err?.stack ?? err)
  }
}
// Then it lets go of what it holds (an MCP contender ends its session, so the MCP server does not
// keep one per measurement); not measured either.
if (contender.close) {
  try {
    await contender.close()
  } catch (err) {
    fail(`close: ${err?.stack ?? err}`)
  }
}

const runs = windowRuns
if (runs === 0) fail('no run completed in the measured window')
// Every call of every run (warm-up and drain too) must have run its tool exactly once (here, or
// for the mcp workload in the MCP server: the driver checks that count).
if (toolStats.executions !== completed * localCalls) {
  fail(`tools ran ${toolStats.executions} times in this process in ${completed} runs, expected ${completed * localCalls}`)
}
latencies.sort((a, b) => a - b)
ttfps.sort((a, b) => a - b)
coldLatencies.sort((a, b) => a - b)
const elapsedMs = window1.t - window0.t
const { cpu, elu } = window1
const per = (x) => (runs > 0 ? x / runs : null)
const result = {
  contender: name,
  workload: workload.name,
  concurrency,
  runs,
  warmupRuns: warmupCompleted,
  totalRuns: completed,
  requestsPerRun: workload.rounds + 1,
  failures,
  firstFailure,
  seconds: elapsedMs / 1000,
  runsPerSec: runs / (elapsedMs / 1000),
  cpuUsPerRun: per(cpu.user + cpu.system),
  cpuUserUsPerRun: per(cpu.user),
  cpuCores: (cpu.user + cpu.system) / 1000 / elapsedMs,
  mainUsPerRun: per(elu.active * 1000),
  mainUtilization: elu.utilization,
  mainCpuUsPerRun: window1.main === null ? null : per(window1.main),
  p50Ms: percentile(latencies, 50),
  p99Ms: percentile(latencies, 99),
  p99OverP50: latencies.length > 0 ? percentile(latencies, 99) / percentile(latencies, 50) : null,
  latencyRuns: latencies.length,
  coldP99Ms: percentile(coldLatencies, 99),
  startMs,
  ttfpP50Ms: workload.stream ? percentile(ttfps, 50) : null,
  ttfpP99Ms: workload.stream ? percentile(ttfps, 99) : null,
  eldP99Ms: eld ? Math.max(0, eld.percentile(99) / 1e6 - Math.max(1, eldResolution)) : null,
  eldMaxMs: eld ? Math.max(0, eld.max / 1e6 - Math.max(1, eldResolution)) : null,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
  info: contender.info,
}
process.stdout.write(`${JSON.stringify(result)}\n`)
// Keep-alive sockets and pools would keep the process alive: the measurement is done.
process.exit(0)
