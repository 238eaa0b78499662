// onToolError: "continue", ToolError, repeated failures, timeouts, abort and the run context.
// Each test asserts the exact tool_result blocks the stand-in API received.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { registerTool, runWithTools, ToolError } from '../index.mjs'
import { text, toolUse, reply } from '../stand-in/index.mjs'
import { message } from 'anthropic-tool-calling/testing'
import { startApi, at, orderSchema, assertNoSecret, toolResults, standIn, via, resultsIn } from './helpers.mjs'

const SECRET = 'postgres://admin:hunter2@db.internal:5432/orders'

/** Everything the API received, as one string: to prove what never reached the model. */
function sentText(api) {
  return api.requests.map((r) => r.rawBody).join('\n')
}

test('continue: every failure kind becomes an is_error tool_result the model can act on, and the loop goes on', async (t) => {
  const api = await startApi(t)
  registerTool({ definition: { name: 'c_order', input_schema: orderSchema }, execute: ({ orderId }) => ({ orderId, status: 'shipped' }) })
  registerTool({ definition: { name: 'c_tool_error', input_schema: { type: 'object' } }, execute: () => { throw new ToolError('Order 9999 does not exist. Ask the user for the right number.') } })
  registerTool({
    definition: { name: 'c_crash', input_schema: { type: 'object' } },
    execute: () => { throw new Error(`connect ECONNREFUSED ${SECRET}`) },
  })
  registerTool({ definition: { name: 'c_slow', input_schema: { type: 'object' } }, execute: () => new Promise(() => {}) })
  const offered = ['c_order', 'c_tool_error', 'c_crash', 'c_slow']
  api.script(
    reply([
      toolUse('delete_everything', {}, 'toolu_1'),
      toolUse('c_order', { orderId: 4821 }, 'toolu_2'),
      toolUse('c_tool_error', {}, 'toolu_3'),
      toolUse('c_crash', {}, 'toolu_4'),
      toolUse('c_slow', {}, 'toolu_5'),
      toolUse('c_order', { orderId: '4821' }, 'toolu_6'),
    ]),
    reply([text('Order 4821 has shipped; I could not do the rest.')]),
  )
  const r = await runWithTools('do everything', at(api, { tools: offered, onToolError: 'continue', toolTimeoutMs: 150 }))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.equal(r.data.text, 'Order 4821 has shipped; I could not do the rest.')
  assert.deepEqual(toolResults(api, 1), [
    { type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'The tool delete_everything does not exist. Available tools: c_order, c_tool_error, c_crash, c_slow.' },
    {
      type: 'tool_result',
      tool_use_id: 'toolu_2',
      is_error: true,
      content: 'Invalid input for c_order: orderId: 4821 is not of type "string". Call c_order again with input that matches its input_schema.',
    },
    { type: 'tool_result', tool_use_id: 'toolu_3', is_error: true, content: 'Order 9999 does not exist. Ask the user for the right number.' },
    { type: 'tool_result', tool_use_id: 'toolu_4', is_error: true, content: 'Internal error while running c_crash. Try again later or tell the user.' },
    { type: 'tool_result', tool_use_id: 'toolu_5', is_error: true, content: 'The tool c_slow did not finish within 150 ms and was stopped. Try again later or tell the user.' },
    { type: 'tool_result', tool_use_id: 'toolu_6', content: '{"orderId":"4821","status":"shipped"}' },
  ])
  // Nothing internal reached the model: not the message, not a stack frame.
  const sent = sentText(api)
  for (const leak of [SECRET, 'hunter2', 'ECONNREFUSED', 'at execute', '.mjs:', 'node:internal']) {
    assert.ok(!sent.includes(leak), `${leak} reached the API`)
  }
  // The developer sees everything in toolCalls.
  const calls = r.data.toolCalls
  assert.deepEqual(calls.map((c) => [c.toolUseId, Boolean(c.isError)]), [
    ['toolu_1', true], ['toolu_2', true], ['toolu_3', true], ['toolu_4', true], ['toolu_5', true], ['toolu_6', false],
  ])
  assert.match(calls[0].error, /delete_everything.*not offered/)
  assert.match(calls[1].error, /orderId: 4821 is not of type "string"/)
  assert.match(calls[2].error, /Order 9999 does not exist/)
  assert.ok(calls[3].error.includes(SECRET))
  assert.match(calls[4].error, /timed out after 150 ms/)
  assert.equal(calls[0].output, null)
  assertNoSecret(r)
})

test('the lesson: solicitar_devolucion throws a ToolError for an unknown order and the model recovers next turn', async (t) => {
  const orders = { 1234: { deliveredAt: '2026-11-20' } }
  const seen = []
  registerTool({
    definition: {
      name: 'solicitar_devolucion',
      description: 'Start a return for a delivered order (within 30 days)',
      input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
    },
    execute: async ({ orderId }) => {
      seen.push(orderId)
      if (!orders[orderId]) throw new ToolError(`El pedido ${orderId} no existe. Pide al usuario que revise el número.`)
      return { orderId, returnId: `RET-${orderId}` }
    },
  })
  // Through the public test kit: the model answers by what each request holds.
  const api = await standIn(t, {
    replies: (request) => {
      const results = request.messages.length === 1 ? [] : resultsIn(request)
      if (results.length === 0) return toolUse('solicitar_devolucion', { orderId: '9999' }, 'toolu_r1')
      if (results[0].is_error) return message([text('Ese pedido no existe; pruebo con el otro.'), toolUse('solicitar_devolucion', { orderId: '1234' }, 'toolu_r2')])
      return text('Listo: la devolución RET-1234 está en marcha.')
    },
  })
  const r = await runWithTools('Quiero devolver el pedido #9999 o #1234', via(api, { tools: ['solicitar_devolucion'], onToolError: 'continue' }))
  assert.equal(r.error, null)
  assert.equal(r.data.text, 'Listo: la devolución RET-1234 está en marcha.')
  assert.deepEqual(seen, ['9999', '1234'])
  assert.deepEqual(resultsIn(api.requests[1]), [
    { type: 'tool_result', tool_use_id: 'toolu_r1', is_error: true, content: 'El pedido 9999 no existe. Pide al usuario que revise el número.' },
  ])
  assert.deepEqual(resultsIn(api.requests[2]), [{ type: 'tool_result', tool_use_id: 'toolu_r2', content: '{"orderId":"1234","returnId":"RET-1234"}' }])
  assert.equal(r.data.toolCalls[0].isError, true)
  assert.equal(r.data.toolCalls[1].isError, undefined)
})

test('ToolError is told apart by its class, not its message', async (t) => {
  class NotFound extends ToolError {}
  registerTool({ definition: { name: 'te_sub', input_schema: { type: 'object' } }, execute: () => { throw new NotFound('subclass words') } })
  registerTool({ definition: { name: 'te_lookalike', input_schema: { type: 'object' } }, execute: () => { const e = new Error('look-alike words'); e.name = 'ToolError'; throw e } })
  registerTool({ definition: { name: 'te_plain', input_schema: { type: 'object' } }, execute: () => { throw { name: 'ToolError', message: 'plain object words' } } })
  const api = await standIn(t, { replies: [message([toolUse('te_sub', {}), toolUse('te_lookalike', {}), toolUse('te_plain', {})]), text('ok')] })
  const r = await runWithTools('x', via(api, { tools: ['te_sub', 'te_lookalike', 'te_plain'], onToolError: 'continue' }))
  assert.equal(r.error, null)
  assert.deepEqual(resultsIn(api.requests[1]).map((b) => b.content), [
    'subclass words',
    'Internal error while running te_lookalike. Try again later or tell the user.',
    'Internal error while running te_plain. Try again later or tell the user.',
  ])
  const e = new NotFound('x')
  assert.ok(e instanceof ToolError && e instanceof Error)
})

test('the same failing call (key order ignored) is not run again after maxToolFailures', async (t) => {
  const api = await startApi(t)
  let runs = 0
  registerTool({
    definition: { name: 'flaky', input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } },
    execute: () => { runs++; throw new Error('still broken') },
  })
  const inputs = [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 1, b: 2 }, { b: 2, a: 1 }]
  api.script(
    ...inputs.map((input, i) => reply([toolUse('flaky', input, `toolu_f${i}`)])),
    reply([text('It keeps failing; sorry.')]),
  )
  const r = await runWithTools('x', at(api, { tools: ['flaky'], onToolError: 'continue', maxToolIterations: 10 }))
  assert.equal(r.error, null)
  assert.equal(runs, 2)
  const internal = 'Internal error while running flaky. Try again later or tell the user.'
  const repeated = 'The tool flaky has failed 2 times with this same input and was not run again. Do not repeat this call; tell the user that it could not be done.'
  assert.deepEqual([1, 2, 3, 4].map((i) => toolResults(api, i)[0].content), [internal, internal, repeated, repeated])
  assert.match(r.data.toolCalls[2].error, /Not run: flaky already failed 2 times/)

  // A different input is a different call; maxToolFailures: 1 refuses after one failure.
  api.reset()
  runs = 0
  api.script(reply([toolUse('flaky', { a: 1 })]), reply([toolUse('flaky', { a: 1 })]), reply([toolUse('flaky', { a: 2 })]), reply([text('done')]))
  const r2 = await runWithTools('x', at(api, { tools: ['flaky'], onToolError: 'continue', maxToolFailures: 1 }))
  assert.equal(r2.error, null)
  assert.equal(runs, 2)
  assert.match(toolResults(api, 2)[0].content, /has failed 1 times/)
})

test('empty results are normal results, never is_error', async (t) => {
  const api = await startApi(t)
  const empties = { e_array: [], e_string: '', e_null: null, e_object: {} }
  for (const [name, value] of Object.entries(empties)) {
    registerTool({ definition: { name, input_schema: { type: 'object' } }, execute: () => value })
  }
  for (const mode of ['stop', 'continue']) {
    api.reset()
    api.script(reply(Object.keys(empties).map((n) => toolUse(n, {}))), reply([text('nothing found')]))
    const r = await runWithTools('x', at(api, { tools: Object.keys(empties), onToolError: mode }))
    assert.equal(r.error, null, mode)
    const blocks = toolResults(api, 1)
    assert.deepEqual(blocks.map((b) => b.content), ['[]', '', 'null', '{}'])
    assert.ok(blocks.every((b) => b.is_error === undefined))
    assert.deepEqual(r.data.toolCalls.map((c) => c.output), [[], '', null, {}])
  }
})

test('toolTimeoutMs: a late tool fails, its ctx.signal is aborted and the run does not wait for it', async (t) => {
  const api = await startApi(t)
  let signal
  registerTool({
    definition: { name: 'never_settles', input_schema: { type: 'object' } },
    execute: (_input, ctx) => { signal = ctx.signal; return new Promise(() => {}) },
  })
  api.script(reply([toolUse('never_settles', {})]))
  const started = Date.now()
  const r = await runWithTools('x', at(api, { tools: ['never_settles'], toolTimeoutMs: 100 }))
  assert.equal(r.error.code, 'tool_execution_error')
  assert.equal(r.error.toolName, 'never_settles')
  assert.match(r.error.message, /timed out after 100 ms/)
  assert.ok(Date.now() - started < 5000)
  await new Promise((r) => setTimeout(r, 20))
  assert.equal(signal.aborted, true)
  assert.equal(r.error.toolCalls[0].isError, true)
})

test('signal: an already aborted signal sends nothing', async (t) => {
  const api = await startApi(t)
  const r = await runWithTools('x', at(api, { tools: [], signal: AbortSignal.abort() }))
  assert.equal(r.error.code, 'aborted')
  assert.equal(api.requests.length, 0)
})

test('signal: aborting during a request in flight resolves with aborted within 100 ms', async (t) => {
  const api = await startApi(t)
  api.script({ fault: 'hang' })
  const controller = new AbortController()
  const run = runWithTools('x', at(api, { tools: [], signal: controller.signal }))
  while (api.requests.length === 0) await new Promise((r) => setTimeout(r, 5))
  const t0 = performance.now()
  controller.abort()
  const r = await run
  const took = performance.now() - t0
  assert.equal(r.error.code, 'aborted')
  assert.ok(took < 100, `took ${took} ms`)
})

test('signal: aborting during a retry wait resolves with aborted within 100 ms', async (t) => {
  const api = await startApi(t)
  api.script({ status: 529, headers: { 'retry-after': '30' } }, reply([text('too late')]))
  const controller = new AbortController()
  const run = runWithTools('x', at(api, { tools: [], signal: controller.signal }))
  while (api.requests.length === 0 || api.requests[0].status === null) await new Promise((r) => setTimeout(r, 5))
  await new Promise((r) => setTimeout(r, 20))
  const t0 = performance.now()
  controller.abort()
  const r = await run
  assert.equal(r.error.code, 'aborted')
  assert.ok(performance.now() - t0 < 100)
  assert.equal(api.requests.length, 1)
})

test('signal: aborting while tools run aborts their ctx.signal and resolves within 100 ms', async (t) => {
  const api = await startApi(t)
  const signals = []
  let running = 0
  registerTool({
    definition: { name: 'long_job', input_schema: { type: 'object' } },
    execute: (_input, ctx) => { signals.push(ctx.signal); running++; return new Promise(() => {}) },
  })
  api.script(reply([toolUse('long_job', { n: 1 }), toolUse('long_job', { n: 2 })]))
  const controller = new AbortController()
  const run = runWithTools('x', at(api, { tools: ['long_job'], signal: controller.signal }))
  while (running < 2) await new Promise((r) => setTimeout(r, 5))
  const t0 = performance.now()
  controller.abort()
  const r = await run
  assert.equal(r.error.code, 'aborted')
  assert.ok(performance.now() - t0 < 100)
  assert.equal(signals.length, 2)
  assert.ok(signals.every((s) => s.aborted))
  assert.equal(api.requests.length, 1)
})

test('context: every execute receives ctx = { toolUseId, signal, context } with the very object passed', async (t) => {
  const api = await startApi(t)
  const context = { user: { id: 7 }, db: new Map() }
  const seen = []
  registerTool({
    definition: { name: 'ctx_tool', input_schema: { type: 'object' } },
    execute: (_input, ctx) => { seen.push(ctx); return 'ok' },
  })
  api.script(reply([toolUse('ctx_tool', {}, 'toolu_x1'), toolUse('ctx_tool', { b: 1 }, 'toolu_x2')]), reply([text('ok')]))
  const r = await runWithTools('x', at(api, { tools: ['ctx_tool'], context }))
  assert.equal(r.error, null)
  assert.equal(seen.length, 2)
  assert.deepEqual(seen.map((c) => c.toolUseId), ['toolu_x1', 'toolu_x2'])
  for (const ctx of seen) {
    assert.equal(ctx.context, context)
    assert.ok(ctx.signal instanceof AbortSignal)
  }
})

test('odd tools do not hurt: odd throws, undefined, circular, BigInt, never settling', async (t) => {
  const api = await startApi(t)
  const circular = {}
  circular.me = circular
  const odd = {
    o_string: () => { throw 'a string' },
    o_undefined_throw: () => { throw undefined },
    o_object: () => { throw { code: 42 } },
    o_sync: () => { throw new RangeError(`sync ${SECRET}`) },
    o_returns_undefined: () => undefined,
    o_circular: () => circular,
    o_bigint: () => 10n,
    o_never: () => new Promise(() => {}),
  }
  for (const [name, execute] of Object.entries(odd)) registerTool({ definition: { name, input_schema: { type: 'object' } }, execute })
  const names = Object.keys(odd)
  api.script(reply(names.map((n) => toolUse(n, {}))), reply([text('survived')]))
  const r = await runWithTools('x', at(api, { tools: names, onToolError: 'continue', toolTimeoutMs: 200 }))
  assert.equal(r.error, null)
  assert.equal(r.data.text, 'survived')
  const blocks = toolResults(api, 1)
  const internal = (n) => `Internal error while running ${n}. Try again later or tell the user.`
  assert.deepEqual(blocks.map((b) => [b.content, Boolean(b.is_error)]), [
    [internal('o_string'), true],
    [internal('o_undefined_throw'), true],
    [internal('o_object'), true],
    [internal('o_sync'), true],
    ['null', false],
    [internal('o_circular'), true],
    [internal('o_bigint'), true],
    ['The tool o_never did not finish within 200 ms and was stopped. Try again later or tell the user.', true],
  ])
  assert.ok(!sentText(api).includes('hunter2'))
  const errors = r.data.toolCalls.map((c) => c.error)
  assert.match(errors[0], /a string/)
  assert.match(errors[1], /undefined/)
  assert.match(errors[2], /42/)
  assert.match(errors[3], /RangeError: sync/)
  assert.match(errors[5], /cannot be turned into JSON/)
  assert.match(errors[6], /cannot be turned into JSON/)
})

test('a never-settling Promise that nothing else holds still times out (it is not collected mid-call)', async (t) => {
  const api = await startApi(t)
  const { setFlagsFromString } = await import('node:v8')
  const { runInNewContext } = await import('node:vm')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc')
  registerTool({ definition: { name: 'orphan_promise', input_schema: { type: 'object' } }, execute: () => new Promise(() => {}) })
  api.script(reply([toolUse('orphan_promise', {})]), reply([text('ok')]))
  const run = runWithTools('x', at(api, { tools: ['orphan_promise'], onToolError: 'continue', toolTimeoutMs: 600 }))
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 30))
    gc()
  }
  const r = await run
  assert.equal(r.error, null)
  assert.equal(toolResults(api, 1)[0].content, 'The tool orphan_promise did not finish within 600 ms and was stopped. Try again later or tell the user.')
  assert.match(r.data.toolCalls[0].error, /timed out after 600 ms/)
})

test('ctx.signal read only after the call timed out is already aborted', async (t) => {
  const api = await startApi(t)
  let lateSignal
  let done
  const checked = new Promise((resolve) => (done = resolve))
  registerTool({
    definition: { name: 'late_reader', input_schema: { type: 'object' } },
    execute: async (_input, ctx) => {
      await new Promise((r) => setTimeout(r, 150))
      lateSignal = ctx.signal
      done()
      return 'too late'
    },
  })
  api.script(reply([toolUse('late_reader', {})]), reply([text('ok')]))
  const r = await runWithTools('x', at(api, { tools: ['late_reader'], onToolError: 'continue', toolTimeoutMs: 50 }))
  assert.equal(r.error, null)
  await checked
  assert.equal(lateSignal.aborted, true)
  assert.equal(lateSignal.reason.name, 'AbortError')
})

test('an aborted run still reports the tool calls it made', async (t) => {
  const api = await startApi(t)
  const first = { orderId: '1', status: 'shipped' }
  let started = false
  registerTool({ definition: { name: 'quick_lookup', input_schema: { type: 'object' } }, execute: () => first })
  registerTool({ definition: { name: 'stuck_lookup', input_schema: { type: 'object' } }, execute: () => { started = true; return new Promise(() => {}) } })
  api.script(reply([toolUse('quick_lookup', {}, 'toolu_q1')]), reply([toolUse('stuck_lookup', {}, 'toolu_s1')]))
  const controller = new AbortController()
  const run = runWithTools('x', at(api, { tools: ['quick_lookup', 'stuck_lookup'], signal: controller.signal }))
  while (!started) await new Promise((r) => setTimeout(r, 5))
  controller.abort()
  const r = await run
  assert.equal(r.error.code, 'aborted')
  assert.deepEqual(r.error.toolCalls.map((c) => [c.toolUseId, c.isError]), [['toolu_q1', undefined], ['toolu_s1', true]])
  assert.equal(r.error.toolCalls[0].output, first)
})
