// Faults on the wire, over real sockets against the stand-in. Each
// fault ends the run with its documented code within a bound, and the next run on the same
// process (same connection pool) works. The secrets check rides along: the key shows up in no result and
// in no stand-in record but the auth header.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { registerTool, runWithTools } from '../index.mjs'
import { text, toolUse, reply } from '../stand-in/index.mjs'
import { KEY, startApi, at, orderSchema } from './helpers.mjs'
import { assertRecordsClean, assertNoKeyIn, assertKeyAbsent } from './secrets.mjs'

const MESSAGE = JSON.stringify({
  id: 'msg_mislabelled',
  type: 'message',
  role: 'assistant',
  model: 'claude-mock',
  content: [{ type: 'text', text: 'A valid message, labelled text/plain.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
})

let nextCalls = 0
registerTool({
  definition: { name: 'wf_order', input_schema: orderSchema },
  execute: async ({ orderId }) => {
    nextCalls++
    return { orderId, status: 'shipped' }
  },
})

/** Runs `fn`, returning its result and how long it took (ms). */
async function timed(fn) {
  const started = performance.now()
  const result = await fn()
  return [result, performance.now() - started]
}

/** A whole conversation with a tool round, on the same process and pool, right after a fault. */
async function assertNextRunWorks(api, why) {
  api.reset()
  const before = nextCalls
  api.script(reply([toolUse('wf_order', { orderId: '7' })]), reply([text('Order 7 has shipped.')]))
  const [r, ms] = await timed(() => runWithTools('status of 7?', at(api, { tools: ['wf_order'], timeoutMs: 5000 })))
  assert.equal(r.error, null, `after ${why}: ${r.error && r.error.message}`)
  assert.equal(r.data.text, 'Order 7 has shipped.')
  assert.equal(nextCalls, before + 1)
  assert.ok(ms < 3000, `after ${why} the next run took ${ms} ms`)
  assertRecordsClean(api)
}

// [name, steps, options, code, attempts, bound (ms), more checks]
const FAULTS = [
  ['headers that never come', [{ fault: 'hang' }, { fault: 'hang' }], { timeoutMs: 300, maxRetries: 1 }, 'network_error', 2, 3000, (r, ms) => {
    assert.match(r.error.message, /timed out after 300 ms \(timeoutMs\)/)
    assert.ok(ms >= 600, `two attempts of 300 ms took only ${ms} ms`)
  }],
  ['a body that stalls mid-way', [{ fault: 'stall-body' }], { timeoutMs: 400, maxRetries: 0 }, 'network_error', 1, 2500, (r, ms) => {
    assert.match(r.error.message, /timed out after 400 ms \(timeoutMs\)/)
    assert.ok(ms >= 390, `timed out early: ${ms} ms`)
  }],
  ['a body that stalls mid-way, retried', [{ fault: 'stall-body' }, { fault: 'stall-body' }], { timeoutMs: 250, maxRetries: 1 }, 'network_error', 2, 3000, (r) => {
    assert.match(r.error.message, /timed out after 250 ms/)
  }],
  ['a truncated body', [{ fault: 'truncated' }, { fault: 'truncated' }], { maxRetries: 1 }, 'network_error', 2, 3000, (r) => {
    assert.match(r.error.message, /end of file before message length reached|body/)
  }],
  ['HTML with status 200', [{ fault: 'html' }], {}, 'unknown_error', 1, 1000, (r) => {
    assert.equal(r.error.status, 200)
    assert.match(r.error.message, /not a Messages API response.*DOCTYPE html/)
  }],
  ['a wrong content type (text/plain, not JSON)', [{ body: 'upstream OK', headers: { 'content-type': 'text/plain' } }], {}, 'unknown_error', 1, 1000, (r) => {
    assert.equal(r.error.status, 200)
    assert.match(r.error.message, /not a Messages API response.*upstream OK/)
  }],
  ['a wrong content type (octet-stream, half a message)', [{ body: MESSAGE.slice(0, 40), headers: { 'content-type': 'application/octet-stream' } }], {}, 'unknown_error', 1, 1000, null],
  ['JSON that breaks off', [{ fault: 'badjson' }], {}, 'unknown_error', 1, 1000, null],
  ['JSON of the wrong shape', [{ fault: 'wrong-shape' }], {}, 'unknown_error', 1, 1000, null],
  ['a 50 MB body with content-length', [{ fault: 'huge' }], {}, 'unknown_error', 1, 2000, (r) => {
    assert.match(r.error.message, /over 32 MiB/)
  }],
  ['a 50 MB chunked body (no content-length)', [{ fault: 'huge', chunked: true }], {}, 'unknown_error', 1, 5000, (r) => {
    assert.match(r.error.message, /over 32 MiB/)
  }],
]

for (const [name, steps, options, code, attempts, bound, check] of FAULTS) {
  test(`${name}: ${code} within ${bound} ms, then the next run works`, async (t) => {
    const api = await startApi(t)
    api.script(...steps)
    const [r, ms] = await timed(() => runWithTools('hi', at(api, { tools: ['wf_order'], ...options })))
    assert.equal(r.data, null)
    assert.equal(r.error.code, code, r.error.message)
    assert.equal(api.requests.length, attempts, 'attempts')
    assert.deepEqual(api.requests.map((q) => q.retryCount), [0, 1, 2].slice(0, attempts))
    assert.ok(ms < bound, `took ${ms} ms`)
    if (check) check(r, ms)
    assertNoKeyIn('the result', r)
    assertRecordsClean(api)
    await assertNextRunWorks(api, name)
  })
}

test('a valid message under a wrong content type is read by its body, not its label', async (t) => {
  const api = await startApi(t)
  api.script({ body: MESSAGE, headers: { 'content-type': 'text/plain' } })
  const r = await runWithTools('hi', at(api, { tools: [] }))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.equal(r.data.text, 'A valid message, labelled text/plain.')
  assertRecordsClean(api)
})

test('a fault after a tool round: the tool is not run again, the run ends with the code', async (t) => {
  const api = await startApi(t)
  const before = nextCalls
  api.script(reply([toolUse('wf_order', { orderId: '1' })]), { fault: 'stall-body' }, { fault: 'truncated' })
  const [r, ms] = await timed(() => runWithTools('hi', at(api, { tools: ['wf_order'], timeoutMs: 300, maxRetries: 1 })))
  assert.equal(r.error.code, 'network_error')
  assert.equal(nextCalls, before + 1)
  assert.equal(r.error.toolCalls.length, 1)
  assert.equal(api.requests.length, 3)
  assert.ok(ms < 3000, `took ${ms} ms`)
  assertNoKeyIn('the result', r)
  assertRecordsClean(api)
  await assertNextRunWorks(api, 'a fault after a tool round')
})

test('a reset during a retry wait: the pooled connection is gone, the retry opens a new one and succeeds', async (t) => {
  const api = await startApi(t)
  const sockets = new Set()
  api.server.on('connection', (s) => sockets.add(s))
  // Warm the pool, so the retry would reuse a keep-alive connection if it could.
  await assertNextRunWorks(api, 'warming up')
  api.reset()
  let resetAt = 0
  api.script(
    () => {
      setTimeout(() => {
        resetAt = performance.now()
        for (const s of sockets) s.resetAndDestroy() // TCP RST on every open connection
      }, 150).unref()
      return { status: 529, headers: { 'retry-after-ms': '500' } }
    },
    reply([text('back again')]),
  )
  const [r, ms] = await timed(() => runWithTools('hi', at(api, { tools: [] })))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.equal(r.data.text, 'back again')
  assert.deepEqual(api.requests.map((q) => q.retryCount), [0, 1])
  assert.ok(resetAt > 0 && api.requests[1].receivedAt > resetAt, 'the retry came after the reset')
  assert.ok(ms < 3000, `took ${ms} ms`)
  assertRecordsClean(api)
  await assertNextRunWorks(api, 'a reset during a retry wait')
})

test('the server goes away during a retry wait: network_error, bounded, and a new server works', async (t) => {
  const api = await startApi(t)
  await assertNextRunWorks(api, 'warming up')
  api.reset()
  api.script(() => {
    setTimeout(() => api.close(), 150).unref()
    return { status: 529, headers: { 'retry-after-ms': '500' } }
  })
  const [r, ms] = await timed(() => runWithTools('hi', at(api, { tools: [] })))
  assert.equal(r.error.code, 'network_error', r.error.message)
  assert.match(r.error.message, /127\.0\.0\.1/)
  assert.equal(api.requests.length, 1)
  // 0.5 s hint, a refused retry, about 1 s of backoff, a refused retry.
  assert.ok(ms < 4000, `took ${ms} ms`)
  assertNoKeyIn('the result', r)
  assertRecordsClean(api)
  const fresh = await startApi(t)
  await assertNextRunWorks(fresh, 'the server went away')
})

test('many runs hit faults at once; every one ends with its code and the pool still works', async (t) => {
  const api = await startApi(t)
  const kinds = [
    [{ fault: 'hang' }, 'network_error'],
    [{ fault: 'stall-body' }, 'network_error'],
    [{ fault: 'truncated' }, 'network_error'],
    [{ fault: 'reset' }, 'network_error'],
    [{ fault: 'html' }, 'unknown_error'],
    [{ fault: 'huge' }, 'unknown_error'],
    [{ status: 529, headers: { 'x-should-retry': 'false' } }, 'overloaded'],
    [reply([text('fine')]), null],
  ]
  // Each run names its fault in the prompt; the handler answers by it.
  api.handler = (body) => kinds[Number(body.messages[0].content.split(' ')[1])][0]
  const runs = Array.from({ length: 48 }, (_, i) => runWithTools(`fault ${i % kinds.length}`, at(api, { tools: [], timeoutMs: 400, maxRetries: 0 })))
  const [results, ms] = await timed(() => Promise.all(runs))
  results.forEach((r, i) => {
    const expected = kinds[i % kinds.length][1]
    if (expected === null) assert.equal(r.error, null, r.error && r.error.message)
    else assert.equal(r.error && r.error.code, expected, `run ${i}`)
  })
  assert.ok(ms < 5000, `took ${ms} ms`)
  assertNoKeyIn('a result', results)
  assertRecordsClean(api)
  api.handler = null
  await assertNextRunWorks(api, 'many faults at once')
})

test('with ANTHROPIC_TOOL_CALLING_LOG=debug, no fault puts the key (or a wrong one) in any output', async () => {
  const { spawn } = await import('node:child_process')
  const script = new URL('./fixtures/faults-logged.mjs', import.meta.url)
  const child = spawn(process.execPath, [script.pathname], {
    env: { ...process.env, ANTHROPIC_API_KEY: KEY, ANTHROPIC_TOOL_CALLING_LOG: 'debug' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (s) => (stdout += s))
  child.stderr.setEncoding('utf8').on('data', (s) => (stderr += s))
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const [code, signal] = await new Promise((resolve) => child.on('close', (c, s) => resolve([c, s])))
  clearTimeout(killer)
  assert.equal(signal, null, `killed: ${stderr.slice(-1000)}`)
  assert.equal(code, 0, stderr.slice(-1000))
  const codes = stdout.trim().split('\n').map((l) => JSON.parse(l)).map((r) => (r.error ? r.error.code : 'ok'))
  assert.deepEqual(codes, ['ok', 'network_error', 'network_error', 'unknown_error', 'unknown_error', 'unknown_error', 'rate_limited', 'authentication_error', 'network_error'])
  assert.ok(stderr.length > 0, 'ANTHROPIC_TOOL_CALLING_LOG=debug printed nothing')
  assertKeyAbsent(stdout, "the child's stdout")
  assertKeyAbsent(stderr, "the child's stderr (its log)")
})
