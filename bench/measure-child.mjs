// One measurement: bench/child.mjs in a fresh process for one contender, workload and concurrency,
// and its figures read back from the JSON line it prints last. A child that crashes, hangs or
// prints no figures gives a broken measurement (one failure), never an exception: the run goes on.
// A child whose contender cannot be measured in this build says so ({ skipped }), and that is passed on.
// A twin at another commit (`ours@1a2b3c4d5`, --against) is its contender with that commit's copy
// of the package in `env`; its figures carry its own name.

import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { baseOf } from './against.mjs'
import { launcher, limits, niceArgs, noEld, seconds, warmup } from './settings.mjs'
import { WORKLOADS } from './workloads.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

/** `urls`: { api, bedrock, mcp } (bedrock: the stand-in's Bedrock door; mcp: the MCP server, for the mcp workload); `env`: the children's environment (see preconditions.mjs). */
export function measureInChild(urls, contender, workload, concurrency, env) {
  const { warmupRuns, maxRuns } = limits(concurrency, workload)
  const args = [
    path.join(here, 'child.mjs'),
    '--contender', baseOf(contender),
    '--workload', workload,
    '--concurrency', String(concurrency),
    // A workload on a cloud platform talks to the stand-in's door for it (bench/server.mjs).
    '--url', WORKLOADS[workload]?.platform === 'bedrock' ? urls.bedrock : urls.api,
    ...(WORKLOADS[workload]?.form === 'mcp' ? ['--mcp-url', urls.mcp] : []),
    '--seconds', String(seconds),
    '--warmup-seconds', String(warmup),
    '--warmup-runs', String(warmupRuns),
    '--max-runs', String(maxRuns),
  ]
  // The streaming cell has no event-loop delay monitor: a streamed run lasts ~150 ms, and the
  // monitor's 1 ms timer would add ~3 ms of main-thread CPU to each run at concurrency 1.
  if (noEld || WORKLOADS[workload]?.stream) args.push('--no-eld')
  return new Promise((resolve) => {
    const child = spawn(launcher, [...niceArgs, ...args], { cwd: here, env, stdio: ['ignore', 'pipe', 'pipe'] })
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
      if (result?.skipped && code === 0) resolve({ ...result, contender })
      else if (!result || result.fatal || code !== 0) {
        const why = result?.fatal ?? (signal ? `killed by ${signal} after ${Math.round(limitMs / 1000)} s` : `exited ${code}`)
        resolve({ contender, workload, concurrency, failures: 1, firstFailure: `the measurement failed: ${why}`, broken: true })
      } else resolve({ ...result, contender })
    })
  })
}
