// streamWithTools against the strict stand-in streaming SSE — parts in order and while
// the reply is still arriving, the same result as runWithTools, thinking, SSE error events,
// abort, unread and abandoned streams, single consumer, the UI message stream read by the AI
// SDK's own reader, fromUIMessages round trip, the text stream, and batching.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { readUIMessageStream, uiMessageChunkSchema, parseJsonEventStream } from 'ai'
import { registerTool, runWithTools, streamWithTools, fromUIMessages } from '../index.mjs'
import { reply, text, toolUse, thinking } from '../stand-in/index.mjs'
import { KEY, at, startApi, orderTool, toolResults, assertNoSecret } from './helpers.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const LONG = 'The order 4821 left the warehouse on Monday and is on its way to you now. '.repeat(3)

/** Every part of a stream, each with the time it arrived. */
async function collect(stream, onPart = () => {}) {
  const parts = []
  for await (const part of stream) {
    parts.push(part)
    onPart(part, parts)
  }
  return parts
}
const join = (parts, type, key = 'text') => parts.filter((p) => p.type === type).map((p) => p[key]).join('')
/** Part types with runs of the same type collapsed. */
const shape = (parts) => parts.map((p) => p.type).filter((t, i, a) => i === 0 || a[i - 1] !== t)
const withoutDuration = (calls) => calls.map(({ durationMs, ...rest }) => rest)

// --- 1. order, and parts before the reply is complete ---------------------------------------------

test('parts come in order, and the first text delta arrives while the reply is still being sent', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('stream_order_1')
  api.script(
    { ...reply([text('Let me check that order.'), toolUse('stream_order_1', { orderId: '4821' }, 'toolu_s1a')]), streamDelayMs: 5 },
    { ...reply([text(LONG)]), streamDelayMs: 20 },
  )
  let eventsAtFirstFinalText = null
  let stepsSeen = 0
  const stream = streamWithTools('Where is order 4821?', at(api, { tools: ['stream_order_1'] }))
  const parts = await collect(stream, (part) => {
    if (part.type === 'start-step') stepsSeen++
    if (part.type === 'text-delta' && stepsSeen === 2 && eventsAtFirstFinalText === null) {
      eventsAtFirstFinalText = [...(api.requests[1]?.sseEvents ?? [])]
    }
  })
  assert.deepEqual(shape(parts), [
    'start-step', 'text-delta', 'tool-input-start', 'tool-input-delta', 'tool-call', 'tool-result', 'finish-step',
    'start-step', 'text-delta', 'finish-step', 'finish',
  ])
  assert.deepEqual(parts.filter((p) => p.type === 'start-step').map((p) => p.step), [1, 2].map((n) => parts.find((p) => p.type === 'start-step').step + n - 1))
  assert.ok(eventsAtFirstFinalText !== null, 'a text delta of the second reply was received')
  assert.ok(eventsAtFirstFinalText.includes('content_block_delta'), `sent so far: ${eventsAtFirstFinalText}`)
  assert.ok(!eventsAtFirstFinalText.includes('message_stop') && !eventsAtFirstFinalText.includes('message_delta'),
    `the first text part came only after the whole reply was sent: ${eventsAtFirstFinalText}`)

  const result = parts.at(-1).result
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(await stream.result, result)
  assert.equal(calls.length, 1)
  // Text deltas of the last step joined are data.text; all text deltas are all the text written.
  const lastStart = parts.findLastIndex((p) => p.type === 'start-step')
  assert.equal(join(parts.slice(lastStart), 'text-delta'), result.data.text)
  assert.equal(result.data.text, LONG)
  assert.equal(join(parts, 'text-delta'), 'Let me check that order.' + LONG)
  // Tool input deltas joined parse to the input.
  const start = parts.find((p) => p.type === 'tool-input-start')
  assert.deepEqual(start, { type: 'tool-input-start', toolUseId: 'toolu_s1a', toolName: 'stream_order_1' })
  const deltas = parts.filter((p) => p.type === 'tool-input-delta')
  assert.ok(deltas.every((d) => d.toolUseId === 'toolu_s1a'))
  assert.deepEqual(JSON.parse(deltas.map((d) => d.delta).join('')), { orderId: '4821' })
  const call = parts.find((p) => p.type === 'tool-call')
  assert.deepEqual(call, { type: 'tool-call', toolUseId: 'toolu_s1a', toolName: 'stream_order_1', input: { orderId: '4821' } })
  const res = parts.find((p) => p.type === 'tool-result')
  assert.equal(res.toolUseId, 'toolu_s1a')
  assert.deepEqual(res.output, { orderId: '4821', status: 'shipped' })
  assert.equal(typeof res.durationMs, 'number')
  const steps = parts.filter((p) => p.type === 'finish-step')
  assert.deepEqual(steps.map((s) => s.stopReason), ['tool_use', 'end_turn'])
  assert.equal(steps[0].toolCalls.length, 1)
  assert.deepEqual(steps[0].toolCalls[0].output, { orderId: '4821', status: 'shipped' })
  assert.deepEqual(steps[1].toolCalls, [])
  assert.ok(api.requests.every((r) => r.stream === true && r.body.stream === true))
})

// --- 2. same result as runWithTools ---------------------------------------------------------------

test('the streamed result equals what runWithTools resolves with, and the requests differ only by stream: true', async (t) => {
  const api = await startApi(t)
  orderTool('stream_same_2')
  const steps = () => [
    reply([text('Checking.'), toolUse('stream_same_2', { orderId: '4821' }, 'toolu_same1'), toolUse('stream_same_2', { orderId: '77' }, 'toolu_same2')],
      { usage: { input_tokens: 31, output_tokens: 17 } }),
    reply([text('Both have shipped: 4821 and 77.')], { usage: { input_tokens: 52, output_tokens: 9 } }),
  ]
  const options = at(api, { tools: ['stream_same_2'], system: 'Be brief.', maxTokens: 512, apiVersion: '2023-06-01', temperature: 0.5 })
  api.script(...steps())
  const plain = await runWithTools('Where are my orders?', options)
  api.script(...steps())
  const stream = streamWithTools('Where are my orders?', options)
  for await (const _ of stream);
  const streamed = await stream.result
  assert.equal(plain.error, null, JSON.stringify(plain.error))
  assert.equal(streamed.error, null, JSON.stringify(streamed.error))
  assert.equal(streamed.data.text, plain.data.text)
  assert.equal(streamed.data.reasoning, plain.data.reasoning)
  assert.deepEqual(withoutDuration(streamed.data.toolCalls), withoutDuration(plain.data.toolCalls))
  assert.equal(streamed.data.stopReason, plain.data.stopReason)
  assert.deepEqual(streamed.data.usage, plain.data.usage)
  assert.deepEqual(streamed.data.usage, { inputTokens: 83, outputTokens: 26, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 })
  assert.equal(JSON.stringify(streamed.data.messages), JSON.stringify(plain.data.messages))
  assert.deepEqual(Object.keys(streamed.data).sort(), Object.keys(plain.data).sort())

  assert.equal(api.requests.length, 4)
  for (let i = 0; i < 2; i++) {
    const a = api.requests[i]
    const b = api.requests[i + 2]
    assert.equal(a.stream, undefined)
    assert.equal(b.stream, true)
    assert.ok(!Object.hasOwn(a.body, 'stream'), 'runWithTools does not send stream')
    assert.equal(b.body.stream, true)
    // Each run keeps its own API thread: a continue names that run's own reply.
    const { stream: _s, thread: bThread, ...rest } = b.body
    const { thread: aThread, ...aRest } = a.body
    assert.equal(JSON.stringify(rest), JSON.stringify(aRest), `request ${i} differs by more than stream: true`)
    assert.equal(aThread.type, i === 0 ? 'create' : 'continue')
    assert.equal(bThread.type, aThread.type)
    if (i === 1) {
      assert.equal(aThread.previous_message_id, api.requests[0].reply.id)
      assert.equal(bThread.previous_message_id, api.requests[2].reply.id)
    }
  }
})

// --- 3. thinking ----------------------------------------------------------------------------------

test('reasoning deltas joined are data.reasoning; the signed thinking block goes back unchanged', async (t) => {
  const api = await startApi(t)
  orderTool('stream_think_3')
  const first = thinking('The user wants order 4821. I should look it up with the tool before answering.')
  const second = thinking('The tool says shipped. Answer briefly.')
  api.script(
    reply([first, toolUse('stream_think_3', { orderId: '4821' }, 'toolu_think1')]),
    reply([second, text('It has shipped.')]),
  )
  // The whole history on the wire (without the API's thread, which would hold the thinking block).
  const stream = streamWithTools('Where is 4821?', at(api, { tools: ['stream_think_3'], thinking: { type: 'enabled', budget_tokens: 1024 }, maxTokens: 2048, apiThreads: false }))
  const parts = await collect(stream)
  const result = await stream.result
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(api.requests.length, 2)
  assert.equal(api.requests[1].status, 200)
  // The second request carries the first reply's thinking block exactly as the stand-in sent it.
  const assistant = api.requests[1].body.messages[1]
  assert.equal(assistant.role, 'assistant')
  assert.deepEqual(assistant.content[0], first)
  assert.deepEqual(Object.keys(assistant.content[0]), ['type', 'thinking', 'signature'])
  assert.equal(result.data.reasoning, `${first.thinking}\n\n${second.thinking}`)
  // Parts carry the thinking text only (no signature). All reasoning deltas joined are
  // data.reasoning: a later reply's thinking starts with the blank line that joins it to the earlier.
  const perStep = []
  for (const part of parts) {
    if (part.type === 'start-step') perStep.push('')
    if (part.type === 'reasoning-delta') perStep[perStep.length - 1] += part.text
  }
  assert.deepEqual(perStep, [first.thinking, `\n\n${second.thinking}`])
  assert.equal(perStep.join(''), result.data.reasoning)
  assert.ok(parts.filter((p) => p.type === 'reasoning-delta').length >= 2, 'thinking is streamed in deltas')
  assert.ok(!JSON.stringify(parts.filter((p) => p.type !== 'finish')).includes(first.signature), 'the signature is not a part')
  assert.equal(result.data.text, 'It has shipped.')
})

// --- 4. SSE error events ---------------------------------------------------------------------------

test('an SSE overloaded error before any part reached JS is retried; the run succeeds', async (t) => {
  const api = await startApi(t)
  api.script(
    { ...reply([text('This never arrives.')]), sseError: { type: 'overloaded_error' }, sseErrorAfter: 1 },
    reply([text('Second time lucky.')]),
  )
  const stream = streamWithTools('hi', at(api, { maxRetries: 2 }))
  const parts = await collect(stream)
  const result = await stream.result
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.deepEqual(api.requests[0].sseEvents, ['message_start', 'error'])
  assert.equal(api.requests.length, 2)
  assert.equal(api.requests[0].retryCount, 0)
  assert.equal(api.requests[1].retryCount, 1)
  assert.equal(api.requests[1].headers['x-stainless-retry-count'], '1')
  assert.equal(result.data.text, 'Second time lucky.')
  assert.equal(join(parts, 'text-delta'), 'Second time lucky.')
  assert.equal(parts.filter((p) => p.type === 'start-step').length, 1, 'the failed attempt shows no step')
})

test('an SSE error after text deltas were shown is not retried: the run ends overloaded', async (t) => {
  const api = await startApi(t)
  // message_start, ping, content_block_start, then deltas; the error after three of them.
  api.script(
    { ...reply([text('Partial answer that will be interrupted somewhere.')]), streamDelayMs: 30, sseError: { type: 'overloaded_error' }, sseErrorAfter: 6 },
    reply([text('A retry would repeat the parts.')]),
  )
  const stream = streamWithTools('hi', at(api, { maxRetries: 2 }))
  const parts = await collect(stream)
  const result = await stream.result
  assert.ok(parts.some((p) => p.type === 'text-delta'), 'a text delta reached JS before the error')
  assert.ok(api.requests[0].sseEvents.includes('content_block_delta'))
  assert.equal(api.requests[0].sseEvents.at(-1), 'error')
  assert.equal(result.data, null)
  assert.equal(result.error.code, 'overloaded')
  const finish = parts.at(-1)
  assert.equal(finish.type, 'finish')
  assert.equal(finish.result.error.code, 'overloaded')
  await sleep(100)
  assert.equal(api.requests.length, 1, 'not retried')
})

test('an unknown delta type ends the run with unknown_error naming it', async (t) => {
  const api = await startApi(t)
  api.script({ ...reply([text('Hello there.')]), unknownDelta: 'x_delta' }, reply([text('unused')]), reply([text('unused')]))
  const stream = streamWithTools('hi', at(api))
  const parts = await collect(stream)
  const result = await stream.result
  assert.equal(result.data, null)
  assert.equal(result.error.code, 'unknown_error')
  assert.match(result.error.message, /x_delta/)
  assert.equal(parts.at(-1).type, 'finish')
  assert.equal(parts.at(-1).result.error.code, 'unknown_error')
  assert.equal(api.requests.length, 1, 'a reply that cannot be assembled is not retried')
})

// --- 5. abort mid-stream ---------------------------------------------------------------------------

test('aborting after the first text part ends the stream with aborted and closes the connection', async (t) => {
  const api = await startApi(t)
  api.script({ ...reply([text(LONG)]), streamDelayMs: 20 }, reply([text('never asked for')]))
  const controller = new AbortController()
  const stream = streamWithTools('hi', at(api, { signal: controller.signal }))
  const parts = await collect(stream, (part) => {
    if (part.type === 'text-delta' && !controller.signal.aborted) controller.abort()
  })
  const finish = parts.at(-1)
  assert.equal(finish.type, 'finish')
  assert.equal(finish.result.data, null)
  assert.equal(finish.result.error.code, 'aborted')
  assert.equal((await stream.result).error.code, 'aborted')
  await api.waitFor(() => api.requests[0].clientClosed === true, 3000)
  assert.ok(!api.requests[0].sseEvents.includes('message_stop'))
  await sleep(150)
  assert.equal(api.requests.length, 1, 'no further request')
})

// --- 6. unread and abandoned streams ---------------------------------------------------------------

test('a stream nobody reads still runs to the end and sends all its requests', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('stream_unread_6')
  api.script(
    reply([toolUse('stream_unread_6', { orderId: '1' }, 'toolu_unread1')]),
    reply([toolUse('stream_unread_6', { orderId: '2' }, 'toolu_unread2')]),
    reply([text('Both shipped.')]),
  )
  const stream = streamWithTools('go', at(api, { tools: ['stream_unread_6'] }))
  const result = await stream.result
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(result.data.text, 'Both shipped.')
  assert.equal(api.requests.length, 3)
  assert.deepEqual(calls.map((c) => c.input.orderId), ['1', '2'])
})

test('breaking out of for-await early: the run goes on and result resolves', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('stream_break_6')
  api.script(
    { ...reply([text('Looking.'), toolUse('stream_break_6', { orderId: '9' }, 'toolu_break1')]), streamDelayMs: 10 },
    { ...reply([text('Order 9 shipped.')]), streamDelayMs: 10 },
  )
  const stream = streamWithTools('go', at(api, { tools: ['stream_break_6'] }))
  let seen = 0
  for await (const part of stream) {
    seen++
    if (part.type === 'text-delta') break
  }
  assert.ok(seen >= 1)
  const result = await stream.result
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(result.data.text, 'Order 9 shipped.')
  assert.equal(api.requests.length, 2)
  assert.equal(calls.length, 1)
})

// --- 7. single consumer ---------------------------------------------------------------------------

test('single consumer with a real run: a second iteration and a Response after iterating are TypeErrors', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('Once.')]))
  const stream = streamWithTools('hi', at(api))
  const it = stream[Symbol.asyncIterator]()
  assert.throws(() => stream[Symbol.asyncIterator](), TypeError)
  assert.throws(() => stream.toUIMessageStreamResponse(), TypeError)
  assert.throws(() => stream.toTextStreamResponse(), TypeError)
  const parts = []
  for (let r = await it.next(); !r.done; r = await it.next()) parts.push(r.value)
  assert.equal(parts.at(-1).type, 'finish')
  assert.equal(join(parts, 'text-delta'), 'Once.')
  assert.throws(() => stream.toUIMessageStreamResponse(), TypeError)
  await assert.rejects(async () => {
    for await (const _ of stream);
  }, TypeError)
  assert.equal((await stream.result).data.text, 'Once.')
})

// --- 8, 9. the UI message stream of a real run, and fromUIMessages ----------------------------------

const DEV_SECRET = 'db-password=hunter2-PRIVATE-7731'
let uiTools = false
function registerUiTools() {
  if (uiTools) return
  uiTools = true
  orderTool('ui_order')
  registerTool({
    definition: { name: 'ui_fail', description: 'Always fails', input_schema: { type: 'object', properties: { orderId: { type: 'string' } } } },
    execute: async () => {
      throw new Error(`connection refused: ${DEV_SECRET}`)
    },
  })
}

/** The SSE body as `data:` payloads. */
function dataEvents(body) {
  assert.ok(body.endsWith('\n\n'))
  const events = body.slice(0, -2).split('\n\n')
  for (const e of events) assert.match(e, /^data: /)
  return events.map((e) => e.slice('data: '.length))
}

async function uiMessageOf(bodyText) {
  const errors = []
  const chunks = parseJsonEventStream({ stream: new Response(bodyText).body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(parsed, controller) {
        if (!parsed.success) throw parsed.error
        controller.enqueue(parsed.value)
      },
    }),
  )
  let last
  for await (const message of readUIMessageStream({ stream: chunks, onError: (e) => errors.push(e), terminateOnError: true })) last = message
  return { message: last, errors }
}

/** A real run's UI message stream: its body, the UIMessage the AI SDK builds, the requests seen. */
async function uiRun(t) {
  registerUiTools()
  const api = await startApi(t)
  api.script(
    reply([text('Let me look.'), toolUse('ui_order', { orderId: '4821' }, 'toolu_ui_ok'), toolUse('ui_fail', { orderId: '13' }, 'toolu_ui_bad')]),
    reply([text('Order 4821 has shipped; 13 could not be checked.')]),
  )
  const stream = streamWithTools('Where are 4821 and 13?', at(api, { tools: ['ui_order', 'ui_fail'], onToolError: 'continue' }))
  const res = stream.toUIMessageStreamResponse()
  const body = await res.text()
  const result = await stream.result
  return { api, res, body, result }
}

test('the UI message stream of a real run, read by the AI SDK: text, a tool output, a tool error without the developer message', async (t) => {
  const { api, res, body, result } = await uiRun(t)
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(res.headers.get('x-vercel-ai-ui-message-stream'), 'v1')
  assert.match(res.headers.get('content-type'), /^text\/event-stream/)
  assert.ok(body.endsWith('data: [DONE]\n\n'), body.slice(-80))
  assert.ok(!body.includes(DEV_SECRET), 'the developer error message reached the browser')
  assert.ok(!body.includes('hunter2'))
  assertNoSecret(body)

  const events = dataEvents(body)
  assert.equal(events.at(-1), '[DONE]')
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e))
  const schema = uiMessageChunkSchema()
  for (const chunk of chunks) assert.ok((await schema.validate(chunk)).success, JSON.stringify(chunk))
  assert.equal(chunks[0].type, 'start')
  assert.equal(chunks.at(-1).type, 'finish')

  const { message, errors } = await uiMessageOf(body)
  assert.deepEqual(errors, [])
  assert.equal(message.role, 'assistant')
  const texts = message.parts.filter((p) => p.type === 'text').map((p) => p.text)
  assert.deepEqual(texts, ['Let me look.', 'Order 4821 has shipped; 13 could not be checked.'])
  const ok = message.parts.find((p) => p.type === 'tool-ui_order')
  assert.ok(ok, JSON.stringify(message.parts))
  assert.equal(ok.state, 'output-available')
  assert.equal(ok.toolCallId, 'toolu_ui_ok')
  assert.deepEqual(ok.input, { orderId: '4821' })
  assert.deepEqual(ok.output, { orderId: '4821', status: 'shipped' })
  const bad = message.parts.find((p) => p.type === 'tool-ui_fail')
  assert.ok(bad, JSON.stringify(message.parts))
  assert.equal(bad.state, 'output-error')
  assert.deepEqual(bad.input, { orderId: '13' })
  // The errorText is exactly what the model was told.
  const modelSaw = toolResults(api, 1).find((b) => b.tool_use_id === 'toolu_ui_bad')
  assert.equal(modelSaw.is_error, true)
  assert.equal(bad.errorText, typeof modelSaw.content === 'string' ? modelSaw.content : modelSaw.content.map((b) => b.text).join(''))
  assert.ok(!bad.errorText.includes(DEV_SECRET))
  // The developer still has the message on the server side.
  const failed = result.data.toolCalls.find((c) => c.toolUseId === 'toolu_ui_bad')
  assert.equal(failed.isError, true)
  assert.match(String(failed.error), /hunter2-PRIVATE/, 'the developer message is kept on the server side, so the body check above means something')
})

test('fromUIMessages round trip: the assembled UIMessage plus a new question is accepted and the model sees the earlier call', async (t) => {
  const { message } = await uiMessageOf((await uiRun(t)).body)
  const api = await startApi(t)
  api.script(reply([text('You are welcome.')]))
  const params = fromUIMessages([
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Where are 4821 and 13?' }] },
    message,
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Thanks! Anything else?' }] },
  ])
  const r = await runWithTools(params, at(api, { tools: ['ui_order', 'ui_fail'] }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(api.requests.length, 1)
  assert.equal(api.requests[0].status, 200)
  const sent = api.requests[0].body.messages
  const blocks = sent.flatMap((m) => (Array.isArray(m.content) ? m.content.map((b) => ({ role: m.role, ...b })) : []))
  const use = blocks.find((b) => b.type === 'tool_use' && b.id === 'toolu_ui_ok')
  assert.ok(use, JSON.stringify(sent))
  assert.equal(use.role, 'assistant')
  assert.equal(use.name, 'ui_order')
  assert.deepEqual(use.input, { orderId: '4821' })
  const result = blocks.find((b) => b.type === 'tool_result' && b.tool_use_id === 'toolu_ui_ok')
  assert.ok(result)
  assert.equal(result.role, 'user')
  assert.deepEqual(JSON.parse(result.content), { orderId: '4821', status: 'shipped' })
  const failed = blocks.find((b) => b.type === 'tool_result' && b.tool_use_id === 'toolu_ui_bad')
  assert.equal(failed.is_error, true)
  assert.ok(!JSON.stringify(sent).includes(DEV_SECRET))
  const last = sent.at(-1)
  assert.equal(last.role, 'user')
  assert.match(JSON.stringify(last.content), /Thanks! Anything else\?/)
})

// --- 10. the text stream --------------------------------------------------------------------------

test('toTextStreamResponse: the body is the reply text, text/plain; charset=utf-8', async (t) => {
  const api = await startApi(t)
  const words = `Plain text, streamed: ${LONG} ünïcödé ✓ 🚚`
  api.script({ ...reply([text(words)]), streamDelayMs: 2 })
  const stream = streamWithTools('hi', at(api))
  const res = stream.toTextStreamResponse()
  assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8')
  const body = await res.text()
  const result = await stream.result
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(result.data.text, words)
  assert.equal(body, result.data.text)
})

// --- 11. batching ---------------------------------------------------------------------------------

/** A bare SSE server: one reply of one text block written as one-character deltas. */
async function startCharServer(t, reply) {
  const requests = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', async () => {
      requests.push(JSON.parse(raw))
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': 'req_chars' })
      const frame = (name, data) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
      const events = [
        ['message_start', { type: 'message_start', message: { id: 'msg_chars', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }],
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
        ...Array.from(reply, (ch) => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ch } }]),
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 400 } }],
        ['message_stop', { type: 'message_stop' }],
      ]
      for (const [name, data] of events) {
        res.write(frame(name, data))
        await new Promise((r) => setImmediate(r))
      }
      res.end()
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => new Promise((r) => server.close(r)))
  return { url: `http://127.0.0.1:${server.address().port}`, requests }
}

test('batching: 400 one-character deltas reach JS as far fewer text-delta parts that join to the text', async (t) => {
  const chars = Array.from({ length: 400 }, (_, i) => 'abcdefghijklmnopqrstuvwxyz '[i % 27]).join('')
  const server = await startCharServer(t, chars)
  const stream = streamWithTools('hi', { apiKey: KEY, baseURL: server.url, maxRetries: 0 })
  const parts = await collect(stream)
  const result = await stream.result
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(server.requests.length, 1)
  assert.equal(server.requests[0].stream, true)
  assert.equal(result.data.text, chars)
  const deltas = parts.filter((p) => p.type === 'text-delta')
  assert.equal(deltas.map((p) => p.text).join(''), chars)
  assert.ok(deltas.length <= 100, `${deltas.length} text-delta parts for 400 deltas: not batched`)
  // Adjacent deltas are joined: no two text-delta parts in a row inside one batch would be left split.
  assert.ok(deltas.some((p) => p.text.length > 1))
})
