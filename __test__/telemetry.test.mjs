// Tracing: a run's OpenTelemetry spans, as the GenAI semantic conventions name them, collected
// by the SDK's in-memory exporter with the AsyncLocalStorage context manager — what a Next.js
// app with @vercel/otel or the Node SDK has.
import { test, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { AsyncLocalStorage } from 'node:async_hooks'
import { once } from 'node:events'
import { trace, context, SpanStatusCode, SpanKind } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { registerTool, runWithTools, streamWithTools, ToolError, registerMcpServer, unregisterMcpServer } from '../index.mjs'
import { startMcpHttpServer } from './fixtures/mcp-server.mjs'
import { z } from 'zod'
import { reply, text, toolUse } from '../stand-in/replies.mjs'
import { startApi, at, freshName, collect, KEY } from './helpers.mjs'

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
const app = trace.getTracer('the-app')

before(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(provider)
})
after(async () => {
  trace.disable()
  context.disable()
  await provider.shutdown()
})
beforeEach(() => exporter.reset())

const spans = () => exporter.getFinishedSpans()
const named = (prefix) => spans().filter((s) => s.name === prefix || s.name.startsWith(`${prefix} `))
const parentOf = (span) => (span.parentSpanContext ?? {}).spanId
const ms = ([s, ns]) => s * 1000 + ns / 1e6

/** A tool that makes a span of its own (a database query) while it runs. */
function queryingTool(name, execute = async () => ({ status: 'shipped' })) {
  registerTool({
    definition: { name, description: 'Look up an order', input_schema: { type: 'object', properties: { id: { type: 'string' } } } },
    execute: (input, ctx) =>
      app.startActiveSpan('db.query', async (span) => {
        try {
          return await execute(input, ctx)
        } finally {
          span.end()
        }
      }),
  })
}

/** Runs `fn` inside a span of the app's (a route handler's), which it returns with fn's result. */
async function inRoute(fn) {
  return app.startActiveSpan('POST /api/chat', async (route) => {
    try {
      return { route, result: await fn() }
    } finally {
      route.end()
    }
  })
}

test('a run: invoke_agent under the caller\'s span, a chat span per request and an execute_tool span, with the reply\'s ids and usage', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  queryingTool(tool)
  api.script(
    reply([text('Let me check.'), toolUse(tool, { id: '4821' }, 'toolu_trace1')], { usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 7, cache_creation_input_tokens: 3 } }),
    reply([text('Order 4821 shipped.')], { usage: { input_tokens: 150, output_tokens: 9 } }),
  )
  const { route, result } = await inRoute(() => runWithTools('Where is order 4821?', at(api, { tools: [tool], model: 'claude-test-1', maxTokens: 777 })))
  assert.equal(result.error, null)

  const [agent] = named('invoke_agent')
  assert.equal(agent.name, 'invoke_agent')
  assert.equal(agent.kind, SpanKind.INTERNAL)
  assert.equal(parentOf(agent), route.spanContext().spanId, 'invoke_agent is a child of the span active at the call')
  assert.equal(agent.spanContext().traceId, route.spanContext().traceId)
  assert.deepEqual(agent.attributes, {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.request.model': 'claude-test-1',
    'gen_ai.request.max_tokens': 777,
    'gen_ai.usage.input_tokens': 100 + 7 + 3 + 150,
    'gen_ai.usage.output_tokens': 29,
    'gen_ai.usage.cache_read.input_tokens': 7,
    'gen_ai.usage.cache_creation.input_tokens': 3,
    'gen_ai.response.finish_reasons': ['end_turn'],
  })
  assert.equal(agent.status.code, SpanStatusCode.UNSET)

  const chats = named('chat')
  assert.deepEqual(chats.map((s) => s.name), ['chat claude-test-1', 'chat claude-test-1'])
  const port = Number(new URL(api.url).port)
  chats.forEach((chat, i) => {
    assert.equal(chat.kind, SpanKind.CLIENT)
    assert.equal(parentOf(chat), agent.spanContext().spanId)
    const sent = api.requests[i].reply
    assert.match(sent.id, /^msg_/)
    assert.equal(chat.attributes['gen_ai.response.id'], sent.id, 'the id of the reply the stand-in sent')
    assert.equal(chat.attributes['gen_ai.response.model'], sent.model)
    assert.deepEqual(chat.attributes['gen_ai.response.finish_reasons'], [sent.stop_reason])
    assert.equal(chat.attributes['gen_ai.operation.name'], 'chat')
    assert.equal(chat.attributes['gen_ai.provider.name'], 'anthropic')
    assert.equal(chat.attributes['gen_ai.request.model'], 'claude-test-1')
    assert.equal(chat.attributes['gen_ai.request.max_tokens'], 777)
    assert.equal(chat.attributes['server.address'], '127.0.0.1')
    assert.equal(chat.attributes['server.port'], port)
    assert.equal(chat.status.code, SpanStatusCode.UNSET)
  })
  assert.equal(chats[0].attributes['gen_ai.usage.input_tokens'], 110, 'input counts the cache read and written')
  assert.equal(chats[0].attributes['gen_ai.usage.cache_read.input_tokens'], 7)
  assert.equal(chats[0].attributes['gen_ai.usage.cache_creation.input_tokens'], 3)
  assert.equal(chats[0].attributes['gen_ai.usage.output_tokens'], 20)
  assert.equal(chats[1].attributes['gen_ai.usage.input_tokens'], 150)

  const [exec] = named('execute_tool')
  assert.equal(exec.name, `execute_tool ${tool}`)
  assert.equal(exec.kind, SpanKind.INTERNAL)
  assert.equal(parentOf(exec), agent.spanContext().spanId)
  assert.deepEqual(exec.attributes, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool,
    'gen_ai.tool.call.id': 'toolu_trace1',
    'gen_ai.tool.type': 'function',
    'anthropic_tool_calling.tool.outcome': 'ok',
  })
  const [query] = named('db.query')
  assert.equal(parentOf(query), exec.spanContext().spanId, 'a span made inside execute is its child')

  // When the work happened: request 1 ends before the tool starts, which ends before request 2.
  const [c1, c2] = chats
  assert.ok(ms(agent.startTime) <= ms(c1.startTime))
  assert.ok(ms(c1.endTime) <= ms(exec.startTime), 'request 1 ends before the tool starts')
  assert.ok(ms(exec.endTime) <= ms(c2.startTime), 'the tool ends before request 2 starts')
  assert.ok(ms(c2.endTime) <= ms(agent.endTime))
  assert.ok(ms(c1.endTime) - ms(c1.startTime) > 0)
})

test('no content by default; with recordContent the messages, the tool input and output are recorded, never the key', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  queryingTool(tool)
  const script = () => api.script(reply([toolUse(tool, { id: '4821' }, 'toolu_c1')]), reply([text('It shipped.')]))
  script()
  await runWithTools('Where is order 4821?', at(api, { tools: [tool], system: 'Be brief.' }))
  for (const span of spans()) {
    for (const key of Object.keys(span.attributes)) {
      assert.ok(!/messages|instructions|arguments|result/.test(key), `${span.name} has ${key} without recordContent`)
    }
  }
  exporter.reset()
  script()
  await runWithTools('Where is order 4821?', at(api, { tools: [tool], system: 'Be brief.', telemetry: { recordContent: true } }))
  const [c1, c2] = named('chat')
  assert.deepEqual(JSON.parse(c1.attributes['gen_ai.system_instructions']), [{ type: 'text', content: 'Be brief.' }])
  assert.deepEqual(JSON.parse(c1.attributes['gen_ai.input.messages']), [{ role: 'user', parts: [{ type: 'text', content: 'Where is order 4821?' }] }])
  assert.deepEqual(JSON.parse(c1.attributes['gen_ai.output.messages']), [
    { role: 'assistant', parts: [{ type: 'tool_call', id: 'toolu_c1', name: tool, arguments: { id: '4821' } }], finish_reason: 'tool_use' },
  ])
  const second = JSON.parse(c2.attributes['gen_ai.input.messages'])
  assert.equal(second.length, 3)
  assert.deepEqual(second[2].parts, [{ type: 'tool_call_response', id: 'toolu_c1', response: '{"status":"shipped"}' }])
  assert.deepEqual(JSON.parse(c2.attributes['gen_ai.output.messages'])[0].parts, [{ type: 'text', content: 'It shipped.' }])
  const [exec] = named('execute_tool')
  assert.deepEqual(JSON.parse(exec.attributes['gen_ai.tool.call.arguments']), { id: '4821' })
  assert.deepEqual(JSON.parse(exec.attributes['gen_ai.tool.call.result']), { status: 'shipped' })
  assert.ok(!JSON.stringify(spans().map((s) => s.attributes)).includes(KEY))
})

test('telemetry: false makes no span; a bad telemetry value is refused before anything is sent', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  queryingTool(tool)
  api.script(reply([toolUse(tool, { id: '1' })]), reply([text('done')]))
  const r = await runWithTools('hi', at(api, { tools: [tool], telemetry: false }))
  assert.equal(r.error, null)
  assert.deepEqual(spans().map((s) => s.name), ['db.query'], 'only the tool\'s own span, with no parent of ours')
  assert.equal(parentOf(spans()[0]), undefined)

  for (const bad of ['yes', { recordContents: true }, { recordContent: 'true' }, 1]) {
    const refused = await runWithTools('hi', at(api, { telemetry: bad }))
    assert.equal(refused.error.code, 'invalid_request')
    assert.match(refused.error.message, /telemetry must be false, true or \{ recordContent: boolean \}/)
  }
  assert.equal(api.requests.length, 2, 'the refused runs sent nothing')
  exporter.reset()
  api.script(reply([text('fine')]))
  assert.equal((await runWithTools('hi', at(api, { tools: [], telemetry: true, model: 'claude-test-1' }))).error, null)
  assert.deepEqual(spans().map((s) => s.name).sort(), ['chat claude-test-1', 'invoke_agent'])
})

test('a throwing tool is an ERROR execute_tool span, and a failed run an ERROR invoke_agent span', async (t) => {
  const api = await startApi(t)
  const tool = freshName('flaky')
  queryingTool(tool, async () => {
    throw new Error('database down')
  })
  api.script(reply([toolUse(tool, { id: '1' }, 'toolu_f1')]))
  const r = await runWithTools('hi', at(api, { tools: [tool] }))
  assert.equal(r.error.code, 'tool_execution_error')
  const [exec] = named('execute_tool')
  assert.equal(exec.status.code, SpanStatusCode.ERROR)
  assert.equal(exec.attributes['error.type'], 'threw')
  assert.equal(exec.attributes['anthropic_tool_calling.tool.outcome'], 'threw')
  const [agent] = named('invoke_agent')
  assert.equal(agent.status.code, SpanStatusCode.ERROR)
  assert.equal(agent.attributes['error.type'], 'tool_execution_error')

  // In continue mode the run goes on: the failed call is still an error, the run is not.
  exporter.reset()
  const words = freshName('words')
  registerTool({
    definition: { name: words, description: 'x', input_schema: { type: 'object' } },
    execute: async () => {
      throw new ToolError('No such order.')
    },
  })
  api.script(reply([toolUse(words, {}), toolUse('no_such_tool', {})]), reply([text('Sorry.')]))
  const goes = await runWithTools('hi', at(api, { tools: [words], onToolError: 'continue' }))
  assert.equal(goes.error, null)
  const execs = named('execute_tool')
  assert.deepEqual(execs.map((s) => [s.name, s.attributes['error.type'], s.status.code]).sort(), [
    [`execute_tool ${words}`, 'tool_error', SpanStatusCode.ERROR],
    ['execute_tool no_such_tool', 'unknown_tool', SpanStatusCode.ERROR],
  ].sort())
  assert.equal(named('invoke_agent')[0].status.code, SpanStatusCode.UNSET)
})

test('an HTTP 500: one chat span covers the retries; one that never succeeds is ERROR with error.type', async (t) => {
  const api = await startApi(t)
  api.script({ status: 500 }, reply([text('ok')]))
  assert.equal((await runWithTools('hi', at(api, { tools: [], maxRetries: 1 }))).error, null)
  assert.equal(api.requests.length, 2)
  let chats = named('chat')
  assert.equal(chats.length, 1, 'one span for the request and its retry')
  assert.equal(chats[0].status.code, SpanStatusCode.UNSET)
  assert.ok(ms(chats[0].startTime) <= api.requests[0].receivedAt + performance.timeOrigin + 1, 'it began with the first attempt')

  exporter.reset()
  api.script({ status: 500 }, { status: 500 })
  const r = await runWithTools('hi', at(api, { tools: [], maxRetries: 1 }))
  assert.equal(r.error.code, 'unknown_error')
  chats = named('chat')
  assert.equal(chats.length, 1)
  assert.equal(chats[0].status.code, SpanStatusCode.ERROR)
  assert.equal(chats[0].attributes['error.type'], 'unknown_error')
  assert.equal(chats[0].attributes['http.response.status_code'], 500)
  assert.equal(chats[0].attributes['gen_ai.response.id'], undefined)
  assert.equal(named('invoke_agent')[0].attributes['error.type'], 'unknown_error')
})

test('declined, not run and refused identical calls are not errors: status UNSET, the outcome named', async (t) => {
  const api = await startApi(t)
  const tool = freshName('poll')
  queryingTool(tool)
  api.script(
    reply([toolUse(tool, { id: 'same' })]),
    reply([toolUse(tool, { id: 'same' })]),
    reply([toolUse(tool, { id: 'next' })]),
    reply([text('done')]),
  )
  const r = await runWithTools('hi', at(api, { tools: [tool], maxIdenticalCalls: 1, maxToolIterations: 2, onMaxIterations: 'answer' }))
  assert.equal(r.error, null)
  const outcomes = named('execute_tool').map((s) => [s.attributes['anthropic_tool_calling.tool.outcome'], s.status.code, s.attributes['error.type']])
  assert.deepEqual(outcomes, [
    ['ok', SpanStatusCode.UNSET, undefined],
    ['not_run_identical', SpanStatusCode.UNSET, undefined],
    ['not_run_limit', SpanStatusCode.UNSET, undefined],
  ])
})

test('streaming: the same spans, and no trace part ever reaches the stream', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  queryingTool(tool)
  api.script(reply([text('Checking.'), toolUse(tool, { id: '1' })]), reply([text('Shipped.')]))
  const { route, result: parts } = await inRoute(() => collect(streamWithTools('hi', at(api, { tools: [tool] }))))
  assert.ok(parts.every((p) => !String(p.type).startsWith('trace-')), JSON.stringify(parts.map((p) => p.type)))
  assert.equal(parts.at(-1).type, 'finish')
  const [agent] = named('invoke_agent')
  assert.equal(parentOf(agent), route.spanContext().spanId)
  assert.equal(named('chat').length, 2)
  for (const chat of named('chat')) assert.equal(chat.attributes['gen_ai.request.stream'], true)
  const [exec] = named('execute_tool')
  assert.equal(parentOf(named('db.query')[0]), exec.spanContext().spanId)
  for (const chat of named('chat')) assert.match(chat.attributes['gen_ai.response.id'], /^msg_/)
})

test('a span processor that throws never fails the run', async (t) => {
  const api = await startApi(t)
  const broken = new BasicTracerProvider({
    spanProcessors: [{ onStart() {}, onEnd() { throw new Error('exporter broke') }, forceFlush: async () => {}, shutdown: async () => {} }],
  })
  trace.disable()
  trace.setGlobalTracerProvider(broken)
  t.after(() => {
    trace.disable()
    trace.setGlobalTracerProvider(provider)
  })
  const tool = freshName('get_order')
  queryingTool(tool)
  api.script(reply([toolUse(tool, { id: '1' })]), reply([text('done')]))
  const errors = []
  const saved = console.error
  console.error = (...args) => errors.push(args.join(' '))
  let r
  try {
    r = await runWithTools('hi', at(api, { tools: [tool] }))
  } finally {
    console.error = saved
  }
  assert.equal(r.error, null)
  assert.equal(r.data.text, 'done')
  assert.ok(errors.some((e) => e.includes('tracing failed; the run goes on') && e.includes('exporter broke')), errors.join('\n'))
  // (The app's own tracer, got once from the API's proxy, stays with the first provider.)
  assert.deepEqual(spans().filter((s) => s.name !== 'db.query'), [], 'the run used the provider registered now')
})

test('no tracer provider: a run makes no span and sends no trace part', async (t) => {
  const api = await startApi(t)
  trace.disable()
  t.after(() => trace.setGlobalTracerProvider(provider))
  api.script(reply([text('Checking.')]))
  const parts = await collect(streamWithTools('hi', at(api, { tools: [] })))
  assert.ok(parts.every((p) => !String(p.type).startsWith('trace-')))
  assert.deepEqual(spans(), [])
})

test('no tracer provider: a tool still runs under the span context its run was started in', async (t) => {
  const api = await startApi(t)
  trace.disable()
  t.after(() => trace.setGlobalTracerProvider(provider))
  const tool = freshName('where_am_i')
  const seen = []
  registerTool({
    definition: { name: tool, description: 'x', input_schema: { type: 'object' } },
    execute: async () => (seen.push(trace.getSpanContext(context.active())?.traceId ?? null), 'ok'),
  })
  const carried = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 })
  api.script(reply([toolUse(tool, {})]), reply([text('done')]), reply([toolUse(tool, {})]), reply([text('done')]))
  assert.equal((await context.with(carried, () => runWithTools('hi', at(api, { tools: [tool] })))).error, null)
  assert.equal((await runWithTools('hi', at(api, { tools: [tool] }))).error, null)
  assert.deepEqual(seen, ['0af7651916cd43dd8448eb211c80319c', null])
  assert.deepEqual(spans(), [])
})

test('a worker thread\'s spans go to its own provider, under its own active span', async (t) => {
  const api = await startApi(t)
  const worker = new Worker(new URL('./fixtures/traced-worker.mjs', import.meta.url), { workerData: { url: api.url, key: KEY } })
  t.after(() => worker.terminate())
  api.script(reply([toolUse('worker_lookup', { id: '7' })]), reply([text('Seven shipped.')]))
  const [message] = await once(worker, 'message')
  assert.equal(message.error, null, JSON.stringify(message))
  assert.equal(message.text, 'Seven shipped.')
  const byName = Object.fromEntries(message.spans.map((s) => [s.name, s]))
  assert.deepEqual(Object.keys(byName).sort(), ['chat claude-test-1', 'db.query', 'execute_tool worker_lookup', 'invoke_agent', 'worker job'].sort())
  assert.equal(byName.invoke_agent.parent, byName['worker job'].id)
  assert.equal(byName['db.query'].parent, byName['execute_tool worker_lookup'].id)
  assert.equal(message.spans.filter((s) => s.name.startsWith('chat')).length, 2)
  assert.deepEqual(spans(), [], 'nothing reached the main thread\'s provider')
})

test('a reply\'s id and model are the API\'s words: secrets taken out, cut short, and a nested one skipped', async (t) => {
  const api = await startApi(t)
  const body = (id, model) => ({
    status: 200,
    body: { id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } },
  })
  let nested = 'deep'
  for (let i = 0; i < 200; i++) nested = [nested]
  api.script(body(`msg_${KEY}_${'x'.repeat(600)}`, `gateway says ${KEY}`), body('msg_ok', nested))
  const first = await runWithTools('hi', at(api, { tools: [] }))
  assert.equal(first.error, null)
  const [chat] = named('chat')
  assert.ok(!chat.attributes['gen_ai.response.id'].includes(KEY), chat.attributes['gen_ai.response.id'])
  assert.ok(chat.attributes['gen_ai.response.id'].length <= 256)
  assert.match(chat.attributes['gen_ai.response.model'], /^gateway says \S+$/)
  assert.ok(!chat.attributes['gen_ai.response.model'].includes(KEY))
  exporter.reset()
  for (const telemetry of [true, false]) {
    if (!telemetry) api.script(body('msg_ok', nested))
    const deep = await runWithTools('hi', at(api, { tools: [], telemetry }))
    assert.equal(deep.error, null, 'a model nested past serde\'s limit is skipped, never fatal')
  }
  assert.equal(named('chat')[0].attributes['gen_ai.response.model'], undefined)
})

test('an error\'s message (what a tool threw) is in the status only when content is recorded; error.type always', async (t) => {
  const api = await startApi(t)
  const tool = freshName('crm')
  queryingTool(tool, async () => {
    throw new Error('no customer with email jane.doe@example.com')
  })
  for (const recordContent of [false, true]) {
    exporter.reset()
    api.script(reply([toolUse(tool, { id: '1' })]))
    const r = await runWithTools('hi', at(api, { tools: [tool], telemetry: { recordContent } }))
    assert.match(r.error.message, /jane\.doe/)
    const [agent] = named('invoke_agent')
    assert.equal(agent.status.code, SpanStatusCode.ERROR)
    assert.equal(agent.attributes['error.type'], 'tool_execution_error')
    const everything = JSON.stringify(spans().map((s) => [s.attributes, s.status, s.events]))
    assert.equal(everything.includes('jane.doe'), recordContent, everything)
  }
})

test('a run its sampler drops makes no span, and the spans its tools make are dropped with it', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  queryingTool(tool)
  api.script(reply([toolUse(tool, { id: '1' })]), reply([text('done')]))
  const unsampled = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 0 })
  const r = await context.with(unsampled, () => runWithTools('hi', at(api, { tools: [tool] })))
  assert.equal(r.error, null)
  assert.deepEqual(spans().map((s) => s.name), [], 'the tool\'s db.query did not start a trace of its own')
})

test('a call whose async input check outlives toolTimeoutMs never runs and has one execute_tool span', async (t) => {
  const api = await startApi(t)
  const tool = freshName('slow_check')
  let ran = 0
  registerTool({
    definition: {
      name: tool,
      description: 'x',
      input_schema: z.object({ id: z.string() }).refine(async () => (await new Promise((r) => setTimeout(r, 300)), true)),
    },
    execute: async () => (ran++, 'ran'),
  })
  api.script(reply([toolUse(tool, { id: '1' }, 'toolu_slow')]), reply([text('gave up')]))
  const r = await runWithTools('hi', at(api, { tools: [tool], toolTimeoutMs: 100, onToolError: 'continue' }))
  assert.equal(r.error, null)
  await new Promise((resolve) => setTimeout(resolve, 400))
  assert.equal(ran, 0, 'execute never started')
  const execs = named('execute_tool')
  assert.equal(execs.length, 1)
  assert.equal(execs[0].attributes['anthropic_tool_calling.tool.outcome'], 'timeout')
})

test('the request\'s sampling settings are attributes; a run refused for its options is an ERROR invoke_agent with no chat', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('ok')]))
  // Sent only under the API version that keeps the sampling fields.
  await runWithTools('hi', at(api, { tools: [], apiVersion: '2023-06-01', temperature: 0.3, topP: 0.9, topK: 5, stopSequences: ['END'] }))
  const [chat] = named('chat')
  assert.equal(chat.attributes['gen_ai.request.temperature'], 0.3)
  assert.equal(chat.attributes['gen_ai.request.top_p'], 0.9)
  assert.equal(chat.attributes['gen_ai.request.top_k'], 5)
  assert.deepEqual(chat.attributes['gen_ai.request.stop_sequences'], ['END'])
  // Under the default version they are refused before anything is sent: no chat, no attribute.
  exporter.reset()
  const removed = await runWithTools('hi', at(api, { tools: [], temperature: 0.3 }))
  assert.equal(removed.error.code, 'invalid_request')
  assert.deepEqual(named('chat'), [])
  api.script(reply([text('ok')]))
  await runWithTools('hi', at(api, { tools: [] }))
  const [plain] = named('chat')
  for (const key of ['temperature', 'top_p', 'top_k']) assert.equal(plain.attributes[`gen_ai.request.${key}`], undefined, key)
  exporter.reset()
  const refused = await runWithTools('hi', at(api, { maxTokens: -1 }))
  assert.equal(refused.error.code, 'invalid_request')
  assert.deepEqual(spans().map((s) => [s.name, s.attributes['error.type'], s.status.code]), [['invoke_agent', 'invalid_request', SpanStatusCode.ERROR]])
})

test('after the wall clock steps, a run\'s spans still sit inside the app\'s spans', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  queryingTool(tool)
  const realNow = Date.now
  Date.now = () => realNow() + 3000
  t.after(() => (Date.now = realNow))
  api.script(reply([toolUse(tool, { id: '1' })]), reply([text('done')]))
  const { route } = await inRoute(() => runWithTools('hi', at(api, { tools: [tool] })))
  const [agent] = named('invoke_agent')
  const [exec] = named('execute_tool')
  const [query] = named('db.query')
  // The SDK starts a span at Date.now(), a whole millisecond: a millisecond of slack.
  const inside = (child, parent) => ms(child.startTime) >= ms(parent.startTime) - 1 && ms(child.endTime) <= ms(parent.endTime) + 1
  assert.ok(inside(agent, route), `${ms(agent.startTime)}..${ms(agent.endTime)} in ${ms(route.startTime)}..${ms(route.endTime)}`)
  assert.ok(inside(query, exec), `${ms(query.startTime)}..${ms(query.endTime)} in ${ms(exec.startTime)}..${ms(exec.endTime)}`)
  for (const chat of named('chat')) assert.ok(inside(chat, agent))
})

test('a tool runs in the async context of the run that calls it, not of the request that registered it', async (t) => {
  const api = await startApi(t)
  const store = new AsyncLocalStorage()
  const tool = freshName('whoami')
  const seen = []
  // Registered inside request A (a Next.js route module is imported by its first request)…
  store.run('request A', () =>
    app.startActiveSpan('request A', (a) => {
      registerTool({
        definition: { name: tool, description: 'x', input_schema: { type: 'object' } },
        needsApproval: async () => (seen.push(['needsApproval', store.getStore()]), false),
        execute: async () => app.startActiveSpan('db.query', (s) => (s.end(), seen.push(['execute', store.getStore()]), 'ok')),
      })
      a.end()
    }),
  )
  // …and called by request B's run, traced or not.
  for (const telemetry of [false, true]) {
    exporter.reset()
    seen.length = 0
    api.script(reply([toolUse(tool, {})]), reply([text('done')]))
    const { route } = await store.run('request B', () =>
      inRoute(() => runWithTools('hi', at(api, { tools: [tool], telemetry, approvalSecret: 'x'.repeat(32), onToolCall: () => seen.push(['onToolCall', store.getStore()]) }))),
    )
    assert.deepEqual(seen, [['needsApproval', 'request B'], ['onToolCall', 'request B'], ['execute', 'request B']])
    const [query] = named('db.query')
    const parent = telemetry ? named('execute_tool')[0].spanContext().spanId : route.spanContext().spanId
    assert.equal(parentOf(query), parent, `telemetry: ${telemetry}`)
  }
})

test('what the model or a gateway writes (a stop reason, a tool name) reaches no span with a secret in it', async (t) => {
  const api = await startApi(t)
  const echo = `tool_${KEY}`
  api.script(
    reply([toolUse(echo, {})]),
    { status: 200, body: { id: 'msg_2', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'ok' }], stop_reason: `end_turn ${KEY}`, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
  )
  const r = await runWithTools('hi', at(api, { tools: [], onToolError: 'continue', telemetry: { recordContent: true } }))
  assert.equal(r.error, null)
  const everything = JSON.stringify(spans().map((s) => [s.name, s.attributes, s.status]))
  assert.ok(!everything.includes(KEY), everything)
  assert.equal(named('execute_tool').length, 1)
  assert.match(named('invoke_agent')[0].attributes['gen_ai.response.finish_reasons'][0], /^end_turn /)
})

test("an MCP server's tool: an execute_tool span from when the engine sent it, with its tools/call CLIENT span under it", async (t) => {
  const api = await startApi(t)
  const mcp = await startMcpHttpServer()
  t.after(() => mcp.close())
  const name = freshName('traced_mcp')
  await registerMcpServer({ name, url: mcp.url, prefix: `${name}_`, tools: ['slow', 'failing'] })
  t.after(() => unregisterMcpServer(name))
  api.script(reply([toolUse(`${name}_slow`, { ms: 60 }, 'toolu_m1'), toolUse(`${name}_failing`, {}, 'toolu_m2')]), reply([text('Done.')]))
  const result = await runWithTools('Go', at(api, { onToolError: 'continue', tools: [`${name}_slow`, `${name}_failing`] }))
  assert.equal(result.error, null, JSON.stringify(result.error))
  const [agent] = named('invoke_agent')
  const execs = named('execute_tool')
  const calls = named('tools/call')
  assert.equal(execs.length, 2)
  assert.equal(calls.length, 2)
  for (const exec of execs) {
    assert.equal(parentOf(exec), agent.spanContext().spanId)
    const call = calls.find((c) => parentOf(c) === exec.spanContext().spanId)
    assert.ok(call, `${exec.name} has its tools/call span`)
    assert.equal(call.kind, SpanKind.CLIENT)
    assert.equal(call.attributes['mcp.method.name'], 'tools/call')
    assert.equal(call.attributes['gen_ai.tool.call.id'], exec.attributes['gen_ai.tool.call.id'])
  }
  const slow = execs.find((s) => s.name === `execute_tool ${name}_slow`)
  assert.equal(slow.attributes['anthropic_tool_calling.tool.outcome'], 'ok')
  assert.ok(ms(slow.duration) >= 55, `the span covers the call (${ms(slow.duration)} ms)`)
  const [chat1, chat2] = named('chat').sort((a, b) => ms(a.startTime) - ms(b.startTime))
  assert.ok(ms(slow.startTime) >= ms(chat1.endTime) && ms(slow.endTime) <= ms(chat2.startTime), 'between the two requests')
  const failing = execs.find((s) => s.name === `execute_tool ${name}_failing`)
  assert.equal(failing.status.code, SpanStatusCode.ERROR)
  assert.equal(failing.attributes['error.type'], 'tool_error')
  assert.equal(calls.find((c) => parentOf(c) === failing.spanContext().spanId).status.code, SpanStatusCode.ERROR)
})

test('gen_ai.provider.name is aws.bedrock on Bedrock (anthropic on the platforms that run Anthropic\'s API)', async (t) => {
  const { startMockApi } = await import('../stand-in/index.mjs')
  const { TEST_CREDENTIALS } = await import('../stand-in/platforms/index.mjs')
  const bedrock = await startMockApi({ platform: 'bedrock' })
  t.after(() => bedrock.close())
  bedrock.script(reply([text('From Bedrock.')]))
  const model = 'us.anthropic.claude-sonnet-5-5-v1:0'
  const r = await runWithTools('Hi', { provider: 'bedrock', baseURL: bedrock.url, apiKey: TEST_CREDENTIALS.bedrockApiKey, model, tools: [] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  const [agent] = named('invoke_agent')
  assert.equal(agent.attributes['gen_ai.provider.name'], 'aws.bedrock')
  const [chat] = named('chat')
  assert.equal(chat.attributes['gen_ai.provider.name'], 'aws.bedrock')

  exporter.reset()
  const foundry = await startMockApi({ platform: 'foundry' })
  t.after(() => foundry.close())
  foundry.script(reply([text('From Foundry.')]))
  const f = await runWithTools('Hi', { provider: 'foundry', baseURL: foundry.url, apiKey: TEST_CREDENTIALS.foundryApiKey, model: 'claude-sonnet-5-5', tools: [] })
  assert.equal(f.error, null, JSON.stringify(f.error))
  assert.equal(named('chat')[0].attributes['gen_ai.provider.name'], 'anthropic')
})
