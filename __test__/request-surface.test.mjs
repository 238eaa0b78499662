// The request surface of runWithTools. Every pass-through option reaches the wire exactly
// (parsed and as raw JSON text, keys in the given order), bad types are refused before anything is
// sent, thinking round-trips through a tool loop, onMaxIterations: "answer", containers and the
// summed prompt-cache usage. Each test reads what the strict stand-in API received.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, request } from 'node:http'
import { runWithTools, streamWithTools } from '../index.mjs'
import { reply, text, toolUse, thinking, redactedThinking } from '../stand-in/index.mjs'
import { at, startApi, orderTool, orderSchema, refusedUnsent, toolResults } from './helpers.mjs'

const WEB_SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }

/** `"key":<value's JSON>` as it must appear in the raw request body (compact, keys in the given order). */
const field = (key, value) => `"${key}":${JSON.stringify(value)}`

/** A two-request run: one tool round, then the answer. Returns the result. */
async function twoRounds(api, tool, extra) {
  api.script(reply([toolUse(tool, { orderId: '1' })]), reply([text('Shipped.')]))
  return runWithTools('Where is order 1?', at(api, { tools: [tool], ...extra }))
}

/** Records the usage of every reply the stand-in sends (it does not keep it in its records). */
function recordUsage(api) {
  const usages = []
  api.server.on('request', (_req, res) => {
    const end = res.end
    res.end = function (chunk, ...rest) {
      if (chunk !== undefined && res.statusCode === 200) {
        try {
          const body = JSON.parse(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk))
          if (body && body.usage) usages.push(body.usage)
        } catch {}
      }
      return end.call(this, chunk, ...rest)
    }
  })
  return usages
}

const sum = (usages, key) => usages.reduce((n, u) => n + (u[key] ?? 0), 0)

// --- 1. pass-through options reach the wire exactly ------------------------------------------------

// Options that need no thinking blocks: checked on both requests of a tool round. A fourth entry:
// options the request needs besides (the API takes a clearing edit only with its beta).
const PASS_THROUGH = [
  ['stopSequences', 'stop_sequences', ['END', '\n\nHuman:']],
  // Removed in API version 2026-10-21: sent under the version that keeps them.
  ['topP', 'top_p', 0.9, { apiVersion: '2023-06-01' }],
  ['topK', 'top_k', 5, { apiVersion: '2023-06-01' }],
  ['metadata', 'metadata', { user_id: 'u-42' }],
  ['serviceTier', 'service_tier', 'standard_only'],
  ['cacheControl', 'cache_control', { ttl: '5m', type: 'ephemeral' }],
  ['outputConfig', 'output_config', { effort: 'low' }],
  ['contextManagement', 'context_management', { edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 2 } }] }, { betas: ['context-management-2025-06-27'] }],
]

for (const [option, wire, value, needs = {}] of PASS_THROUGH) {
  test(`${option} is sent as ${wire}, exactly as given, on every request`, async (t) => {
    const api = await startApi(t)
    const tool = `pt_${option}`
    orderTool(tool)
    const r = await twoRounds(api, tool, { [option]: value, ...needs })
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(api.requests.length, 2)
    for (const req of api.requests) {
      assert.deepEqual(req.body[wire], value)
      assert.ok(req.rawBody.includes(field(wire, value)), `raw body lacks ${field(wire, value)}: ${req.rawBody}`)
      if (option !== wire) assert.ok(!(option in req.body), `the option name ${option} itself must not be sent`)
    }
  })
}

for (const [label, value] of [
  ['enabled', { type: 'enabled', budget_tokens: 2048 }],
  ['enabled, keys in another order', { budget_tokens: 2048, type: 'enabled' }],
  ['adaptive', { type: 'adaptive' }],
]) {
  test(`thinking (${label}) is sent as given`, async (t) => {
    const api = await startApi(t)
    api.script(reply([thinking('Easy.'), text('Hello.')]))
    const r = await runWithTools('Hi', at(api, { tools: [], thinking: value, maxTokens: 4096 }))
    assert.equal(r.error, null, JSON.stringify(r.error))
    const { body, rawBody } = api.requests[0]
    assert.deepEqual(body.thinking, value)
    assert.equal(body.max_tokens, 4096)
    assert.ok(rawBody.includes(field('thinking', value)), `raw body lacks ${field('thinking', value)}: ${rawBody}`)
    assert.equal(r.data.reasoning, 'Easy.')
  })
}

test('betas are sent comma-joined as the anthropic-beta header on every request', async (t) => {
  const api = await startApi(t)
  orderTool('pt_betas')
  const r = await twoRounds(api, 'pt_betas', { betas: ['a-2025-01-01', 'b-2025-02-02'] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  for (const req of api.requests) {
    // After the given ones, the beta of the API's thread the run keeps.
    assert.equal(req.headers['anthropic-beta'], 'a-2025-01-01,b-2025-02-02,message-threads-2026-08-12')
    assert.deepEqual(req.betas, ['a-2025-01-01', 'b-2025-02-02', 'message-threads-2026-08-12'])
    assert.ok(!('betas' in req.body))
  }
})

test('headers are sent as extra request headers on every request, the own ones untouched', async (t) => {
  const api = await startApi(t)
  orderTool('pt_headers')
  const r = await twoRounds(api, 'pt_headers', { headers: { 'x-trace-id': 't1', 'X-Tenant': 'acme' } })
  assert.equal(r.error, null, JSON.stringify(r.error))
  for (const req of api.requests) {
    assert.equal(req.headers['x-trace-id'], 't1')
    assert.equal(req.headers['x-tenant'], 'acme')
    assert.equal(req.headers['anthropic-version'], '2026-10-21')
    assert.ok(!('headers' in req.body))
  }
})

test('extraBody is merged into the body (a new field), on every request', async (t) => {
  const api = await startApi(t)
  orderTool('pt_extra')
  const r = await twoRounds(api, 'pt_extra', { extraBody: { inference_geo: 'us' } })
  assert.equal(r.error, null, JSON.stringify(r.error))
  for (const req of api.requests) {
    assert.equal(req.body.inference_geo, 'us')
    assert.ok(req.rawBody.includes(field('inference_geo', 'us')), req.rawBody)
    assert.ok(!('extraBody' in req.body))
  }
})

test('extraBody is merged last: it replaces a field the options set, which is sent once', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('ok')]))
  const r = await runWithTools('Hi', at(api, { tools: [], maxTokens: 4096, extraBody: { max_tokens: 1000, inference_geo: 'eu' } }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  const { body, rawBody } = api.requests[0]
  assert.equal(body.max_tokens, 1000)
  assert.equal(body.inference_geo, 'eu')
  assert.equal(rawBody.split('"max_tokens":').length - 1, 1, `max_tokens must appear once: ${rawBody}`)
})

test('serverTools are appended after the client tools, as given', async (t) => {
  const api = await startApi(t)
  orderTool('pt_client_tool')
  api.script(reply([text('ok')]))
  const r = await runWithTools('Hi', at(api, { tools: ['pt_client_tool'], serverTools: [WEB_SEARCH] }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  const { body, rawBody } = api.requests[0]
  assert.equal(body.tools.length, 2)
  assert.equal(body.tools[0].name, 'pt_client_tool')
  assert.deepEqual(body.tools[0].input_schema, orderSchema)
  assert.deepEqual(body.tools[1], WEB_SEARCH)
  assert.ok(rawBody.includes(JSON.stringify(WEB_SEARCH)), rawBody)
  assert.ok(rawBody.indexOf('"pt_client_tool"') < rawBody.indexOf('"web_search_20250305"'))
})

test('container is sent as container on the first request', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('ok')]))
  const r = await runWithTools('Hi', at(api, { tools: [], container: 'cont_abc123' }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(api.requests[0].container, 'cont_abc123')
  assert.equal(api.requests[0].body.container, 'cont_abc123')
  assert.ok(api.requests[0].rawBody.includes(field('container', 'cont_abc123')))
})

// --- 2. bad types are refused, nothing is sent ------------------------------------------------------

const BAD = [
  ['thinking', 'on'],
  ['stopSequences', 'END'],
  ['topP', '0.9', { apiVersion: '2023-06-01' }],
  ['topK', 1.5, { apiVersion: '2023-06-01' }],
  ['metadata', ['u1']],
  ['serviceTier', 1],
  ['cacheControl', true],
  ['outputConfig', 'low'],
  ['contextManagement', 1],
  ['betas', 'a-2025-01-01'],
  ['headers', ['x-trace-id']],
  ['extraBody', [1]],
  ['serverTools', { type: 'web_search_20250305', name: 'web_search' }],
  ['container', 5],
]

for (const [option, value, needs = {}] of BAD) {
  test(`${option}: ${JSON.stringify(value)} is refused as invalid_request naming the option`, async (t) => {
    await refusedUnsent(t, { [option]: value, ...needs }, option, 'must be')
  })
}

for (const name of ['x-api-key', 'X-API-KEY', 'authorization', 'Authorization', 'anthropic-version', 'Anthropic-Version', 'content-type', 'Content-Type']) {
  test(`headers may not replace ${name}`, async (t) => {
    await refusedUnsent(t, { headers: { 'x-trace-id': 't1', [name]: 'value' } }, 'headers', name)
  })
}

for (const key of ['model', 'messages', 'tools', 'stream']) {
  test(`extraBody may not set ${key}`, async (t) => {
    const value = { model: 'claude-other', messages: [{ role: 'user', content: 'x' }], tools: [], stream: true }[key]
    await refusedUnsent(t, { extraBody: { inference_geo: 'us', [key]: value } }, 'extraBody', key)
  })
}

test('onMaxIterations: "ask" is refused', async (t) => {
  await refusedUnsent(t, { onMaxIterations: 'ask' }, 'onMaxIterations')
})

// --- 3. thinking on through a tool loop -------------------------------------------------------------

const THINKING = { type: 'enabled', budget_tokens: 2048 }

test('thinking + tools: the thinking block goes back unchanged, reasoning is joined, the history re-sends', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('get_order_x')
  const first = thinking('Let me look up the order.')
  const use = toolUse('get_order_x', { orderId: '1' }, 'toolu_think1')
  api.script(reply([first, use]), reply([thinking('It shipped.'), text('Shipped.')]))
  // The whole history on the wire (without the API's thread, which would hold the thinking block).
  const r = await runWithTools('Where is order 1?', at(api, { tools: ['get_order_x'], thinking: THINKING, maxTokens: 4096, apiThreads: false }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(calls.length, 1)
  assert.equal(api.requests.length, 2)
  const sent = api.requests[1].body
  assert.deepEqual(sent.thinking, THINKING)
  const assistant = sent.messages[1]
  assert.equal(assistant.role, 'assistant')
  assert.deepEqual(assistant.content[0], first, 'the assistant turn starts with its thinking block, signature unchanged')
  assert.ok(api.requests[1].rawBody.includes(JSON.stringify(first)))
  assert.deepEqual(assistant.content[1], use)
  assert.equal(r.data.text, 'Shipped.')
  assert.equal(r.data.reasoning, 'Let me look up the order.\n\nIt shipped.')

  // data.messages plus a new user message, thinking still on: accepted.
  api.script(reply([thinking('Order 2 too.'), text('Order 2 shipped as well.')]))
  const again = await runWithTools(
    [...r.data.messages, { role: 'user', content: 'And order 2?' }],
    at(api, { tools: ['get_order_x'], thinking: THINKING, maxTokens: 4096 }),
  )
  assert.equal(again.error, null, JSON.stringify(again.error))
  assert.equal(api.requests[2].status, 200)
  assert.deepEqual(api.requests[2].body.messages.slice(0, r.data.messages.length), r.data.messages)
  assert.equal(again.data.reasoning, 'Order 2 too.')
})

test('thinking + tools: a redacted_thinking block round-trips unchanged', async (t) => {
  const api = await startApi(t)
  orderTool('get_order_redacted')
  const redacted = redactedThinking()
  api.script(reply([redacted, toolUse('get_order_redacted', { orderId: '1' })]), reply([text('Shipped.')]))
  // The whole history on the wire (without the API's thread, which would hold the block).
  const r = await runWithTools('Where is order 1?', at(api, { tools: ['get_order_redacted'], thinking: THINKING, maxTokens: 4096, apiThreads: false }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.deepEqual(api.requests[1].body.messages[1].content[0], redacted)
  assert.ok(api.requests[1].rawBody.includes(JSON.stringify(redacted)))
  assert.deepEqual(r.data.messages[1].content[0], redacted)
  assert.equal(r.data.reasoning, '')
})

test('thinking + a forcing toolChoice: the API refuses it and the 400 is passed on as invalid_request', async (t) => {
  const api = await startApi(t)
  orderTool('get_order_forced')
  api.script(reply([text('must not be reached')]))
  const r = await runWithTools('Hi', at(api, { tools: ['get_order_forced'], thinking: THINKING, maxTokens: 4096, toolChoice: { type: 'any' } }))
  assert.equal(r.error?.code, 'invalid_request', JSON.stringify(r.error))
  assert.equal(r.error.status, 400)
  assert.match(r.error.message, /Thinking may not be enabled when tool_choice forces tool use/)
  assert.equal(api.requests.length, 1, 'a 400 is not retried')
  assert.deepEqual(api.requests[0].body.tool_choice, { type: 'any' })
})

// --- 4. onMaxIterations ------------------------------------------------------------------------------

test('onMaxIterations "answer": calls past the limit are not run, told why, and tool_choice none gets the answer', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('limit_tool')
  api.script(
    reply([toolUse('limit_tool', { orderId: '1' }, 'toolu_l1')]),
    reply([toolUse('limit_tool', { orderId: '2' }, 'toolu_l2'), toolUse('limit_tool', { orderId: '3' }, 'toolu_l3')]),
    reply([text('Order 1 shipped; I could not check the others.')]),
  )
  const r = await runWithTools('Check orders 1, 2 and 3', at(api, { tools: ['limit_tool'], maxToolIterations: 1, onMaxIterations: 'answer' }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.deepEqual(calls.map((c) => c.input.orderId), ['1'], 'the calls past the limit are not run')
  assert.equal(api.requests.length, 3)
  assert.equal(api.requests[1].body.tool_choice, undefined)
  const results = toolResults(api, 2)
  assert.deepEqual(results.map((b) => b.tool_use_id), ['toolu_l2', 'toolu_l3'])
  for (const b of results) {
    assert.equal(b.is_error, true)
    const said = typeof b.content === 'string' ? b.content : JSON.stringify(b.content)
    assert.match(said, /limit_tool/)
    assert.match(said, /limit/i)
    assert.match(said, /maxToolIterations|tool.round/i)
  }
  assert.deepEqual(api.requests[2].body.tool_choice, { type: 'none' })
  assert.ok(api.requests[2].rawBody.includes('"tool_choice":{"type":"none"}'))
  assert.equal(r.data.limitReached, true)
  assert.equal(r.data.text, 'Order 1 shipped; I could not check the others.')
  assert.equal(r.data.stopReason, 'end_turn')
  assert.deepEqual(r.data.toolCalls.map((c) => [c.toolUseId, c.isError === true]), [['toolu_l1', false], ['toolu_l2', true], ['toolu_l3', true]])
  assert.ok(r.data.toolCalls[1].error, 'a call not run says why')
  // The history: prompt, ask, results, ask past the limit, its not-run results, the answer.
  assert.deepEqual(r.data.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user', 'assistant'])
  assert.deepEqual(r.data.messages[4].content, results)
  // ... and it re-sends with a new user message.
  api.script(reply([text('Sure.')]))
  const again = await runWithTools([...r.data.messages, { role: 'user', content: 'Try 2 again' }], at(api, { tools: ['limit_tool'] }))
  assert.equal(again.error, null, JSON.stringify(again.error))
  assert.equal(api.requests[3].status, 200)
})

test('onMaxIterations "answer": tool_choice none drops the option\'s disable_parallel_tool_use', async (t) => {
  const api = await startApi(t)
  orderTool('limit_tool_dp')
  api.script(
    reply([toolUse('limit_tool_dp', { orderId: '1' })]),
    reply([toolUse('limit_tool_dp', { orderId: '2' })]),
    reply([text('Done.')]),
  )
  const toolChoice = { type: 'auto', disable_parallel_tool_use: true }
  const r = await runWithTools('x', at(api, { tools: ['limit_tool_dp'], maxToolIterations: 1, onMaxIterations: 'answer', toolChoice }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.deepEqual(api.requests[0].body.tool_choice, toolChoice)
  assert.deepEqual(api.requests[1].body.tool_choice, toolChoice)
  assert.deepEqual(api.requests[2].body.tool_choice, { type: 'none' })
  assert.equal(r.data.limitReached, true)
})

test('without onMaxIterations the limit is max_iterations_exceeded and the late calls are not run', async (t) => {
  const api = await startApi(t)
  const calls = orderTool('limit_tool_err')
  api.script(reply([toolUse('limit_tool_err', { orderId: '1' })]), reply([toolUse('limit_tool_err', { orderId: '2' })]))
  const r = await runWithTools('x', at(api, { tools: ['limit_tool_err'], maxToolIterations: 1 }))
  assert.equal(r.error?.code, 'max_iterations_exceeded', JSON.stringify(r.error))
  assert.equal(calls.length, 1)
  assert.equal(api.requests.length, 2)
  assert.equal(r.data, null)
})

test('a run within the limit has no limitReached', async (t) => {
  const api = await startApi(t)
  orderTool('limit_tool_ok')
  const r = await twoRounds(api, 'limit_tool_ok', { maxToolIterations: 1, onMaxIterations: 'answer' })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(r.data.limitReached, undefined)
  assert.equal(api.requests.length, 2)
})

// --- 5. container ------------------------------------------------------------------------------------

test('a reply with a container: the next request carries its id, data.container is the last one', async (t) => {
  const api = await startApi(t)
  orderTool('in_container')
  const expires = '2026-11-30T12:00:00Z'
  api.script(
    reply([toolUse('in_container', { orderId: '1' })], { container: { id: 'cont_1', expires_at: expires } }),
    { ...reply([text('Done.')]), requireContainer: 'cont_1' },
  )
  const r = await runWithTools('x', at(api, { tools: ['in_container'] }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(api.requests[0].container, undefined)
  assert.equal(api.requests[1].container, 'cont_1')
  assert.ok(api.requests[1].rawBody.includes('"container":"cont_1"'))
  assert.deepEqual(r.data.container, { id: 'cont_1', expiresAt: expires })
})

test('the container option continues a container; a reply naming a new one replaces it', async (t) => {
  const api = await startApi(t)
  orderTool('in_container2')
  const expires = '2026-11-30T13:00:00Z'
  api.script(
    { ...reply([toolUse('in_container2', { orderId: '1' })], { container: { id: 'cont_2', expires_at: expires } }), requireContainer: 'cont_old' },
    { ...reply([text('Done.')]), requireContainer: 'cont_2' },
  )
  const r = await runWithTools('x', at(api, { tools: ['in_container2'], container: 'cont_old' }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.deepEqual(api.requests.map((q) => q.container), ['cont_old', 'cont_2'])
  assert.deepEqual(r.data.container, { id: 'cont_2', expiresAt: expires })
})

test('without any container there is no data.container and none is sent', async (t) => {
  const api = await startApi(t)
  orderTool('no_container')
  const r = await twoRounds(api, 'no_container', {})
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(r.data.container, undefined)
  for (const req of api.requests) assert.ok(!('container' in req.body))
})

// --- 6. prompt-cache usage ---------------------------------------------------------------------------

test('cacheControl: the first run creates the cache, the same conversation continued reads it', async (t) => {
  const api = await startApi(t)
  const usages = recordUsage(api)
  api.script(reply([text('Hello there.')]))
  const system = 'You are a careful order assistant. '.repeat(20)
  const first = await runWithTools('Hi', at(api, { tools: [], system, cacheControl: { type: 'ephemeral' } }))
  assert.equal(first.error, null, JSON.stringify(first.error))
  assert.equal(usages.length, 1)
  assert.ok(usages[0].cache_creation_input_tokens > 0)
  assert.equal(first.data.usage.cacheCreationInputTokens, usages[0].cache_creation_input_tokens)
  assert.equal(first.data.usage.cacheReadInputTokens, 0)

  api.script(reply([text('Still here.')]))
  const second = await runWithTools(
    [...first.data.messages, { role: 'user', content: 'Are you there?' }],
    at(api, { tools: [], system, cacheControl: { type: 'ephemeral' } }),
  )
  assert.equal(second.error, null, JSON.stringify(second.error))
  assert.equal(usages.length, 2)
  assert.ok(usages[1].cache_read_input_tokens > 0)
  assert.equal(second.data.usage.cacheReadInputTokens, usages[1].cache_read_input_tokens)
  assert.equal(second.data.usage.cacheCreationInputTokens, usages[1].cache_creation_input_tokens)
})

test('cacheControl: a two-round run sums cache usage over its requests', async (t) => {
  const api = await startApi(t)
  const usages = recordUsage(api)
  orderTool('cached_tool')
  const r = await twoRounds(api, 'cached_tool', { cacheControl: { type: 'ephemeral' } })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(usages.length, 2)
  assert.ok(usages[0].cache_creation_input_tokens > 0)
  assert.ok(usages[1].cache_read_input_tokens > 0)
  assert.deepEqual(r.data.usage, {
    inputTokens: sum(usages, 'input_tokens'),
    outputTokens: sum(usages, 'output_tokens'),
    cacheReadInputTokens: sum(usages, 'cache_read_input_tokens'),
    cacheCreationInputTokens: sum(usages, 'cache_creation_input_tokens'),
  })
  assert.ok(r.data.usage.cacheReadInputTokens > 0)
  assert.ok(r.data.usage.cacheCreationInputTokens > usages[0].cache_creation_input_tokens, 'the second request adds to the cache too')
})

test('without cache_control there is no cache usage', async (t) => {
  const api = await startApi(t)
  const usages = recordUsage(api)
  orderTool('uncached_tool')
  const r = await twoRounds(api, 'uncached_tool', {})
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(usages.length, 2)
  assert.equal(r.data.usage.cacheCreationInputTokens, 0)
  assert.equal(r.data.usage.cacheReadInputTokens, 0)
  assert.equal(r.data.usage.inputTokens, sum(usages, 'input_tokens'))
})

/**
 * A gateway in front of the stand-in that records each request line and passes the request on to
 * `/v1/messages` (as a gateway would, after taking its own path and query off).
 */
async function recordingGateway(t, api) {
  const lines = []
  const server = createServer((req, res) => {
    lines.push(`${req.method} ${req.url}`)
    const { port } = new URL(api.url)
    const { host, authorization, ...headers } = req.headers
    const onward = request({ host: '127.0.0.1', port, method: req.method, path: '/v1/messages', headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers)
      answer.pipe(res)
    })
    req.pipe(onward)
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => new Promise((r) => server.close(r)))
  return { url: `http://127.0.0.1:${server.address().port}`, lines }
}

test('a baseURL with a path and a query is requested at {path}/v1/messages?{query}, with or without a trailing slash', async (t) => {
  const api = await startApi(t)
  const gateway = await recordingGateway(t, api)
  for (const base of [`${gateway.url}/proxy?key=gw-key-123456789`, `${gateway.url}/proxy/?key=gw-key-123456789`, `${gateway.url}/a/b?key=gw-key-123456789&x=1`]) {
    api.script(reply([text('hi')]))
    const r = await runWithTools('Hi', { ...at(api), baseURL: base })
    assert.equal(r.error, null, JSON.stringify(r.error))
  }
  api.script(reply([text('hi')]))
  const streamed = streamWithTools('Hi', { ...at(api), baseURL: `${gateway.url}/proxy?key=gw-key-123456789` })
  for await (const _ of streamed);
  assert.equal((await streamed.result).error, null)
  assert.deepEqual(gateway.lines, [
    'POST /proxy/v1/messages?key=gw-key-123456789',
    'POST /proxy/v1/messages?key=gw-key-123456789',
    'POST /a/b/v1/messages?key=gw-key-123456789&x=1',
    'POST /proxy/v1/messages?key=gw-key-123456789',
  ])
})

test('a baseURL with a user, a password or a query is quoted without them: network_error (streamed or not) and a refused option', async () => {
  const secrets = ['alice', 'pw-SECRET-12345', 'KEY-SECRET-6789']
  const clean = (where, message) => {
    for (const secret of secrets) assert.ok(!message.includes(secret), `${secret} in ${where}: ${message}`)
  }
  const base = 'http://alice:pw-SECRET-12345@127.0.0.1:9/proxy?key=KEY-SECRET-6789'
  const options = { apiKey: 'sk-ant-test', baseURL: base, maxRetries: 0 }
  const plain = await runWithTools('Hi', options)
  assert.equal(plain.error.code, 'network_error', JSON.stringify(plain.error))
  assert.match(plain.error.message, /http:\/\/127\.0\.0\.1:9\/proxy\/v1\/messages/)
  clean('runWithTools', JSON.stringify(plain))
  const stream = streamWithTools('Hi', options)
  const parts = []
  for await (const part of stream) parts.push(part)
  assert.equal(parts.at(-1).result.error.code, 'network_error')
  clean('streamWithTools', JSON.stringify(parts))
  for (const bad of ['ftp://alice:pw-SECRET-12345@127.0.0.1/x?key=KEY-SECRET-6789', 'http://alice:pw-SECRET-12345@127.0.0.1/v1?key=KEY-SECRET-6789']) {
    const refused = await runWithTools('Hi', { ...options, baseURL: bad })
    assert.equal(refused.error.code, 'invalid_request')
    assert.match(refused.error.message, /Option baseURL "(ftp|http):\/\/127\.0\.0\.1\/(x|v1)"/)
    clean('the refusal', refused.error.message)
  }
})
