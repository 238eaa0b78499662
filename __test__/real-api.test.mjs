// The replies the real API sends (stop reasons, server tools, empty replies), a history
// kept byte for byte, exact cancellation, and credentials that go to baseURL and nowhere else.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { registerTool, runWithTools } from '../index.mjs'
import { reply, text, toolUse, serverToolUse, webSearchResult, startMockApi } from '../stand-in/index.mjs'
import { KEY, at, startApi, orderTool, toolResults, assertNoSecret } from './helpers.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
/** Keeps the JS thread busy, as a big render or a sync JSON.parse would. */
function busy(ms) {
  const end = performance.now() + ms
  while (performance.now() < end);
}
/** A step that answers, then keeps the JS thread busy right after the answer went out: the
 * engine receives it and queues its tool calls while JS cannot dispatch them. */
const answerThenBusy = (step, ms, then = () => {}) => () => {
  setImmediate(() => {
    busy(ms)
    then()
  })
  return step
}
const WEB_SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }

// --- exact cancellation ------------------------------------------------------------------------

test('a tool call that reaches JS after its toolTimeoutMs ran out is never started', async (t) => {
  const api = await startApi(t)
  let ran = 0
  registerTool({ definition: { name: 'late_start', input_schema: { type: 'object' } }, execute: () => { ran++; return 'ran' } })
  api.script(answerThenBusy(reply([toolUse('late_start', {})]), 400), reply([text('Sorry, that timed out.')]))
  const r = await runWithTools('x', at(api, { tools: ['late_start'], toolTimeoutMs: 100, onToolError: 'continue' }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  await sleep(50)
  assert.equal(ran, 0, 'the model was told the call was stopped: it must not run after that')
  assert.match(toolResults(api, 1)[0].content, /did not finish within 100 ms/)
})

test('a tool call that reaches JS after the run was aborted is never started', async (t) => {
  const api = await startApi(t)
  let ran = 0
  let contextSeen
  const controller = new AbortController()
  registerTool({
    definition: { name: 'after_abort', input_schema: { type: 'object' } },
    execute: (_input, ctx) => { ran++; contextSeen = ctx.context; return 'ran' },
  })
  api.script(answerThenBusy(reply([toolUse('after_abort', {})]), 200, () => controller.abort()))
  const r = await runWithTools('x', at(api, { tools: ['after_abort'], signal: controller.signal, context: { user: 'u1' } }))
  assert.equal(r.error.code, 'aborted')
  await sleep(50)
  assert.equal(ran, 0, 'an aborted run starts nothing')
  assert.equal(contextSeen, undefined)
  assert.deepEqual(r.error.toolCalls ?? [], [], 'a call that never began is not reported as made')
})

test('toolTimeoutMs mid-run: a late tool has its ctx.signal aborted while the run goes on', async (t) => {
  const api = await startApi(t)
  let signal
  registerTool({
    definition: { name: 'never_settles_mid', input_schema: { type: 'object' } },
    execute: (_input, ctx) => { signal = ctx.signal; return new Promise(() => {}) },
  })
  api.script(reply([toolUse('never_settles_mid', {})]), { fault: 'hang' })
  const controller = new AbortController()
  const run = runWithTools('x', at(api, { tools: ['never_settles_mid'], toolTimeoutMs: 100, onToolError: 'continue', signal: controller.signal }))
  await api.waitForRequests(2, 5000)
  await sleep(30)
  // The run is still waiting for its second answer: only the engine's cancel hook can have aborted it.
  assert.equal(signal.aborted, true)
  assert.equal(signal.reason.name, 'AbortError')
  controller.abort()
  assert.equal((await run).error.code, 'aborted')
})

test('ctx.signal read only after the call timed out is aborted while the run goes on', async (t) => {
  const api = await startApi(t)
  let lateSignal
  let done
  const checked = new Promise((resolve) => (done = resolve))
  registerTool({
    definition: { name: 'late_reader_mid', input_schema: { type: 'object' } },
    execute: async (_input, ctx) => {
      await sleep(150)
      lateSignal = ctx.signal
      done()
      return 'too late'
    },
  })
  api.script(reply([toolUse('late_reader_mid', {})]), { fault: 'hang' })
  const controller = new AbortController()
  const run = runWithTools('x', at(api, { tools: ['late_reader_mid'], onToolError: 'continue', toolTimeoutMs: 50, signal: controller.signal }))
  await checked
  assert.equal(api.requests.length, 2, 'the run is waiting for its next answer')
  assert.equal(lateSignal.aborted, true)
  controller.abort()
  await run
})

test('stop mode: the first failure ends the run at once; running siblings are aborted and reported failed', async (t) => {
  const api = await startApi(t)
  let siblingSignal
  registerTool({
    definition: { name: 'fails_fast', input_schema: { type: 'object' } },
    execute: async () => {
      while (siblingSignal === undefined) await sleep(1)
      throw new Error('db down')
    },
  })
  registerTool({
    definition: { name: 'slow_sibling', input_schema: { type: 'object' } },
    execute: (_input, ctx) => { siblingSignal = ctx.signal; return new Promise(() => {}) },
  })
  api.script(reply([toolUse('slow_sibling', {}, 'toolu_slow'), toolUse('fails_fast', {}, 'toolu_fail')]))
  const r = await runWithTools('x', at(api, { tools: ['fails_fast', 'slow_sibling'] }))
  assert.equal(r.error.code, 'tool_execution_error')
  assert.equal(r.error.toolName, 'fails_fast')
  assert.deepEqual(r.error.toolCalls.map((c) => [c.toolUseId, c.isError]), [['toolu_slow', true], ['toolu_fail', true]])
  assert.match(r.error.toolCalls[0].error, /Interrupted: fails_fast failed first/)
  await sleep(30)
  assert.equal(siblingSignal.aborted, true)
  assert.equal(api.requests.length, 1)
})

test('an aborted run reports every call that started: finished with results, interrupted as failed', async (t) => {
  const api = await startApi(t)
  let started = 0
  registerTool({ definition: { name: 'quick_one', input_schema: { type: 'object' } }, execute: () => ({ ok: 1 }) })
  registerTool({ definition: { name: 'stuck_one', input_schema: { type: 'object' } }, execute: () => { started++; return new Promise(() => {}) } })
  api.script(reply([toolUse('quick_one', {}, 'toolu_q'), toolUse('stuck_one', { a: 1 }, 'toolu_s')]))
  const controller = new AbortController()
  const run = runWithTools('x', at(api, { tools: ['quick_one', 'stuck_one'], signal: controller.signal }))
  while (started === 0) await sleep(5)
  await sleep(20)
  controller.abort()
  const r = await run
  assert.equal(r.error.code, 'aborted')
  const calls = r.error.toolCalls
  assert.deepEqual(calls.map((c) => c.toolUseId), ['toolu_q', 'toolu_s'])
  assert.deepEqual(calls[0].output, { ok: 1 })
  assert.equal(calls[0].isError, undefined)
  assert.equal(calls[1].isError, true)
  assert.match(calls[1].error, /^Aborted/)
  assert.deepEqual(calls[1].input, { a: 1 })
})

// --- stop reasons -------------------------------------------------------------------------------

test('max_tokens in the middle of a tool_use: nothing runs, output_truncated', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('send_email_cut')
  api.script(reply([text('Sending'), toolUse('send_email_cut', { orderId: '1' })], { stop_reason: 'max_tokens' }))
  const r = await runWithTools('x', at(api, { tools: ['send_email_cut'], maxTokens: 64 }))
  assert.equal(r.error.code, 'output_truncated')
  assert.match(r.error.message, /send_email_cut.*max_tokens.*Raise maxTokens \(now 64\)/)
  assert.equal(calls.length, 0)
  assert.equal(api.requests.length, 1)
})

test('model_context_window_exceeded with a tool_use is output_truncated too; without one it is an answer', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('ctx_tool')
  api.script(reply([toolUse('ctx_tool', { orderId: '1' })], { stop_reason: 'model_context_window_exceeded' }))
  let r = await runWithTools('x', at(api, { tools: ['ctx_tool'] }))
  assert.equal(r.error.code, 'output_truncated')
  assert.equal(calls.length, 0)
  api.script(reply([text('A long answer that was cu')], { stop_reason: 'max_tokens' }))
  r = await runWithTools('x', at(api, { tools: ['ctx_tool'] }))
  assert.equal(r.error, null)
  assert.equal(r.data.stopReason, 'max_tokens')
  assert.equal(r.data.text, 'A long answer that was cu')
  assert.equal(r.data.messages.length, 2)
})

test('refusal: no tool of the reply runs; the answer is its text; the refused reply stays out of the history', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('refused_tool')
  api.script(reply([text('I cannot help with that.'), toolUse('refused_tool', { orderId: '1' })], { stop_reason: 'refusal' }))
  const r = await runWithTools('help me', at(api, { tools: ['refused_tool'] }))
  assert.equal(r.error, null)
  assert.equal(r.data.stopReason, 'refusal')
  assert.equal(r.data.text, 'I cannot help with that.')
  assert.equal(calls.length, 0)
  assert.deepEqual(r.data.messages, [{ role: 'user', content: 'help me' }])
})

test('an empty end_turn reply is an answer with text "" and is left out of data.messages, which stays re-sendable', async (t) => {
  const api = await startApi(t)
  orderTool('empty_after')
  api.script(reply([toolUse('empty_after', { orderId: '7' })]), reply([], { stop_reason: 'end_turn' }), reply([text('Shipped.')]))
  const r = await runWithTools('where is 7?', at(api, { tools: ['empty_after'] }))
  assert.equal(r.error, null)
  assert.equal(r.data.text, '')
  assert.equal(r.data.stopReason, 'end_turn')
  assert.equal(r.data.messages.length, 3)
  assert.equal(r.data.messages.at(-1).role, 'user')
  // Sent back plus a new user message: the stand-in refuses empty messages, as the API does.
  const next = await runWithTools([...r.data.messages, { role: 'user', content: 'and?' }], at(api, { tools: ['empty_after'] }))
  assert.equal(next.error, null, JSON.stringify(next.error))
})

test('pause_turn: the reply goes back unchanged, the continuation joins it, and it counts as a round', async (t) => {
  const api = await startApi(t)
  const search = serverToolUse('web_search', { query: 'order 4821 carrier' }, 'srvtoolu_01')
  const found = webSearchResult('srvtoolu_01', [{ url: 'https://example.com', title: 'Carrier' }])
  api.script(
    reply([text('Searching.'), search], { stop_reason: 'pause_turn' }),
    reply([found, text('It ships with Carrier.')], { stop_reason: 'end_turn' }),
  )
  const r = await runWithTools('who ships 4821?', at(api, { tools: [], serverTools: [WEB_SEARCH] }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.deepEqual(api.requests[0].body.tools, [WEB_SEARCH])
  // The paused reply went back as the last message, unchanged, with nothing added: the API's
  // thread holds it, so the continuation sends no message.
  assert.deepEqual(api.requests[1].body.messages, [])
  assert.equal(api.requests[1].body.thread.previous_message_id, api.requests[0].reply.id)
  const second = api.requests[1].fullBody.messages
  assert.equal(second.length, 2)
  assert.deepEqual(second[1], { role: 'assistant', content: [text('Searching.'), search] })
  // One assistant message for the whole turn.
  assert.equal(r.data.messages.length, 2)
  assert.deepEqual(r.data.messages[1].content, [text('Searching.'), search, found, text('It ships with Carrier.')])
  assert.equal(r.data.text, 'Searching.It ships with Carrier.')
  api.script(reply([text('You are welcome.')]))
  const next = await runWithTools([...r.data.messages, { role: 'user', content: 'thanks' }], at(api, { tools: [], serverTools: [WEB_SEARCH] }))
  assert.equal(next.error, null, JSON.stringify(next.error))
})

test('pause_turn at the tool-round limit ends the run with max_iterations_exceeded, saying the turn was paused', async (t) => {
  const api = await startApi(t)
  const search = serverToolUse('web_search', { query: 'q' })
  api.script(reply([search], { stop_reason: 'pause_turn' }), reply([search], { stop_reason: 'pause_turn' }))
  const r = await runWithTools('x', at(api, { tools: [], serverTools: [WEB_SEARCH], maxToolIterations: 1 }))
  assert.equal(r.error.code, 'max_iterations_exceeded')
  assert.match(r.error.message, /paused \(pause_turn\)/)
  assert.equal(api.requests.length, 2)
})

test('an unknown stop_reason is an answer; server_tool_use blocks are never answered by the client', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('mixed_tool')
  const search = serverToolUse('web_search', { query: 'q' }, 'srvtoolu_x')
  const found = webSearchResult('srvtoolu_x')
  api.script(reply([search, found, toolUse('mixed_tool', { orderId: '3' }, 'toolu_m')]), reply([text('done')], { stop_reason: 'something_new' }))
  const r = await runWithTools('x', at(api, { tools: ['mixed_tool'], serverTools: [WEB_SEARCH] }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(r.data.stopReason, 'something_new')
  assert.equal(calls.length, 1)
  assert.deepEqual(toolResults(api, 1).map((b) => b.tool_use_id), ['toolu_m'])
})

// --- the history, byte for byte -----------------------------------------------------------------

test('prompt messages, system and toolChoice are sent and returned byte for byte; unknown blocks round-trip', async (t) => {
  const api = await startApi(t)
  orderTool('bytes_tool')
  const future = { type: 'x_future_block', zeta: 1, alpha: { y: 2, b: 3 } }
  api.script(reply([future, toolUse('bytes_tool', { zz: 1, orderId: '5' }, 'toolu_b')]), reply([text('ok')]))
  const prompt = [{ content: [{ text: 'order 5?', type: 'text', cache_control: { type: 'ephemeral' } }], role: 'user' }]
  const system = [{ text: 'Be brief.', type: 'text' }]
  const toolChoice = { type: 'auto', disable_parallel_tool_use: true }
  // The whole history on the wire every request (without the API's thread, which would hold it).
  const r = await runWithTools(prompt, at(api, { tools: ['bytes_tool'], system, toolChoice, onToolError: 'continue', apiThreads: false }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  const raw = api.requests[0].rawBody
  assert.ok(raw.includes(JSON.stringify(prompt[0])), raw)
  assert.ok(raw.includes(`"system":${JSON.stringify(system)}`), raw)
  assert.ok(raw.includes(`"tool_choice":${JSON.stringify(toolChoice)}`), raw)
  const raw2 = api.requests[1].rawBody
  assert.ok(raw2.includes(JSON.stringify(future)), 'the unknown block goes back as it came')
  assert.ok(raw2.includes('{"type":"tool_use","id":"toolu_b","name":"bytes_tool","input":{"zz":1,"orderId":"5"}}'), raw2)
  assert.equal(JSON.stringify(r.data.messages[0]), JSON.stringify(prompt[0]))
  assert.equal(JSON.stringify(r.data.messages[1].content[0]), JSON.stringify(future))
})

test('a forcing toolChoice applies to the first request only; later ones send auto and keep disable_parallel_tool_use', async (t) => {
  const api = await startApi(t)
  orderTool('forced_tool')
  api.script(reply([toolUse('forced_tool', { orderId: '1' })]), reply([text('ok')]))
  const r = await runWithTools('x', at(api, { tools: ['forced_tool'], toolChoice: { type: 'tool', name: 'forced_tool', disable_parallel_tool_use: true } }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.deepEqual(api.requests[0].body.tool_choice, { type: 'tool', name: 'forced_tool', disable_parallel_tool_use: true })
  assert.deepEqual(api.requests[1].body.tool_choice, { type: 'auto', disable_parallel_tool_use: true })
})

// --- credentials and redirects ------------------------------------------------------------------

test('an explicit authToken wins: the ANTHROPIC_API_KEY of the environment is not sent to the gateway', async (t) => {
  const gatewayToken = 'gw-token-123'
  const gateway = await startMockApi({ apiKey: gatewayToken })
  t.after(() => gateway.close())
  const saved = process.env.ANTHROPIC_API_KEY
  process.env.ANTHROPIC_API_KEY = KEY
  t.after(() => (saved === undefined ? delete process.env.ANTHROPIC_API_KEY : (process.env.ANTHROPIC_API_KEY = saved)))
  gateway.script(reply([text('hi')]))
  const r = await runWithTools('x', { baseURL: gateway.url, authToken: gatewayToken, tools: [] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  const headers = gateway.requests[0].headers
  assert.equal(headers['x-api-key'], undefined, 'the Anthropic key must not reach the gateway')
  assert.equal(headers.authorization, `Bearer ${gatewayToken}`)
  assertNoSecret(JSON.stringify(gateway.requests[0].headers))
})

test('a redirect is not followed: unknown_error naming the status, and the key goes nowhere else', async (t) => {
  const api = await startApi(t)
  const elsewhere = await startMockApi({ apiKey: 'other' })
  t.after(() => elsewhere.close())
  api.script({ status: 307, headers: { location: `${elsewhere.url}/v1/messages` } })
  const r = await runWithTools('x', at(api, { tools: [] }))
  assert.equal(r.error.code, 'unknown_error')
  assert.equal(r.error.status, 307)
  assert.match(r.error.message, /HTTP 307 \(a redirect to http:\/\/127\.0\.0\.1:\d+\/v1\/messages\); redirects are not followed/)
  assert.equal(elsewhere.requests.length, 0)
  assert.equal(api.requests.length, 1, 'a redirect is not retried')
})

test('no test hook ships: "__panicForTest" in a release request is an ordinary field', async () => {
  const { default: binding } = await import('../binding.js')
  // A channel of the test's own (index.js has its own), held while its run is pending.
  const channel = new binding.RunChannel((runId, resultJson) => ended(resultJson))
  let ended
  const result = await new Promise((resolve) => {
    ended = resolve
    channel.hold(true)
    channel.start(JSON.stringify({ prompt: 'x', __panicForTest: true, options: { baseURL: 'http://127.0.0.1:9', apiKey: KEY, maxRetries: 0 } }), 1, new binding.RunControl())
  })
  channel.hold(false)
  const out = JSON.parse(result)
  assert.equal(out.error.code, 'network_error', out.error.message)
})

// --- rich tool results --------------------------------------------------------------------------

test('toolResult(blocks): the blocks are the tool_result content as given; output in toolCalls is the array', async (t) => {
  const { toolResult } = await import('../index.mjs')
  const api = await startApi(t)
  const blocks = [
    { type: 'text', text: 'Order 4821 label:' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
  ]
  registerTool({ definition: { name: 'label_image', input_schema: { type: 'object' } }, execute: () => toolResult(blocks) })
  api.script(reply([toolUse('label_image', {}, 'toolu_img')]), reply([text('Here is the label.')]))
  const r = await runWithTools('label?', at(api, { tools: ['label_image'] }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.deepEqual(toolResults(api, 1), [{ type: 'tool_result', tool_use_id: 'toolu_img', content: blocks }])
  assert.equal(r.data.toolCalls[0].output, blocks)
  assert.throws(() => toolResult([{ type: 'video' }]), /toolResult: blocks\[0\] must be a content block whose type is one of text, image, document, search_result, tool_reference; got "video"/)
  assert.throws(() => toolResult('x'), /toolResult: expected an array/)
})
