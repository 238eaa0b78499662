// The measuring itself: the stand-in started once (and the MCP server, when the mcp cell is
// measured), then round after round every cell, and in each cell every contender in a child of its
// own (bench/child.mjs). Each measurement is checked on the stand-in's side too (and the MCP
// server's), and a line of progress is printed as it ends.

import os from 'node:os'
import { baseOf } from './against.mjs'
import { fix } from './figures.mjs'
import { ALL_OURS } from './lineup.mjs'
import { measureInChild } from './measure-child.mjs'
import { cellContenders, die, quick, refs, rounds, seconds, warmup } from './settings.mjs'
import { startMcpServer, startServer } from './start-server.mjs'
import { WORKLOADS } from './workloads.mjs'

/**
 * Measures every cell `rounds` times. Each measurement is pushed onto `raw`, and anything odd onto
 * `problems`; returns whether the run stopped early (the stand-in failed half-way). `ref`: with
 * --against, the other commit's `{ short, env, addon }` (its twins' children get its env), else null.
 */
export async function measureAll({ cells, machine: m, load0, addon, env, raw, problems, ref = null }) {
  const measurements = cells.reduce((n, cell) => n + cellContenders(cell.workload).length, 0)
  console.log(`bench: ${quick ? 'QUICK (smoke run, figures are not measurements)' : 'full run'}: ${rounds} round(s) × ${cells.length} cell(s), ${measurements} measurement(s) a round, ${quick ? 'counted runs' : `${warmup} s warm-up + ${seconds} s measured each`}`)
  console.log(`machine: ${m.nproc} × ${m.cpu}, ${m.memGiB} GiB, Node ${m.node}; load average ${load0.map((x) => x.toFixed(2)).join(' ')}`)
  if (addon) console.log(`addon: ${addon.source}: ${addon.profile} build, ${(addon.size / 2 ** 20).toFixed(1)} MiB, built ${new Date(addon.mtimeMs).toISOString()}, sha256 ${addon.sha256}… (measured from a copy)`)
  if (ref) {
    console.log(`against: ${ref.addon.ref} = ${ref.addon.sha}: ${ref.addon.source}: ${ref.addon.profile} build, ${(ref.addon.size / 2 ** 20).toFixed(1)} MiB, sha256 ${ref.addon.sha256}… (measured from a copy)`)
    // Byte for byte the same package: whatever the ratios say is this machine's noise, which is worth knowing too.
    if (addon && ref.addon.sha256 === addon.sha256 && ref.addon.jsSha256 === addon.jsSha256) {
      console.log(`against: ${ref.addon.ref} is this tree's package byte for byte (addon and JS): the ratios will show this machine's noise alone`)
    } else if (addon && ref.addon.sha256 === addon.sha256) console.log(`against: the same addon as this tree's; only the JS differs`)
  }
  if (!quick && load0[0] > 0.5 * m.nproc) {
    console.log(`bench: warning: the machine is busy (1-min load ${load0[0].toFixed(2)} on ${m.nproc} cores); figures will be noisy`)
  }

  const server = startServer(env)
  const mcpServer = cells.some((cell) => WORKLOADS[cell.workload].form === 'mcp') ? startMcpServer(env) : null
  const urls = {}
  try {
    const said = await server.ready
    urls.api = said.url
    urls.bedrock = said.bedrockUrl
    if (mcpServer) urls.mcp = (await mcpServer.ready).url
  } catch (e) {
    die(e.message)
  }
  for (const [what, url] of [['API', urls.api], ['Bedrock door', urls.bedrock]]) {
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) die(`the stand-in's ${what} is at ${url}, not on loopback`)
  }
  if (mcpServer && !/^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(urls.mcp)) die(`the MCP server is at ${urls.mcp}, not on loopback`)

  try {
    for (let round = 0; round < rounds; round++) {
      for (const [i, cell] of cells.entries()) {
        // Each round and cell starts with another contender, so no one always runs first or last.
        const inCell = cellContenders(cell.workload)
        if (inCell.length === 0) continue
        const shift = (round + i) % inCell.length
        const order = [...inCell.slice(shift), ...inCell.slice(0, shift)]
        const mcp = WORKLOADS[cell.workload].form === 'mcp' ? mcpServer : null
        for (const contender of order) {
          const before = await server.stats()
          const mcpBefore = await mcp?.stats()
          const twin = ref !== null && contender !== baseOf(contender)
          const result = await measureInChild(urls, contender, cell.workload, cell.concurrency, twin ? ref.env : env)
          const after = await server.stats()
          const mcpAfter = await mcp?.stats()
          if (result.skipped) {
            noteSkipped(result, problems)
            continue
          }
          result.round = round
          result.load1 = os.loadavg()[0]
          checkAgainstStandIn(result, before, after)
          if (mcp) checkAgainstMcpServer(result, mcpBefore, mcpAfter)
          const expected = twin ? ref.addon.profile : addon?.profile
          if (ALL_OURS.includes(baseOf(contender)) && result.info?.buildProfile && result.info.buildProfile !== expected) {
            problems.push(`a child of ${contender} loaded a ${result.info.buildProfile} addon, not the ${expected} copy`)
            result.debugAddon = true
          }
          raw.push(result)
          printProgress(round, cell, contender, result)
        }
      }
    }
  } catch (e) {
    problems.push(e.message)
    return true
  } finally {
    server.stop()
    mcpServer?.stop()
  }
  return false
}

/** A contender this build cannot measure (ours before registerMcpServer exists): said as it happens, and once at the end. */
function noteSkipped(result, problems) {
  console.log(`bench: ${result.contender} skipped in the ${result.workload} cell (c=${result.concurrency}): ${result.skipped}`)
  const why = `${result.contender} was not measured in the ${result.workload} cell: ${result.skipped}`
  if (!problems.includes(why)) problems.push(why)
}

/**
 * The MCP server's side of an mcp measurement: every call of every run reached it exactly once
 * (the tools run there, not in the child), with no request it refused and no transport error.
 * Its CPU per run is kept beside the figures, never in them.
 */
function checkAgainstMcpServer(result, before, after) {
  const fail = (why) => {
    result.failures++
    result.firstFailure ??= why
  }
  if (!result.broken) {
    const w = WORKLOADS[result.workload]
    const expected = result.totalRuns * w.rounds * w.callsPerRound
    const calls = after.toolCalls - before.toolCalls
    if (calls !== expected) fail(`the MCP server ran ${calls} tool calls, expected ${expected}`)
    result.mcpUsPerRun = result.totalRuns > 0 ? (after.cpuUs - before.cpuUs) / result.totalRuns : null
    // Kept in --json, not checked: how the package's own client holds its sessions is its choice.
    result.mcpSessions = after.sessions - before.sessions
  }
  if (after.badRequests > before.badRequests) fail(`the MCP server refused ${after.badRequests - before.badRequests} request(s) for want of a session`)
  if (after.errors > before.errors) fail(`the MCP server's transport failed ${after.errors - before.errors} time(s): ${after.lastError}`)
}

/**
 * The stand-in's side of a measurement, from its counters before and after: exactly the expected
 * requests, every one answered 200, no conversation that was not the workload's. Each miss counts
 * as a failure of the measurement.
 */
function checkAgainstStandIn(result, before, after) {
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
}

/** One line a measurement, as it ends: its main figures and whether it was correct. */
function printProgress(round, cell, contender, result) {
  const status = result.failures > 0 ? `FAILED (${result.failures}): ${result.firstFailure}` : 'ok'
  console.log(
    `[round ${round + 1}/${rounds}] ${cell.workload} c=${cell.concurrency} ${contender.padEnd(refs.length > 0 ? 21 : 11)} ` +
      `${fix(result.runsPerSec, 0).padStart(6)} runs/s  CPU ${fix(result.cpuUsPerRun, 0).padStart(6)} µs/run  ` +
      `main ${fix(result.mainUsPerRun, 0).padStart(6)} µs/run  p99 ${fix(result.p99Ms, 1)} ms  ` +
      `${result.ttfpP50Ms === null || result.ttfpP50Ms === undefined ? '' : `TTFP p50 ${fix(result.ttfpP50Ms, 2)} ms  `}${result.runs ?? 0} runs  ${status}`,
  )
}
