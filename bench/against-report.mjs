// The report of `--against`: for each cell and each of ours measured at both commits, the working
// tree's figure ÷ the ref's. The two took turns in every round, so each round gives one ratio of
// two measurements made side by side; the table shows the median of those ratios and the lowest
// and highest, never an absolute timing (those are in the cell tables above it).
//
// Pure: it reads the raw measurements it is given and nothing else, so the tests build its tables
// from figures of their own.

import { fmtRatio, median } from './format.mjs'

/** The figures compared, in the order of the table's columns. */
export const AGAINST_FIGURES = [
  { key: 'cpuUsPerRun', head: 'CPU per run' },
  { key: 'mainCpuUsPerRun', head: 'main-thread CPU per run' },
  { key: 'runsPerSec', head: 'runs/s' },
  { key: 'p50Ms', head: 'p50' },
  { key: 'p99Ms', head: 'p99' },
  { key: 'startMs', head: 'cold start' },
]

const usable = (v) => typeof v === 'number' && Number.isFinite(v)

/** A contender's measurements of one cell that did not break, by round. */
function byRound(raw, contender, workload, concurrency) {
  const out = new Map()
  for (const r of raw) {
    if (r.contender === contender && r.workload === workload && r.concurrency === concurrency && !r.broken) out.set(r.round, r)
  }
  return out
}

/** `tree` ÷ `ref` of the figure `key` in one cell: one ratio a round in which both were measured. */
export function roundRatios(raw, { workload, concurrency, tree, ref, key }) {
  const a = byRound(raw, tree, workload, concurrency)
  const b = byRound(raw, ref, workload, concurrency)
  const out = []
  for (const [round, x] of [...a].sort((p, q) => p[0] - q[0])) {
    const y = b.get(round)?.[key]
    if (usable(x[key]) && usable(y) && y > 0) out.push(x[key] / y)
  }
  return out
}

/** The median of the ratios, their lowest and highest, and how many there are; null for none. */
export function ratioSummary(ratios) {
  if (ratios.length === 0) return null
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios), n: ratios.length }
}

/** `1.02× (0.97–1.06)`: the median, and the range when there was more than one round. */
export function fmtSummary(summary) {
  if (summary === null) return '–'
  if (summary.n < 2) return fmtRatio(summary.median)
  return `${fmtRatio(summary.median)} (${summary.min.toFixed(2)}–${summary.max.toFixed(2)})`
}

/**
 * The table: a row for each cell (`{ workload, concurrency }`) and pair (`{ tree, ref }`, e.g.
 * ours and ours@1a2b3c4d5) measured in it by both, a column a figure, then the rounds compared.
 * A pair with a failed conversation on either side is flagged. Null when no pair was measured.
 */
export function againstTable(raw, { cells, pairs }) {
  const head = ['cell', 'contender', ...AGAINST_FIGURES.map((f) => f.head), 'rounds']
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`]
  for (const { workload, concurrency } of cells) {
    for (const pair of pairs) {
      const tree = byRound(raw, pair.tree, workload, concurrency)
      const ref = byRound(raw, pair.ref, workload, concurrency)
      if (tree.size === 0 || ref.size === 0) continue
      const failed = raw.some((r) => (r.contender === pair.tree || r.contender === pair.ref) && r.workload === workload && r.concurrency === concurrency && (r.failures ?? 0) > 0)
      const summaries = AGAINST_FIGURES.map((f) => ratioSummary(roundRatios(raw, { workload, concurrency, ...pair, key: f.key })))
      const rounds = Math.max(0, ...summaries.map((s) => s?.n ?? 0))
      lines.push(`| ${workload} c=${concurrency} | ${pair.tree}${failed ? ' ⚠ FAILED' : ''} | ${summaries.map(fmtSummary).join(' | ')} | ${rounds} |`)
    }
  }
  return lines.length > 2 ? lines.join('\n') : null
}

/**
 * The section printed after the cell tables: what is compared, the table, and how to read it.
 * `quick`: a smoke run (one round of counted runs), whose ratios are said to be noise.
 */
export function againstReport(raw, { cells, pairs, against, quick = false }) {
  const table = againstTable(raw, { cells, pairs })
  const what = `${against.ref === against.short ? against.short : `${against.ref} (${against.short})`}`
  if (table === null) return `### This working tree ÷ ${what}\n\nNothing to compare: no contender was measured at both commits.`
  return [
    `### This working tree ÷ ${what}, same run`,
    '',
    `Each figure is the working tree's ÷ ${against.short}'s, measured side by side in each round; the median of the rounds, with the lowest–highest in brackets.`,
    ...(quick ? ['', 'QUICK: a smoke run (one round of a few counted runs): it shows that both builds run and are checked, and its ratios are noise; measure without --quick to compare.'] : []),
    '',
    table,
    '',
    'Below 1.00× the working tree costs less (CPU per run, main-thread CPU per run, p50, p99, cold start); for runs/s above 1.00× is better. ' +
      'A range that stays on one side of 1.00× moved that way in every round; one that straddles 1.00× is within this run\'s noise. ' +
      'Cold start: the contender imported and set up in a fresh process (for this package: `require` and its tools registered).',
  ].join('\n')
}
