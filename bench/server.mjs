// The benchmark's stand-in API: the strict stand-in (stand-in/) in its own process, with a
// handler that scripts the workloads of bench/workloads.mjs. Started by bench/run.mjs with an IPC
// channel; it says { type: 'ready', url } and answers { type: 'stats' } with its counters.
//
// By hand: node bench/server.mjs [--port N]   (prints the URL; Ctrl-C stops it)

import { startMockApi } from '../stand-in/index.mjs'
import { API_KEY, scriptedReply } from './workloads.mjs'

const args = process.argv.slice(2)
const portAt = args.indexOf('--port')
const port = portAt >= 0 ? Number(args[portAt + 1]) : 0

const stats = { requests: 0, statuses: {}, versions: {}, mismatches: 0, lastMismatch: null, lastRefusal: null }

function handler(body) {
  const step = scriptedReply(body)
  if (step.mismatch === undefined) return step
  stats.mismatches++
  stats.lastMismatch = step.mismatch
  return { content: [{ type: 'text', text: `MISMATCH: ${step.mismatch}` }], stop_reason: 'end_turn' }
}

const api = await startMockApi({ apiKey: API_KEY, host: '127.0.0.1', port, handler })

// The mock keeps every request (body included) for the tests to read; a benchmark sends hundreds
// of thousands, so count them instead of keeping them.
api.requests = {
  push(record) {
    stats.requests++
    return record
  },
  length: 0,
}
// The API version each request speaks (the stand-in holds each to that version's rules):
// anthropic-tool-calling, @anthropic-ai/sdk 1.x and the floor send 2026-10-21, `ai` 6 2023-06-01.
api.server.prependListener('request', (req) => {
  const version = String(req.headers['anthropic-version'])
  stats.versions[version] = (stats.versions[version] ?? 0) + 1
})
api.server.on('request', (req, res) => {
  res.on('finish', () => {
    const code = String(res.statusCode)
    stats.statuses[code] = (stats.statuses[code] ?? 0) + 1
  })
  // Keep the first words of a refusal (the strict mock's message says which field it refused).
  const end = res.end
  res.end = function (chunk, ...rest) {
    if (res.statusCode !== 200 && typeof chunk === 'string') stats.lastRefusal = chunk.slice(0, 500)
    return end.call(this, chunk, ...rest)
  }
})

function snapshot() {
  const cpu = process.cpuUsage()
  return { ...stats, statuses: { ...stats.statuses }, versions: { ...stats.versions }, cpuUs: cpu.user + cpu.system, rssKb: process.resourceUsage().maxRSS }
}

if (process.send) {
  process.on('message', (msg) => {
    if (msg?.type === 'stats') process.send({ type: 'stats', id: msg.id, stats: snapshot() })
    else if (msg?.type === 'stop') stop()
  })
  process.on('disconnect', () => stop())
  process.send({ type: 'ready', url: api.url })
} else {
  process.stdout.write(`bench stand-in API listening on ${api.url} (key ${API_KEY})\n`)
}

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  await api.close()
  process.exit(0)
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
