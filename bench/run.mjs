// `npm run bench`: this package against its peers on the same tools and the same conversations.
//
// One stand-in API process (bench/server.mjs: the strict mock with a scripted handler), and each
// measurement in a fresh child process (bench/child.mjs), the contenders taking turns, round after
// round; the tables show the median of the rounds. See bench/RESULTS.md for what each figure means.
//
//   npm run bench                          full run (3 rounds × 3 workloads × 2 concurrencies × 4 contenders, ours-traced
//                                          on order too, and the streaming, mcp and bedrock cells: 3 rounds × 2 concurrencies × 3
//                                          contenders each), writes bench/RESULTS.md
//   npm run bench -- --contenders ours,ours-traced,sdk,ai --workloads order
//                                          the tracing cell: ours with an OpenTelemetry SDK registered beside ours and the peers
//   npm run bench -- --workloads stream    the streaming cell only (writes its section of bench/RESULTS.md)
//   npm run bench -- --workloads mcp       the mcp cell only: the order round with its tool on a local MCP server
//                                          (bench/mcp-server.mjs); writes its section once ours is measured in it too
//   npm run bench -- --workloads mcp --contenders sdk,ai --quick
//                                          the peers' MCP forms alone, as a smoke run
//   npm run bench -- --workloads bedrock   the bedrock cell only: the order round on Amazon Bedrock (the stand-in's
//                                          Bedrock door, every request SigV4-signed) against @anthropic-ai/bedrock-sdk's
//                                          tool runner and @ai-sdk/amazon-bedrock; writes its section of bench/RESULTS.md
//   npm run bench -- --quick               a smoke run (1 round, a few hundred runs; also BENCH_QUICK=1); writes nothing
//   npm run bench -- --contenders ours --workloads heavy --concurrency 64 --rounds 5
//                                          one contender / workload / concurrency (writes nothing)
//   npm run bench -- --against main        the regression check, before a change lands: main's release addon built in
//                                          a worktree of its own (bench/.against/<sha>, kept for the next run), then
//                                          ours, ours-hooks and ours-traced at both commits taking turns on order and
//                                          heavy, and a table of this tree's figures ÷ main's per cell (writes nothing)
//
// Options: --rounds N (3), --seconds S measured per measurement (5), --warmup S (1.5), --max-runs N,
// --contenders ours,ours-hooks,ours-traced,ours-sqlite,ours-postgres,sdk,ai,floor (ours-hooks, ours-traced and the store ones: on order only; stream, mcp and bedrock: ours, sdk, ai in their
// streaming, MCP and Bedrock forms), --workloads order,heavy,heavy-objects,stream,mcp,bedrock, --concurrency 1,64, --json FILE (raw figures),
// --write / --no-write (bench/RESULTS.md: by default each section whose cells were all measured, by
// every contender, is rewritten: order + heavy, the streaming cell, the mcp cell, the bedrock cell), --addon FILE (the build to measure, default the root's
// .node; it is copied first, so a rebuild during the run changes nothing), --allow-debug (measure a
// debug addon anyway; never written),
// --no-eld (no event-loop delay monitor: its 1 ms timer costs a little CPU in every contender),
// --priority N (niceness of the stand-in and the children, e.g. --priority=-10 on a machine shared with builds).
// --from-json FILE (measure nothing: print the report of a --json file; with --write, put it in RESULTS.md),
// --against REF (any git ref: a branch, a tag, a commit, HEAD~1; its twins of ours among --contenders, default
// ours,ours-hooks,ours-traced, on --workloads, default order,heavy; a commit without hooks or tracing has no such
// row; its build uses $CARGO_TARGET_DIR, else bench/.against/target; both builds must be release).

import { writeFileSync } from 'node:fs'
import os from 'node:os'
// Importing settings.mjs reads the command line: a bad flag stops the bench there, and --help prints this header.
import { against, concurrencies, contenders, noEld, opts, priority, quick, refs, rounds, saved, seconds, warmup, workloads, write } from './settings.mjs'
import { baseOf } from './against.mjs'
import { againstReport } from './against-report.mjs'
import { failuresOf, summariseCells } from './figures.mjs'
import { machine, sourceState } from './machine.mjs'
import { measureAll } from './measure-rounds.mjs'
import { checkPeersInstalled, preparePackage, prepareRef } from './preconditions.mjs'
import { writeResultsMd } from './results-md.mjs'
import { buildReports } from './tables.mjs'
import { postgresBin, startPostgres } from '../scripts/postgres.mjs'

// This file is the driver, in the order a run goes: the preconditions and the copy of this package
// measured (preconditions.mjs), the rounds (measure-rounds.mjs: each measurement a child through
// measure-child.mjs, against the stand-in and MCP server of start-server.mjs), the medians and ratios
// (figures.mjs), the tables (tables.mjs), then --json and RESULTS.md (results-md.mjs).

checkPeersInstalled()
const { childEnv, addon } = preparePackage()
const addonTrusted = addon === null || addon.profile === 'release'
// --against: the other commit checked out and built (minutes, the first time), before the stand-in starts.
const ref = against && !saved ? { short: against.short, ...prepareRef(childEnv) } : null

const cells = []
for (const w of workloads) for (const c of concurrencies) cells.push({ workload: w, concurrency: c, key: `${w}@${c}` })

const started = saved ? new Date(saved.started) : new Date()
const load0 = saved ? (saved.load0 ?? null) : os.loadavg()
const m = saved ? saved.machine : machine()
const source = saved ? (saved.source ?? { head: 'unknown', dirty: false }) : sourceState()
const raw = saved ? saved.raw : []
const problems = saved ? (saved.problems ?? []) : []
let stoppedEarly = saved ? Boolean(saved.stoppedEarly) : false
// ours-postgres measures against a PostgreSQL server of its own, started here (Debian's binaries).
if (!saved && contenders.includes('ours-postgres')) {
  if (postgresBin() === null) {
    problems.push('ours-postgres was not measured: no PostgreSQL server is installed (apt-get install postgresql)')
    contenders.splice(contenders.indexOf('ours-postgres'), 1)
  } else {
    const pg = await startPostgres()
    childEnv.BENCH_POSTGRES_URL = pg.createDatabase('bench')
  }
}
if (saved) console.log(`bench: the report of ${opts['from-json']} (measured ${started.toISOString()}); nothing is measured`)
else stoppedEarly = await measureAll({ cells, machine: m, load0, addon, env: childEnv, raw, problems, ref })

const summary = summariseCells(cells, raw)
const { failed, failedStream, failedMcp, failedBedrock } = failuresOf(summary)
const allFailed = [...failed, ...failedStream, ...failedMcp, ...failedBedrock]

const load1 = saved ? (saved.load1 ?? null) : os.loadavg()
if (!saved) console.log(`bench: load average at the end ${load1.map((x) => x.toFixed(2)).join(' ')}`)
const { report, streamReport, mcpReport, bedrockReport } = buildReports(summary, cells)
const refAddon = ref?.addon ?? saved?.against?.addon ?? null
const comparison = against ? againstReport(raw, { cells, pairs: refs.map((r) => ({ tree: baseOf(r), ref: r })), against, quick }) : null

console.log(`\n${[report, streamReport, mcpReport, bedrockReport, comparison].filter(Boolean).join('\n\n')}\n`)
if (allFailed.length > 0) console.log(`FAILED — a contender's conversations were not all correct:\n${allFailed.map((f) => `  ${f}`).join('\n')}\n`)
for (const p of problems) console.log(`bench: warning: ${p}`)
if (addon && !addonTrusted) console.log('bench: warning: the addon is a debug build: these figures mean nothing')

if (opts.json) {
  const againstJson = against ? { ...against, addon: refAddon } : null
  writeFileSync(opts.json, `${JSON.stringify({ started, machine: m, source, addon, against: againstJson, quick, rounds, seconds, warmup, settings: { priority, noEld }, load0, load1, problems, stoppedEarly, raw, summary }, null, 2)}\n`)
  console.log(`bench: raw figures written to ${opts.json}`)
}

if (write) writeResultsMd({ started, machine: m, source, addon, addonTrusted, stoppedEarly, raw, load0, load1, report, streamReport, mcpReport, bedrockReport, failed, failedStream, failedMcp, failedBedrock })

process.exitCode = allFailed.length > 0 || stoppedEarly ? 1 : 0
