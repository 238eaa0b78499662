// The figures of a measurement and how they are summed up: which figures there are (and which way
// is better), the median of the rounds for each contender in each cell, how far the rounds were
// apart, and ours as a ratio of the best peer or the floor. Also how a figure is printed.

import { fix, median } from './format.mjs'
import { PEERS } from './lineup.mjs'
import { cellContenders } from './settings.mjs'
import { WORKLOADS } from './workloads.mjs'

export { fix, fmtRatio } from './format.mjs'

/** The figures of the tables: key, heading, which way is better, how to print it. */
export const FIGURES = [
  { key: 'runsPerSec', head: 'runs/s', better: 'max', fmt: (v) => fix(v, v >= 100 ? 0 : 1) },
  { key: 'cpuUsPerRun', head: 'CPU µs/run', better: 'min', fmt: (v) => fix(v, 0) },
  { key: 'mainUsPerRun', head: 'main busy µs/run', better: 'min', fmt: (v) => fix(v, 0) },
  { key: 'mainCpuUsPerRun', head: 'main CPU µs/run', better: 'min', fmt: (v) => fix(v, 0) },
  { key: 'p50Ms', head: 'p50 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  { key: 'p99Ms', head: 'p99 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  { key: 'p99OverP50', head: 'p99 / p50', better: 'min', fmt: (v) => fix(v, 2) },
  { key: 'coldP99Ms', head: 'cold p99 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  { key: 'startMs', head: 'start ms', better: 'min', fmt: (v) => fix(v, 1) },
  { key: 'eldP99Ms', head: 'ELD p99 ms', better: 'min', fmt: (v) => fix(v, 2) },
  { key: 'peakRssMb', head: 'peak RSS MB', better: 'min', fmt: (v) => fix(v, 1) },
]

/** The streaming cell's figures: time to first text part first, then the others (no ELD: the cell runs without the monitor). */
export const STREAM_FIGURES = [
  FIGURES[0],
  { key: 'ttfpP50Ms', head: 'first text p50 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  { key: 'ttfpP99Ms', head: 'first text p99 ms', better: 'min', fmt: (v) => fix(v, v >= 100 ? 0 : 2) },
  ...FIGURES.slice(1).filter((f) => f.key !== 'eldP99Ms'),
]
export const figuresOf = (workload) => (WORKLOADS[workload]?.stream ? STREAM_FIGURES : FIGURES)


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
  row.mcpUsPerRun = median(ok.map((m) => m.mcpUsPerRun))
  row.spread = { runsPerSec: spread(ok.map((m) => m.runsPerSec)), cpuUsPerRun: spread(ok.map((m) => m.cpuUsPerRun)) }
  return row
}

/** max ÷ min over the rounds: how far apart the rounds were (1.00× = identical). */
function spread(xs) {
  const v = xs.filter((x) => Number.isFinite(x) && x > 0)
  return v.length < 2 ? null : Math.max(...v) / Math.min(...v)
}

/** ours ÷ x, for a figure (for runs/s: ours ÷ best too, so > 1 is better). */
export function ratio(ours, other) {
  if (ours === null || other === null || other === 0) return null
  return ours / other
}

/** The best of the peers' values of a figure in a cell, by the figure's own better way. */
export function bestPeer(rows, figure) {
  const values = PEERS.map((p) => rows[p]?.[figure.key]).filter((v) => v !== null && v !== undefined)
  if (values.length === 0) return null
  return figure.better === 'max' ? Math.max(...values) : Math.min(...values)
}

/** For each cell (`workload@concurrency`), the summary of each contender measured in it. */
export function summariseCells(cells, raw) {
  const summary = {}
  for (const cell of cells) {
    const rows = {}
    for (const c of cellContenders(cell.workload)) {
      const ms = raw.filter((r) => r.contender === c && r.workload === cell.workload && r.concurrency === cell.concurrency)
      if (ms.length > 0) rows[c] = summarise(ms)
    }
    summary[cell.key] = rows
  }
  return summary
}

/** The contenders that failed, cell by cell: the streaming, mcp and bedrock cells apart, as each has a section of its own. */
export function failuresOf(summary) {
  const failed = []
  const failedStream = []
  const failedMcp = []
  const failedBedrock = []
  for (const [key, rows] of Object.entries(summary)) {
    const form = WORKLOADS[key.split('@')[0]].form
    const into = { stream: failedStream, mcp: failedMcp, bedrock: failedBedrock }[form] ?? failed
    for (const [c, r] of Object.entries(rows)) if (r.failures > 0) into.push(`${c} ${key.replace('@', ' c=')}: ${r.failures} failure(s), first: ${r.firstFailure}`)
  }
  return { failed, failedStream, failedMcp, failedBedrock }
}
