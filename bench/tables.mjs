// The report, as markdown tables: one table a cell (every figure of every contender, and ours as a
// ratio of the best peer and of the floor; in a traced cell, ours traced as a ratio of ours and of
// the best peer), and above them the targets ours is held to, each marked met (✓) or not (✗).
// The streaming, mcp and bedrock cells are reports of their own. The same text is printed and put in
// bench/RESULTS.md.

import { baseOf } from './against.mjs'
import { ALL_CONTENDERS, PEERS, TRACED_WORKLOADS, label } from './lineup.mjs'
import { FIGURES, bestPeer, figuresOf, fix, fmtRatio, ratio } from './figures.mjs'
import { concurrencies, workloads } from './settings.mjs'
import { WORKLOADS } from './workloads.mjs'

/**
 * The four reports of a run: the cells of the plain workloads (with their targets), the streaming
 * cell, the mcp cell and the bedrock cell; each is a section of RESULTS.md of its own.
 */
export function buildReports(summary, cells) {
  const sections = []
  const targets = targetsTable(summary)
  if (targets) sections.push(`### Targets, ours against the best peer\n\n${targets}`)
  const fairness = fairnessTable(summary)
  if (fairness) sections.push(`### Targets under load (fair), ours against the best peer\n\n${fairness}`)
  const tracing = tracingTable(summary)
  if (tracing) sections.push(`### Tracing: ours with an OpenTelemetry SDK registered, against ours without one and the best peer (same run)\n\n${tracing}`)
  for (const cell of cells.filter((c) => !WORKLOADS[c.workload].form)) {
    sections.push(`### ${cell.workload}, concurrency ${cell.concurrency}\n\n${cellTable(summary[cell.key], cell.workload)}`)
  }
  const report = sections.join('\n\n')
  const streamReport = formReport(summary, cells, 'stream', 'Streaming', STREAM_TARGETS)
  const mcpReport = formReport(summary, cells, 'mcp', 'MCP', MCP_TARGETS)
  const bedrockReport = formReport(summary, cells, 'bedrock', 'Bedrock', BEDROCK_TARGETS)
  return { report, streamReport, mcpReport, bedrockReport }
}

/** The report of a form's cells: ours against the best peer (`targets`), then a table a cell. */
function formReport(summary, cells, form, title, targets) {
  const sections = []
  const vs = vsBestPeerTable(summary, form, targets)
  if (vs) sections.push(`#### ${title}, ours against the best peer (same run)\n\n${vs}`)
  for (const cell of cells.filter((c) => WORKLOADS[c.workload].form === form)) {
    sections.push(`#### ${title} (${cell.workload}), concurrency ${cell.concurrency}\n\n${cellTable(summary[cell.key], cell.workload)}`)
  }
  return sections.join('\n\n')
}

/** One cell: a row a contender, then ours ÷ best peer and ours ÷ floor when they were measured too. */
function cellTable(rows, workload) {
  const figures = figuresOf(workload)
  // A ref's twin (--against) right under its contender.
  const present = ALL_CONTENDERS.flatMap((c) => [c, ...Object.keys(rows).filter((k) => k !== c && baseOf(k) === c)]).filter((c) => rows[c])
  // The servers' CPU is theirs, shown beside the contender's figures and never in them.
  const mcp = WORKLOADS[workload].form === 'mcp'
  const head = ['contender', ...figures.map((f) => f.head), 'stand-in µs/run', ...(mcp ? ['MCP server µs/run'] : []), 'spread runs/s, CPU', 'runs', 'failures']
  const blank = ' |'.repeat(head.length - figures.length)
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`]
  for (const c of present) {
    const r = rows[c]
    const flag = r.failures > 0 ? ` ⚠ FAILED` : ''
    const spreads = r.spread.runsPerSec === null ? '–' : `${fmtRatio(r.spread.runsPerSec)}, ${fmtRatio(r.spread.cpuUsPerRun)}`
    const servers = [fix(r.apiUsPerRun, 0), ...(mcp ? [fix(r.mcpUsPerRun, 0)] : [])].join(' | ')
    lines.push(`| ${label(c, workload)}${flag} | ${figures.map((f) => f.fmt(r[f.key])).join(' | ')} | ${servers} | ${spreads} | ${r.runs} | ${r.failures} |`)
  }
  if (rows.ours) {
    const peers = PEERS.filter((p) => rows[p])
    if (peers.length > 0) {
      const cells = figures.map((f) => fmtRatio(ratio(rows.ours[f.key], bestPeer(rows, f))))
      lines.push(`| *ours ÷ best peer* | ${cells.join(' | ')}${blank}`)
    }
    if (rows.floor) {
      const cells = figures.map((f) => fmtRatio(ratio(rows.ours[f.key], rows.floor[f.key])))
      lines.push(`| *ours ÷ floor* | ${cells.join(' | ')}${blank}`)
    }
  }
  const hooked = rows['ours-hooks']
  if (hooked && rows.ours) lines.push(`| *hooks ÷ ours* | ${figures.map((f) => fmtRatio(ratio(hooked[f.key], rows.ours[f.key]))).join(' | ')}${blank}`)
  for (const [name, label] of [['ours-sqlite', 'SQLite store'], ['ours-postgres', 'PostgreSQL store']]) {
    if (rows[name] && rows.ours) lines.push(`| *${label} ÷ ours* | ${figures.map((f) => fmtRatio(ratio(rows[name][f.key], rows.ours[f.key]))).join(' | ')}${blank}`)
  }
  const traced = rows['ours-traced']
  if (traced) {
    if (rows.ours) lines.push(`| *traced ÷ ours* | ${figures.map((f) => fmtRatio(ratio(traced[f.key], rows.ours[f.key]))).join(' | ')}${blank}`)
    if (PEERS.some((p) => rows[p])) lines.push(`| *traced ÷ best peer* | ${figures.map((f) => fmtRatio(ratio(traced[f.key], bestPeer(rows, f)))).join(' | ')}${blank}`)
  }
  return lines.join('\n')
}

/**
 * Tracing, in each traced cell: `ours-traced` against `ours` (the API installed, no provider)
 * and against the best peer (untraced), both measured in the same run. The targets are on the
 * main thread's CPU, the cost an app's event loop pays; the rest is shown beside them.
 */
function tracingTable(summary) {
  const keys = workloads.filter((w) => TRACED_WORKLOADS.includes(w)).flatMap((w) => concurrencies.map((c) => `${w}@${c}`)).filter((k) => summary[k]?.['ours-traced'] && summary[k].ours)
  if (keys.length === 0) return null
  const fig = Object.fromEntries(FIGURES.map((f) => [f.key, f]))
  const vsOurs = (key) => (rows) => ratio(rows['ours-traced'][key] ?? null, rows.ours[key] ?? null)
  const both = (key, digits) => (rows) => `${fix(rows['ours-traced'][key], digits)} / ${fix(rows.ours[key], digits)}`
  const rowsOf = [
    { name: 'main-thread CPU per run ≤ 2× ours untraced', value: vsOurs('mainCpuUsPerRun'), ok: (v) => v <= 2 },
    { name: 'main-thread CPU per run ≤ 0.1× best peer', value: (rows) => ratio(rows['ours-traced'].mainCpuUsPerRun ?? null, bestPeer(rows, fig.mainCpuUsPerRun)), ok: (v) => v <= 0.1 },
    { name: 'main CPU µs/run, traced / untraced', text: both('mainCpuUsPerRun', 0) },
    { name: 'CPU per run (all threads), traced ÷ untraced', value: vsOurs('cpuUsPerRun') },
    { name: 'CPU µs/run, traced / untraced', text: both('cpuUsPerRun', 0) },
    { name: 'p50 ms, traced / untraced', text: both('p50Ms', 2) },
    { name: 'p99 ms, traced / untraced', text: both('p99Ms', 2) },
    { name: 'runs/s, traced ÷ untraced', value: vsOurs('runsPerSec') },
    { name: 'peak RSS, traced ÷ untraced', value: vsOurs('peakRssMb') },
  ]
  const head = ['traced (`ours-traced`)', ...keys.map((k) => `${k.split('@')[0]}, concurrency ${k.split('@')[1]}`)]
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`]
  for (const t of rowsOf) {
    const vals = keys.map((k) => {
      if (t.text) return t.text(summary[k])
      const v = t.value(summary[k])
      if (v === null || v === undefined) return '–'
      return t.ok ? `${fmtRatio(v)} ${t.ok(v) ? '✓' : '✗'}` : fmtRatio(v)
    })
    lines.push(`| ${t.name} | ${vals.join(' | ')} |`)
  }
  return lines.join('\n')
}

/** Whether a peer was measured in a cell: the targets are against the best peer, and a run without one (--against) has none to show. */
const withPeer = (rows) => PEERS.some((p) => rows?.[p])

/** The throughput and cost targets, at concurrency 64, for each non-streamed workload: ours against the best peer (and, as a stretch, the floor). */
function targetsTable(summary) {
  const keys = workloads.filter((w) => !WORKLOADS[w].form).map((w) => `${w}@64`).filter((k) => summary[k]?.ours && withPeer(summary[k]))
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

/** Fair under load, at concurrency 64, for each non-streamed workload: the tail of the latency, the main thread, and the cold start (shown, no target). */
function fairnessTable(summary) {
  const keys = workloads.filter((w) => !WORKLOADS[w].form).map((w) => `${w}@64`).filter((k) => summary[k]?.ours && withPeer(summary[k]))
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

/**
 * The streaming cell against the best peer, at each concurrency: only the main thread has a
 * target (≤ 0.2×), the rest are shown for comparison. Read on main CPU, the main thread's own CPU
 * time, which a busy machine does not inflate.
 */
const STREAM_TARGETS = [
  { name: 'time to first text part, p50', key: 'ttfpP50Ms' },
  { name: 'time to first text part, p99', key: 'ttfpP99Ms' },
  { name: 'main-thread CPU per run ≤ 0.2× best peer', key: 'mainCpuUsPerRun', ok: (v) => v <= 0.2 },
  { name: 'main-thread busy per run', key: 'mainUsPerRun' },
  { name: 'CPU per run (all threads)', key: 'cpuUsPerRun' },
  { name: 'runs/s', key: 'runsPerSec' },
]

/**
 * The mcp cell against the best peer, at each concurrency: the same tool round as `order`, each
 * call through an MCP client; a peer's is JS on the app's thread, so the targets are on the main
 * thread's CPU (≤ 0.1×) and on CPU per run, every thread (≤ 0.5×).
 */
const MCP_TARGETS = [
  { name: 'main-thread CPU per run ≤ 0.1× best peer', key: 'mainCpuUsPerRun', ok: (v) => v <= 0.1 },
  { name: 'CPU per run (all threads) ≤ 0.5× best peer', key: 'cpuUsPerRun', ok: (v) => v <= 0.5 },
  { name: 'main-thread busy per run', key: 'mainUsPerRun' },
  { name: 'runs/s', key: 'runsPerSec' },
  { name: 'p99', key: 'p99Ms' },
  { name: 'peak RSS', key: 'peakRssMb' },
]

/**
 * The bedrock cell against the best peer, at each concurrency: `order`'s round on Bedrock, every
 * request signed (SigV4). The target is on the main thread's CPU (≤ 0.1×: the engine signs on its
 * own threads, a peer on the app's); the rest are shown for comparison.
 */
const BEDROCK_TARGETS = [
  { name: 'main-thread CPU per run ≤ 0.1× best peer', key: 'mainCpuUsPerRun', ok: (v) => v <= 0.1 },
  { name: 'main-thread busy per run', key: 'mainUsPerRun' },
  { name: 'CPU per run (all threads)', key: 'cpuUsPerRun' },
  { name: 'runs/s', key: 'runsPerSec' },
  { name: 'p99', key: 'p99Ms' },
  { name: 'peak RSS', key: 'peakRssMb' },
]

/** Ours ÷ the best peer in the cells of a form's workloads, a column a concurrency, a row a figure (marked when it has a target). */
function vsBestPeerTable(summary, form, rowsOf) {
  const keys = workloads.filter((w) => WORKLOADS[w].form === form).flatMap((w) => concurrencies.map((c) => `${w}@${c}`)).filter((k) => summary[k]?.ours)
  if (keys.length === 0 || !keys.some((k) => PEERS.some((p) => summary[k][p]))) return null
  const fig = Object.fromEntries(figuresOf(keys[0].split('@')[0]).map((f) => [f.key, f]))
  const head = ['ours ÷ best peer', ...keys.map((k) => `concurrency ${k.split('@')[1]}`)]
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`]
  for (const t of rowsOf) {
    const vals = keys.map((k) => {
      const v = ratio(summary[k].ours?.[t.key] ?? null, bestPeer(summary[k], fig[t.key]))
      if (v === null || v === undefined) return '–'
      return t.ok ? `${fmtRatio(v)} ${t.ok(v) ? '✓' : '✗'}` : fmtRatio(v)
    })
    lines.push(`| ${t.name} | ${vals.join(' | ')} |`)
  }
  return lines.join('\n')
}
