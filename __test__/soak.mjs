// The soak: N conversations with tools at concurrency C against the
// stand-in API: every result must be exactly right, RSS after warm-up must grow less than
// 20 MB, and the client process must exit by itself when done (no handle left by the addon).
//
//   npm run soak                                   # 20 000 conversations, concurrency 64
//   node __test__/soak.mjs --conversations 2000    # what __test__/soak.test.mjs runs in CI
//
// The stand-in runs in this process; the client runs in a child process (so its RSS is the
// addon's and the loop's alone), which gets the key through ANTHROPIC_API_KEY. The secrets
// check rides along: the key must appear in no stand-in record but the auth header, no result, and nothing
// the child writes (stdout, stderr; it runs with ANTHROPIC_TOOL_CALLING_LOG=debug).
import { spawn } from 'node:child_process'
import path from 'node:path'
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const HERE = fileURLToPath(import.meta.url)
/** The largest RSS growth after warm-up we accept. */
export const MAX_GROWTH_MB = 20

// ---------------------------------------------------------------------------------------------
// The model: four kinds of conversation, by the conversation number in the prompt
// ---------------------------------------------------------------------------------------------

/**
 * 0: two tools in parallel, one round. 1: two rounds. 2: invalid input (continue mode), then the
 * corrected call. 3: the tool throws a ToolError, the model passes its words on.
 */
function soakModel(reply, text, toolUse) {
  return (body) => {
    const messages = body.messages
    const i = Number(/^conversation (\d+)$/.exec(messages[0].content)[1])
    const round = (messages.length - 1) / 2
    const last = messages.at(-1)
    const results = Array.isArray(last.content) ? last.content.filter((b) => b.type === 'tool_result') : []
    switch (i % 4) {
      case 0:
        if (round === 0) return reply([text('Looking.'), toolUse('soak_order', { orderId: `${i}` }), toolUse('soak_user', { userId: i })])
        return reply([text(`c${i}: ${results.map((r) => r.content).join(' | ')}`)])
      case 1:
        if (round === 0) return reply([toolUse('soak_order', { orderId: `${i}` })])
        if (round === 1) return reply([toolUse('soak_user', { userId: i })])
        return reply([text(`c${i}: ${results[0].content}`)])
      case 2:
        if (round === 0) return reply([toolUse('soak_order', { orderId: i })])
        if (round === 1) return reply([toolUse('soak_order', { orderId: `${i}` })])
        return reply([text(`c${i}: ${results[0].content}`)])
      default:
        if (round === 0) return reply([toolUse('soak_fail', { orderId: `${i}` })])
        return reply([text(`c${i}: ${results[0].is_error ? 'error' : 'ok'}: ${results[0].content}`)])
    }
  }
}

/** Tool rounds of conversation `i` (each is one more request). */
const rounds = (i) => (i % 4 === 1 || i % 4 === 2 ? 2 : 1)

/** What conversation `i` must end with. */
function expected(i) {
  const order = JSON.stringify({ orderId: `${i}`, status: 'shipped', by: `u${i}` })
  switch (i % 4) {
    case 0:
      return { text: `c${i}: ${order} | user ${i}`, calls: [false, false] }
    case 1:
      return { text: `c${i}: user ${i}`, calls: [false, false] }
    case 2:
      return { text: `c${i}: ${order}`, calls: [true, false] }
    default:
      return { text: `c${i}: error: Order ${i} does not exist.`, calls: [true] }
  }
}

// ---------------------------------------------------------------------------------------------
// The child: runs the conversations and measures itself
// ---------------------------------------------------------------------------------------------

async function child({ url, conversations, concurrency, warmup }) {
  const { registerTool, runWithTools, ToolError } = await import('../index.mjs')
  const key = process.env.ANTHROPIC_API_KEY
  const orderSchema = { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] }
  registerTool({
    definition: { name: 'soak_order', description: 'Look up an order', input_schema: orderSchema },
    execute: async ({ orderId }, ctx) => {
      await new Promise((resolve) => setImmediate(resolve))
      return { orderId, status: 'shipped', by: ctx.context.user }
    },
  })
  registerTool({
    definition: { name: 'soak_user', input_schema: { type: 'object', properties: { userId: { type: 'integer' } }, required: ['userId'] } },
    execute: ({ userId }) => `user ${userId}`,
  })
  registerTool({
    definition: { name: 'soak_fail', input_schema: orderSchema },
    execute: ({ orderId }) => {
      throw new ToolError(`Order ${orderId} does not exist.`)
    },
  })

  const mb = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10
  const rss = () => {
    globalThis.gc?.()
    return process.memoryUsage().rss
  }
  const started = performance.now()
  const failures = []
  const samples = []
  let correct = 0
  let done = 0
  let next = 0
  let baseline = null

  async function one(i) {
    const r = await runWithTools(`conversation ${i}`, { baseURL: url, onToolError: 'continue', context: { user: `u${i}` }, timeoutMs: 30_000 })
    const want = expected(i)
    const json = JSON.stringify(r)
    let why = null
    if (r.error) why = `${r.error.code}: ${r.error.message}`
    else if (r.data.text !== want.text) why = `text ${JSON.stringify(r.data.text)}, expected ${JSON.stringify(want.text)}`
    else if (JSON.stringify(r.data.toolCalls.map((c) => Boolean(c.isError))) !== JSON.stringify(want.calls)) why = `toolCalls ${JSON.stringify(r.data.toolCalls)}`
    else if (r.data.messages.length !== 2 * rounds(i) + 2) why = `${r.data.messages.length} messages`
    if (!why && key && json.includes(key)) why = 'the API key is in the result'
    if (why) {
      if (failures.length < 10) failures.push(`conversation ${i}: ${why}`)
    } else correct++
  }

  async function lane() {
    while (next < conversations) {
      const i = next++
      await one(i)
      done++
      if (done === warmup) baseline = rss()
      if (done % 1000 === 0) samples.push([done, mb(rss())])
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, conversations) }, lane))
  // Let the last sockets and callbacks settle before the final measurement.
  await new Promise((resolve) => setTimeout(resolve, 200))
  const final = rss()
  const summary = {
    conversations,
    concurrency,
    correct,
    failures,
    warmup,
    rssBaselineMB: mb(baseline ?? final),
    rssFinalMB: mb(final),
    rssGrowthMB: mb(final - (baseline ?? final)),
    rssSamplesMB: samples,
    heapUsedMB: mb(process.memoryUsage().heapUsed),
    durationMs: Math.round(performance.now() - started),
    build: (await import('../binding.js')).default.buildProfile(),
  }
  process.stdout.write(`SOAK ${JSON.stringify(summary)}\n`)
  // No process.exit(): the parent asserts this process ends by itself.
}

// ---------------------------------------------------------------------------------------------
// The parent: the stand-in, the child, the checks
// ---------------------------------------------------------------------------------------------

/**
 * Runs the soak; resolves with `{ summary, exitedAfterMs, code, signal, stderr, recordsChecked,
 * problems }`. `problems` lists every failed check (empty when the soak passed).
 */
export async function runSoak({ conversations = 20_000, concurrency = 64, warmup, timeoutMs = 15 * 60_000, key = 'sk-ant-soak-SECRET-5f3a9c0e1d2b4a6f' } = {}) {
  const { startMockApi, reply, text, toolUse } = await import('../stand-in/index.mjs')
  const { assertRecordsClean } = await import('./secrets.mjs')
  warmup ??= Math.min(2000, Math.floor(conversations / 4))
  const api = await startMockApi({ apiKey: key, handler: soakModel(reply, text, toolUse) })
  const problems = []
  let recordsChecked = 0
  // The stand-in keeps a record per request: check them as they come, then let them go.
  const drain = () => {
    const records = api.requests.splice(0, api.requests.length)
    try {
      recordsChecked += assertRecordsClean({ requests: records }, key)
    } catch (e) {
      if (problems.length < 20) problems.push(e.message)
    }
    for (const r of records) {
      if (r.status !== 200 && problems.length < 20) problems.push(`the stand-in answered ${r.status}: ${r.rawBody.slice(0, 200)}`)
    }
  }
  const drainer = setInterval(drain, 250)

  const proc = spawn(
    process.execPath,
    ['--expose-gc', HERE, '--child', '--url', api.url, '--conversations', String(conversations), '--concurrency', String(concurrency), '--warmup', String(warmup)],
    {
      env: { ...process.env, ANTHROPIC_API_KEY: key, ANTHROPIC_TOOL_CALLING_LOG: process.env.ANTHROPIC_TOOL_CALLING_LOG ?? 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let stdout = ''
  let stderr = ''
  let summaryAt = null
  proc.stdout.setEncoding('utf8').on('data', (s) => {
    stdout += s
    if (summaryAt === null && stdout.includes('SOAK ')) summaryAt = performance.now()
  })
  proc.stderr.setEncoding('utf8').on('data', (s) => {
    stderr += s
  })
  const killer = setTimeout(() => {
    problems.push(`the child did not finish within ${timeoutMs} ms and was killed`)
    proc.kill('SIGKILL')
  }, timeoutMs)
  // Once it has reported, it has 10 s to exit by itself.
  const exitWatch = setInterval(() => {
    if (summaryAt !== null && performance.now() - summaryAt > 10_000 && proc.exitCode === null && proc.signalCode === null) {
      problems.push('the child reported but did not exit by itself within 10 s: a handle is left open')
      proc.kill('SIGKILL')
    }
  }, 250)
  const [code, signal] = await new Promise((resolve) => proc.on('close', (c, s) => resolve([c, s])))
  const exitedAfterMs = summaryAt === null ? null : Math.round(performance.now() - summaryAt)
  clearTimeout(killer)
  clearInterval(exitWatch)
  clearInterval(drainer)
  drain()
  await api.close()

  const line = stdout.split('\n').find((l) => l.startsWith('SOAK '))
  const summary = line ? JSON.parse(line.slice(5)) : null
  if (code !== 0 || signal !== null) problems.push(`the child ended with code ${code}, signal ${signal}: ${stderr.slice(-2000)}`)
  if (!summary) problems.push(`the child reported nothing: ${stderr.slice(-2000)}`)
  else {
    if (summary.correct !== conversations) problems.push(`${conversations - summary.correct} of ${conversations} results were wrong: ${summary.failures.join('; ')}`)
    if (summary.rssGrowthMB >= MAX_GROWTH_MB) problems.push(`RSS grew ${summary.rssGrowthMB} MB after warm-up (limit ${MAX_GROWTH_MB} MB)`)
  }
  for (const [where, out] of [['stdout', stdout], ['stderr', stderr]]) {
    if (out.includes(key)) problems.push(`the API key appears in the child's ${where}`)
  }
  let expectedRequests = 0
  for (let i = 0; i < conversations; i++) expectedRequests += rounds(i) + 1
  if (recordsChecked !== expectedRequests) problems.push(`the stand-in saw ${recordsChecked} requests, expected ${expectedRequests}`)
  return { summary, exitedAfterMs, code, signal, stderrBytes: stderr.length, recordsChecked, problems }
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

function args(argv) {
  const out = {}
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].replace(/^--/, '')
    if (name === 'child') out.child = true
    else if (name === 'url') out.url = argv[++i]
    else out[name] = Number(argv[++i])
  }
  return out
}

function isMain() {
  try {
    return Boolean(process.argv[1]) && realpathSync(path.resolve(process.argv[1])) === realpathSync(HERE)
  } catch {
    return false
  }
}

if (isMain()) {
  const opts = args(process.argv.slice(2))
  if (opts.child) {
    // A deadline of its own, unref'd so it never keeps the process alive.
    setTimeout(() => {
      process.stderr.write('soak child: over its deadline\n')
      process.exit(3)
    }, 20 * 60_000).unref()
    await child(opts)
  } else {
    const result = await runSoak(opts)
    const s = result.summary
    if (s) {
      process.stdout.write(
        `soak: ${s.correct}/${s.conversations} conversations correct at concurrency ${s.concurrency} in ${(s.durationMs / 1000).toFixed(1)} s (${s.build} build); ` +
          `RSS ${s.rssBaselineMB} MB after ${s.warmup} warm-up conversations -> ${s.rssFinalMB} MB at the end: growth ${s.rssGrowthMB} MB (limit ${MAX_GROWTH_MB}); ` +
          `RSS every 1000: ${s.rssSamplesMB.map(([, m]) => m).join(' ')}; ` +
          `${result.recordsChecked} requests and ${(result.stderrBytes / 1024 / 1024).toFixed(1)} MB of the child's log checked for the key; exited by itself ${result.exitedAfterMs} ms after its report\n`,
      )
    }
    if (result.problems.length > 0) {
      process.stderr.write(`soak FAILED:\n- ${result.problems.join('\n- ')}\n`)
      process.exitCode = 1
    }
  }
}
