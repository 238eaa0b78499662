// The `mcpServers` run option: the API's own MCP connector. What the strict stand-in receives (the
// servers as `mcp_servers`, one `mcp_toolset` each after the other tools, the beta once), the
// `mcp_tool_use` / `mcp_tool_result` blocks Anthropic writes coming back as history with no client
// tool run, every refusal before anything is sent, and the servers' authorization tokens, which
// no error, stream part, span or log line ever shows, even when the API writes them back.
import { test, before, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { runWithTools, streamWithTools } from '../index.mjs'
import { mcpToolResult, mcpToolUse, reply, text, toolUse, THREADS_BETA } from '../stand-in/index.mjs'
import { KEY, at, collect, freshName, orderTool, startApi } from './helpers.mjs'
import { sdkMessage, stepsOf } from './recorded-replay.mjs'
import { textOf } from './secrets.mjs'

const BETA = 'mcp-client-2025-11-20'
const TOKEN = 'mcp-oauth-token-3d9f1a7c5e2b4068'
const DOCS = { name: 'docs', url: 'https://docs.example.com/mcp', authorizationToken: TOKEN, tools: ['search', 'fetch'] }
const FILES = { name: 'files', url: 'https://files.example.com/mcp' }
/** What the API must receive for DOCS and FILES. */
const SENT_SERVERS = [
  { type: 'url', url: DOCS.url, name: 'docs', authorization_token: TOKEN },
  { type: 'url', url: FILES.url, name: 'files' },
]
const SENT_TOOLSETS = [
  { type: 'mcp_toolset', mcp_server_name: 'docs', default_config: { enabled: false }, configs: { search: { enabled: true }, fetch: { enabled: true } } },
  { type: 'mcp_toolset', mcp_server_name: 'files' },
]
const WEB_SEARCH = { type: 'web_search_20250305', name: 'web_search' }

const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
before(() => trace.setGlobalTracerProvider(provider))
after(async () => {
  trace.disable()
  await provider.shutdown()
})
beforeEach(() => exporter.reset())

/** The token occurs in none of `things`. */
function assertNoToken(where, ...things) {
  for (const thing of things) {
    const seen = textOf(thing)
    const found = seen.indexOf(TOKEN)
    if (found !== -1) assert.fail(`the MCP token leaked into ${where}: …${seen.slice(Math.max(0, found - 80), found)}<TOKEN>…`)
  }
}

/** The client tool definition the stand-in receives for an orderTool named `name`. */
const orderDefinition = (name) => ({
  name,
  description: `Look up an order (${name})`,
  input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
})

test('mcpServers is sent as mcp_servers, one mcp_toolset per server after the other tools, and its beta once', async (t) => {
  const api = await startApi(t)
  const tool = freshName('order')
  const calls = orderTool(tool)
  api.script(reply([toolUse(tool, { orderId: '4821' })]), reply([text('Shipped.')]))
  const options = { tools: [tool], serverTools: [WEB_SEARCH], mcpServers: [DOCS, FILES], betas: ['files-api-2025-04-14', BETA] }
  const r = await runWithTools('Where is order 4821?', at(api, options))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(r.data.text, 'Shipped.')
  assert.equal(calls.length, 1)
  assert.equal(api.requests.length, 2)
  for (const request of api.requests) {
    // The tools go with the request that starts the API's thread, which holds them for the next.
    assert.deepEqual(request.fullBody.tools, [orderDefinition(tool), WEB_SEARCH, ...SENT_TOOLSETS])
    assert.deepEqual(request.body.mcp_servers, SENT_SERVERS)
    assert.deepEqual(request.betas, ['files-api-2025-04-14', BETA, THREADS_BETA], 'the beta given and the ones the features need: once')
    // Byte for byte: the keys in the API's documented order.
    assert.ok(request.rawBody.includes(`"mcp_servers":[{"type":"url","url":"${DOCS.url}","name":"docs","authorization_token":"${TOKEN}"}`), request.rawBody)
  }
  assert.deepEqual(api.requests[0].body.tools, api.requests[0].fullBody.tools)
  assert.ok(api.requests[0].rawBody.includes('{"type":"mcp_toolset","mcp_server_name":"docs","default_config":{"enabled":false},"configs":{"search":{"enabled":true},"fetch":{"enabled":true}}}'))
  assert.equal(api.requests[1].body.tools, undefined)
  // Without the option: neither the field, the toolsets nor the beta.
  api.script(reply([text('Hi.')]))
  assert.equal((await runWithTools('Hi', at(api, { tools: [] }))).error, null)
  const plain = api.requests[2]
  assert.equal('mcp_servers' in plain.body, false)
  assert.equal('tools' in plain.body, false)
  assert.deepEqual(plain.betas, [THREADS_BETA])
})

test('with no other tool the toolsets are the tools; streamWithTools sends the same request, streamed', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('Ready.')]))
  const stream = streamWithTools('Hi', at(api, { tools: [], mcpServers: [DOCS, FILES] }))
  const parts = await collect(stream)
  const result = await stream.result
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(result.data.text, 'Ready.')
  const [request] = api.requests
  assert.equal(request.body.stream, true)
  assert.deepEqual(request.body.tools, SENT_TOOLSETS)
  assert.deepEqual(request.body.mcp_servers, SENT_SERVERS)
  assert.deepEqual(request.betas, [BETA, THREADS_BETA])
  assertNoToken('the stream parts', parts)
})

test('an MCP call Anthropic ran is history: the run ends with its text, the blocks in messages, no client tool run', async (t) => {
  const api = await startApi(t)
  const tool = freshName('order')
  const calls = orderTool(tool)
  for (const streamed of [false, true]) {
    api.reset()
    const use = mcpToolUse('docs', 'search', { q: 'refund policy' })
    const blocks = [text('Let me look.'), use, mcpToolResult(use.id, 'Refunds within 30 days.'), text('You have 30 days.')]
    api.script(reply(blocks), reply([text('You are welcome.')]))
    const options = at(api, { tools: [tool], mcpServers: [DOCS] })
    const first = streamed ? await streamWithTools('What is the refund policy?', options).result : await runWithTools('What is the refund policy?', options)
    assert.equal(first.error, null, JSON.stringify(first.error))
    assert.equal(first.data.text, 'Let me look.You have 30 days.')
    assert.equal(first.data.stopReason, 'end_turn')
    assert.deepEqual(first.data.toolCalls, [])
    assert.equal(calls.length, 0, 'Anthropic ran the MCP call: no client tool runs')
    assert.equal(api.requests.length, 1, 'an MCP call is not a tool round')
    assert.deepEqual(first.data.messages.at(-1), { role: 'assistant', content: blocks })
    // Sent back with a new user message, the blocks pass the stand-in's rules, unchanged.
    const next = [...first.data.messages, { role: 'user', content: 'Thanks!' }]
    const second = await runWithTools(next, options)
    assert.equal(second.error, null, JSON.stringify(second.error))
    assert.deepEqual(api.requests[1].body.messages[1].content, blocks)
    // Without the connector (and its beta) the API refuses that history.
    api.script(reply([text('unused')]))
    const refused = await runWithTools(next, at(api, { tools: [tool] }))
    assert.equal(refused.error?.code, 'invalid_request')
    assert.match(refused.error.message, /`mcp_tool_use` block requires the `mcp-client-2025-11-20` beta/)
  }
})

test('the recorded MCP stream of the real API assembles as the official SDK does and goes back as history', async (t) => {
  const api = await startApi(t)
  const [step] = stepsOf('anthropic-mcp.1.chunks.txt')
  api.script(step, reply([text('Bye.')]))
  const options = at(api, { tools: [], mcpServers: [{ name: 'echo', url: 'https://echo.example.com/mcp' }] })
  const result = await streamWithTools('Call the echo tool.', options).result
  assert.equal(result.error, null, JSON.stringify(result.error))
  const expected = (await sdkMessage(step.recordedEvents)).content
  assert.deepEqual(expected.map((b) => b.type), ['mcp_tool_use', 'mcp_tool_result', 'text'])
  assert.deepEqual(expected[0].input, { message: 'hello world' })
  assert.deepEqual(result.data.messages.at(-1).content, expected)
  const again = await runWithTools([...result.data.messages, { role: 'user', content: 'Thanks.' }], options)
  assert.equal(again.error, null, JSON.stringify(again.error))
  assert.deepEqual(api.requests[1].body.messages[1].content, expected)
})

test('every bad mcpServers value is invalid_request naming the field; nothing is sent and the token is never shown', async (t) => {
  const api = await startApi(t)
  const server = (extra) => [{ ...DOCS, ...extra }]
  const cases = [
    [DOCS, 'Option mcpServers must be an array of servers'],
    ['docs', 'Option mcpServers must be an array'],
    [[TOKEN], 'Option mcpServers[0] must be an object { name, url, authorizationToken?, tools? }; got a string'],
    [[null], 'Option mcpServers[0] must be an object'],
    [[{ url: DOCS.url, authorizationToken: TOKEN }], 'Option mcpServers[0] has no name'],
    [server({ name: 7 }), 'Option mcpServers[0].name must be a non-empty string; got 7'],
    [server({ name: '' }), 'Option mcpServers[0].name must be a non-empty string'],
    [[DOCS, { ...FILES, name: 'docs' }], 'Option mcpServers[1].name "docs" is also the name of mcpServers[0]'],
    [[{ name: 'docs', authorizationToken: TOKEN }], 'Option mcpServers[0] has no url'],
    [server({ url: 443 }), 'Option mcpServers[0].url must be an https:// URL; got a number'],
    [server({ url: 'http://docs.example.com/mcp' }), 'Option mcpServers[0].url must be https://'],
    [server({ url: 'ftp://docs.example.com/mcp' }), 'Option mcpServers[0].url must be https://'],
    [server({ url: 'docs.example.com/mcp' }), 'Option mcpServers[0].url is not a URL'],
    [server({ url: '::garbage::' }), 'Option mcpServers[0].url is not a URL'],
    [server({ authorizationToken: 12345 }), 'Option mcpServers[0].authorizationToken must be a non-empty string; got a number'],
    [server({ authorizationToken: '' }), 'Option mcpServers[0].authorizationToken must be a non-empty string'],
    [server({ tools: 'search' }), 'Option mcpServers[0].tools must be a non-empty array of the server\'s tool names'],
    [server({ tools: [] }), 'Option mcpServers[0].tools is empty'],
    [server({ tools: ['search', ''] }), 'Option mcpServers[0].tools[1] must be a tool name (a non-empty string)'],
    [server({ tools: ['search', 5] }), 'Option mcpServers[0].tools[1] must be a tool name (a non-empty string); got 5'],
    [server({ authorization_token: TOKEN }), 'Option mcpServers[0] has an unknown key "authorization_token"; a server takes name, url, authorizationToken, tools'],
    [server({ headers: { authorization: TOKEN } }), 'Option mcpServers[0] has an unknown key "headers"'],
  ]
  for (const [mcpServers, expected] of cases) {
    for (const streamed of [false, true]) {
      const options = at(api, { tools: [], mcpServers })
      const r = streamed ? await streamWithTools('Hi', options).result : await runWithTools('Hi', options)
      const what = `${JSON.stringify(mcpServers).replaceAll(TOKEN, '<TOKEN>')}${streamed ? ' (streamed)' : ''}`
      assert.equal(r.data, null, what)
      assert.equal(r.error.code, 'invalid_request', what)
      assert.ok(r.error.message.includes(expected), `${what}: ${r.error.message}`)
      assert.match(r.error.message, /Nothing was sent\.$/)
      assertNoToken(what, r)
      assert.ok(!r.error.message.includes('docs.example.com'), `no message quotes the URL: ${r.error.message}`)
    }
  }
  // extraBody may not send servers of its own beside them.
  const both = await runWithTools('Hi', at(api, { tools: [], mcpServers: [DOCS], extraBody: { mcp_servers: [] } }))
  assert.equal(both.error.code, 'invalid_request')
  assert.match(both.error.message, /^Option extraBody sets "mcp_servers"/)
  assert.equal(api.requests.length, 0)
})

/**
 * Meets `step` three times (runWithTools, streamWithTools part by part, streamWithTools as a UI
 * message stream) and returns the three error messages, none holding the token.
 */
async function everyWay(api, step) {
  api.script(step, step, step)
  const options = at(api, { tools: [], mcpServers: [DOCS], maxRetries: 0, telemetry: { recordContent: true } })
  const plain = await runWithTools('Hi', options)
  assert.equal(plain.data, null)
  assertNoToken('runWithTools', plain)
  const stream = streamWithTools('Hi', options)
  const parts = await collect(stream)
  assert.equal(parts.at(-1).type, 'finish')
  assertNoToken('the stream parts', parts, await stream.result)
  const ui = streamWithTools('Hi', options)
  const body = await ui.toUIMessageStreamResponse({ onError: (error) => error.message }).text()
  assert.match(body, /"type":"error"/)
  assertNoToken('the UI message stream', body, await ui.result)
  assertNoToken('the spans', exporter.getFinishedSpans().map((s) => [s.name, s.attributes, s.status, s.events]))
  assert.ok(exporter.getFinishedSpans().length > 0, 'the runs were traced')
  assert.equal(api.requests.length, 3)
  for (const request of api.requests) assert.equal(request.body.mcp_servers[0].authorization_token, TOKEN, 'the token was sent')
  return [plain.error.message, parts.at(-1).result.error.message, (await ui.result).error.message]
}

/** An API that writes the request's token into its error message, as a gateway might. */
const echoing = (status, type) => (body) => ({
  status,
  error: { type, message: `MCP server "docs" refused the token ${body.mcp_servers[0].authorization_token}` },
})

test('an API error that echoes the token passes it on nowhere: not the error, a stream part, the UI stream or a span', async (t) => {
  for (const [status, type] of [[400, 'invalid_request_error'], [401, 'authentication_error']]) {
    const api = await startApi(t)
    const messages = await everyWay(api, echoing(status, type))
    for (const message of messages) assert.ok(message.includes('refused the token [redacted]'), message)
  }
})

test('an echo in JSON escapes, in an error event after HTTP 200, or in a reply\'s id and model is redacted too', async (t) => {
  const escaped = [...TOKEN].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
  const api = await startApi(t)
  const body = `{"type":"error","error":{"type":"invalid_request_error","message":"bad token ${escaped}"}}`
  for (const message of await everyWay(api, { status: 400, body })) assert.ok(message.includes('bad token [redacted]'), message)

  api.reset()
  const sse = { ...reply([text('Partly shown.')]), sseError: { type: 'api_error', message: `token ${TOKEN} rejected` }, sseErrorAfter: 3 }
  api.script(sse)
  const stream = streamWithTools('Hi', at(api, { tools: [], mcpServers: [DOCS], maxRetries: 0 }))
  const parts = await collect(stream)
  const { error } = await stream.result
  assert.match(error.message, /in the stream after HTTP 200/)
  assert.ok(error.message.includes('token [redacted] rejected'), error.message)
  assertNoToken('the stream parts', parts, error)

  api.reset()
  exporter.reset()
  const echoed = { id: `msg_${TOKEN}`, type: 'message', role: 'assistant', model: `gateway ${TOKEN}`, content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }
  api.script({ status: 200, body: echoed })
  const r = await runWithTools('Hi', at(api, { tools: [], mcpServers: [DOCS], telemetry: { recordContent: true } }))
  assert.equal(r.error, null)
  const spans = exporter.getFinishedSpans()
  assert.ok(spans.some((s) => s.name.startsWith('chat ')), 'a chat span was made')
  assertNoToken('the spans', spans.map((s) => [s.name, s.attributes, s.status]))
})

test('log lines (ANTHROPIC_TOOL_CALLING_LOG=debug) hold no token, not even in an echoed request id', () => {
  const script = fileURLToPath(new URL('./fixtures/mcp-token-run.mjs', import.meta.url))
  const env = { ...process.env, ANTHROPIC_TOOL_CALLING_LOG: 'debug' }
  const child = spawnSync(process.execPath, [script, KEY, TOKEN], { env, encoding: 'utf8', timeout: 30_000 })
  assert.equal(child.status, 0, child.stderr)
  const failed = child.stderr.split('\n').filter((l) => l.includes('api attempt: failed'))
  assert.equal(failed.length, 4, child.stderr)
  assert.ok(failed.some((l) => l.includes('req_[redacted]')), failed.join('\n'))
  assertNoToken('the log', child.stderr)
  const { plain, parts } = JSON.parse(child.stdout)
  assert.equal(plain.error.code, 'authentication_error')
  assert.ok(plain.error.message.includes('[redacted]'), plain.error.message)
  assert.equal(parts.at(-1).result.error.code, 'authentication_error')
  assertNoToken('the results', child.stdout)
})
