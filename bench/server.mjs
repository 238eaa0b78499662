// The benchmark's stand-in API: the strict stand-in (stand-in/) in its own process, with a
// handler that scripts the workloads of bench/workloads.mjs. Started by bench/run.mjs with an IPC
// channel; it says { type: 'ready', url, bedrockUrl } and answers { type: 'stats' } with its counters.
//
// Two doors, each on a port of its own, sharing the script and the counters: the Anthropic API's
// (`url`), and Amazon Bedrock's (`bedrockUrl`: POST /model/{model}/invoke, for the bedrock
// workload), which takes only the bench's AWS key, signed (SigV4): a request with no signature, or
// with a Bedrock API key, is refused. It checks the signature's header, scope, date and key, not
// its HMAC, which __test__/stand-in-platforms.test.mjs checks against the official clients: the
// stand-in's CPU is taken from the contenders on this 2-core machine.
//
// By hand: node bench/server.mjs [--port N]   (prints the URLs; Ctrl-C stops it)

import { startMockApi } from '../stand-in/index.mjs'
import { API_KEY, BEDROCK, scriptedReply } from './workloads.mjs'

const args = process.argv.slice(2)
const portAt = args.indexOf('--port')
const port = portAt >= 0 ? Number(args[portAt + 1]) : 0

const stats = { requests: 0, statuses: {}, versions: {}, mismatches: 0, lastMismatch: null, lastRefusal: null }

function handler(body, record) {
  const step = scriptedReply(body, record?.platform)
  if (step.mismatch === undefined) return step
  stats.mismatches++
  stats.lastMismatch = step.mismatch
  return { content: [{ type: 'text', text: `MISMATCH: ${step.mismatch}` }], stop_reason: 'end_turn' }
}

// Threads: the stand-in holds each reply's whole conversation for its next turn, the newest 20 000.
// Nobody here continues a run's final reply, and holding them kept every finished heavy run's
// ~370 KB conversation: the stand-in's heap grew by ~130 MB a second to 1.5 GB within one
// measurement, and its collections slowed every request, the fastest contenders' most (ours at
// heavy c=64: 3.3 ms of stand-in CPU a run, 1.5 ms without them). So a reply that ends its turn is
// not held; one a tool loop continues still is, and a continue still meets every thread rule.
const HELD_THREADS = { holdEndTurn: false }

const api = await startMockApi({ apiKey: API_KEY, host: '127.0.0.1', port, handler, heldThreads: HELD_THREADS })
const bedrock = await startMockApi({
  host: '127.0.0.1',
  port: port === 0 ? 0 : port + 1,
  handler,
  platform: {
    type: 'bedrock',
    region: BEDROCK.region,
    credentials: [{ accessKeyId: BEDROCK.accessKeyId, secretAccessKey: BEDROCK.secretAccessKey }],
    apiKeys: [],
    recomputeSignature: false,
  },
})

for (const door of [api, bedrock]) {
  // The mock keeps every request (body included) for the tests to read; a benchmark sends hundreds
  // of thousands, so count them instead of keeping them.
  door.requests = {
    push(record) {
      stats.requests++
      return record
    },
    length: 0,
  }
  // The API version each request speaks (the stand-in holds each to that version's rules):
  // anthropic-tool-calling, @anthropic-ai/sdk 1.x and the floor send 2026-10-21, `ai` 6 2023-06-01;
  // on Bedrock it is in the body (counted as `bedrock`).
  door.server.prependListener('request', (req) => {
    const version = door === bedrock ? 'bedrock' : String(req.headers['anthropic-version'])
    stats.versions[version] = (stats.versions[version] ?? 0) + 1
  })
  door.server.on('request', (req, res) => {
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
}

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
  process.send({ type: 'ready', url: api.url, bedrockUrl: bedrock.url })
} else {
  process.stdout.write(`bench stand-in API listening on ${api.url} (key ${API_KEY}), Bedrock on ${bedrock.url}\n`)
}

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  await Promise.all([api.close(), bedrock.close()])
  process.exit(0)
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
