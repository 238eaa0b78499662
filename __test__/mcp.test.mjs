// MCP servers as tools: registering one (Streamable HTTP and stdio), its tools in listTools and in a
// run, validation before the call, what its results and failures become, bad options, bad auth,
// redirects and names that cannot be registered. The servers are real ones written with the
// official TypeScript SDK (fixtures/mcp-server.mjs), on 127.0.0.1 or as a stdio child.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { registerMcpServer, unregisterMcpServer, registerTool, unregisterTool, listTools, runWithTools } from '../index.mjs'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { startMcpHttpServer, PDF_BASE64, PNG_BASE64 } from './fixtures/mcp-server.mjs'
import { at, startApi, freshName, toolResults, KEY } from './helpers.mjs'

const FIXTURE = fileURLToPath(new URL('./fixtures/mcp-server.mjs', import.meta.url))

/** An HTTP fixture server for one test, closed after it. */
async function httpServer(t, options) {
  const server = await startMcpHttpServer(options)
  t.after(() => server.close())
  return server
}

/** Registers a server under a fresh name (and prefix), unregistered after the test. */
async function register(t, options) {
  const name = options.name ?? freshName('srv')
  const names = await registerMcpServer({ ...options, name })
  t.after(() => unregisterMcpServer(name))
  return { name, names }
}

const callsOf = (server) => server.log.filter((e) => e.kind === 'call')

test('registering an HTTP server lists every page of its tools and offers them in listTools as tool definitions', async (t) => {
  const server = await httpServer(t, { pageSize: 2 })
  const prefix = `${freshName('p')}_`
  const { names } = await register(t, { url: server.url, prefix, tools: ['get_order_status', 'add', 'failing', 'empty', 'image'] })
  assert.deepEqual(names.sort(), ['add', 'empty', 'failing', 'get_order_status', 'image'].map((n) => prefix + n), 'the tools kept, under their prefixed names')
  const cursors = server.log.filter((e) => e.kind === 'list').map((e) => e.cursor)
  assert.ok(cursors.length >= 5, `every page was asked for: ${JSON.stringify(cursors)}`)
  assert.equal(cursors[0], null)
  const def = listTools().find((d) => d.name === `${prefix}get_order_status`)
  assert.deepEqual(Object.keys(def).sort(), ['description', 'input_schema', 'name'])
  assert.equal(def.input_schema.type, 'object')
  assert.deepEqual(def.input_schema.required, ['order_id'])
  const init = server.log.find((e) => e.kind === 'initialize')
  assert.equal(init.clientInfo.name, 'anthropic-tool-calling')
})

test("a call goes to the server as tools/call and its text is the tool's output; the input is validated first", async (t) => {
  const server = await httpServer(t)
  const prefix = `${freshName('c')}_`
  await register(t, { url: server.url, prefix })
  const api = await startApi(t)
  const name = `${prefix}get_order_status`
  api.script(reply([toolUse(name, { order_id: 'abc' }, 'toolu_bad'), toolUse(name, { order_id: '4821' }, 'toolu_ok')]), reply([text('Order 4821 has shipped.')]))
  const result = await runWithTools("What's the status of order #4821?", at(api, { onToolError: 'continue' }))
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(result.data.text, 'Order 4821 has shipped.')
  assert.deepEqual(callsOf(server).map((c) => [c.name, c.arguments]), [['get_order_status', { order_id: '4821' }]], 'the bad input never reached the server')
  assert.equal(callsOf(server)[0].meta['anthropic-tool-calling/toolUseId'], 'toolu_ok', "the call's id is in _meta, a key to do it once by")
  const [bad, ok] = toolResults(api, 1)
  assert.equal(bad.is_error, true)
  assert.match(bad.content, /Invalid input for .*get_order_status: order_id/)
  assert.equal(ok.content, 'Order 4821: shipped')
  assert.equal(ok.is_error, undefined)
  const call = result.data.toolCalls.find((c) => c.toolUseId === 'toolu_ok')
  assert.deepEqual({ toolName: call.toolName, input: call.input, output: call.output }, { toolName: name, input: { order_id: '4821' }, output: 'Order 4821: shipped' })

  // In "stop" mode the same bad input ends the run before anything is sent to the server.
  api.script(reply([toolUse(name, { order_id: 'abc' }, 'toolu_bad2')]))
  const stopped = await runWithTools('Again', at(api))
  assert.equal(stopped.error.code, 'tool_validation_error')
  assert.equal(stopped.error.toolName, name)
  assert.equal(callsOf(server).length, 1)
})

test("isError is the tool's own words for the model in continue mode and tool_execution_error in stop mode", async (t) => {
  const server = await httpServer(t)
  const prefix = `${freshName('e')}_`
  await register(t, { url: server.url, prefix })
  const api = await startApi(t)
  const name = `${prefix}failing`
  api.script(reply([toolUse(name, {}, 'toolu_f1')]), reply([text('The order service is down; try again in 5 minutes.')]))
  const told = await runWithTools('Check', at(api, { onToolError: 'continue' }))
  assert.equal(told.error, null)
  const [result] = toolResults(api, 1)
  assert.deepEqual({ content: result.content, is_error: result.is_error }, { content: 'The order service is down for maintenance. Retry in 5 minutes.', is_error: true })

  api.script(reply([toolUse(name, {}, 'toolu_f2')]))
  const stopped = await runWithTools('Check', at(api))
  assert.equal(stopped.error.code, 'tool_execution_error')
  assert.equal(stopped.error.toolName, name)
  assert.match(stopped.error.message, /The order service is down for maintenance/)
})

test('a JSON-RPC error stays with the developer: the model gets the fixed internal-error text', async (t) => {
  const server = await httpServer(t)
  const prefix = `${freshName('j')}_`
  await register(t, { url: server.url, prefix })
  const api = await startApi(t)
  const name = `${prefix}rpc_error`
  api.script(reply([toolUse(name, {}, 'toolu_r1')]), reply([text('Something went wrong.')]))
  const result = await runWithTools('Go', at(api, { onToolError: 'continue' }))
  const [sent] = toolResults(api, 1)
  assert.equal(sent.content, `Internal error while running ${name}. Try again later or tell the user.`)
  assert.ok(!JSON.stringify(api.requests[1].body).includes('hunter2'), 'the server error text never reaches the model')
  const call = result.data.toolCalls[0]
  assert.equal(call.isError, true)
  assert.match(call.error, /JSON-RPC error \(code -32603\).*database password=hunter2 rejected/)

  api.script(reply([toolUse(name, {}, 'toolu_r2')]))
  const stopped = await runWithTools('Go', at(api))
  assert.equal(stopped.error.code, 'tool_execution_error')
})

test('images, embedded resources, resource links and empty results become tool_result content the API accepts', async (t) => {
  const server = await httpServer(t)
  const prefix = `${freshName('m')}_`
  await register(t, { url: server.url, prefix })
  const api = await startApi(t)
  api.script(
    reply([toolUse(`${prefix}image`, {}, 'toolu_i'), toolUse(`${prefix}resource`, {}, 'toolu_res'), toolUse(`${prefix}blob_resource`, {}, 'toolu_blob'), toolUse(`${prefix}empty`, {}, 'toolu_e')]),
    reply([text('Here you are.')]),
  )
  const result = await runWithTools('Show me', at(api, { onToolError: 'continue' }))
  assert.equal(result.error, null, JSON.stringify(result.error))
  const [image, resource, blob, empty] = toolResults(api, 1)
  assert.deepEqual(image.content, [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }])
  assert.deepEqual(resource.content, [
    { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Order 4821 notes' }, title: 'file:///orders/4821.txt' },
    { type: 'text', text: 'Resource link: 4821.pdf <file:///orders/4821.pdf> (application/pdf)' },
  ])
  assert.equal(blob.content[0].type, 'document')
  assert.deepEqual(blob.content[0].source, { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 })
  assert.equal(empty.is_error, undefined, 'an empty result is not an error')
  const output = result.data.toolCalls.find((c) => c.toolUseId === 'toolu_i').output
  assert.deepEqual(output, image.content, "the call's output is the blocks sent")
})

test('a stdio server is a child process with a minimal environment; unregistering ends it', async (t) => {
  const log = `${process.env.TMPDIR ?? '/tmp'}/mcp-stdio-${process.pid}-${Date.now()}.jsonl`
  const { readMcpLog } = await import('./fixtures/mcp-server.mjs')
  process.env.ANTHROPIC_API_KEY = KEY
  process.env.SOME_DATABASE_URL = 'postgres://secret'
  t.after(() => {
    delete process.env.ANTHROPIC_API_KEY
    delete process.env.SOME_DATABASE_URL
  })
  const name = freshName('stdio')
  const names = await registerMcpServer({ name, command: process.execPath, args: [FIXTURE, '--stdio', '--log', log], env: { ORDERS_ROOT: '/data' }, prefix: `${name}_`, tools: ['add', 'env'] })
  assert.deepEqual(names, [`${name}_add`, `${name}_env`])
  const env = readMcpLog(log).find((e) => e.kind === 'env').env
  const keys = Object.keys(env).filter((k) => !['PWD', 'SHLVL', '_'].includes(k))
  for (const key of keys) assert.ok(['PATH', 'HOME', 'USER', 'SHELL', 'TERM', 'LANG', 'ORDERS_ROOT'].includes(key), `${key} reached the child`)
  assert.equal(env.ORDERS_ROOT, '/data')
  assert.equal(env.PATH, process.env.PATH)

  const api = await startApi(t)
  api.script(reply([toolUse(`${name}_add`, { a: 2, b: 3 }, 'toolu_add')]), reply([text('5')]))
  const result = await runWithTools('2+3?', at(api))
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(toolResults(api, 1)[0].content, '5')

  assert.equal(await unregisterMcpServer(name), true)
  assert.ok(readMcpLog(log).some((e) => e.kind === 'exit'), 'the child saw its stdin end')
  assert.ok(!listTools().some((d) => d.name.startsWith(`${name}_`)), 'its tools are gone')
  assert.equal(await unregisterMcpServer(name), false)
})

test('bad options are a TypeError naming the option, and nothing is registered', async () => {
  const cases = [
    [null, /expected \{ name, url \} or \{ name, command \}/],
    [{ url: 'http://127.0.0.1:1/mcp' }, /name is missing/],
    [{ name: 'x' }, /needs url \(Streamable HTTP\) or command \(stdio\)/],
    [{ name: 'x', url: 'ftp://127.0.0.1/mcp' }, /must be an http:\/\/ or https:\/\/ URL/],
    [{ name: 'x', url: 'http://127.0.0.1:1/mcp', command: 'node' }, /both url and command/],
    [{ name: 'x', command: 'node', needsApproval: 'yes' }, /needsApproval .* must be true, false or a function/],
    [{ name: 'x', command: 'node', tool: ['a'] }, /tool of the MCP server "x" is not an option/],
    [{ name: 'x', url: 'http://127.0.0.1:1/mcp', headers: { authorization: 5 } }, /the value of "authorization" must be a string/],
    [{ name: 'x', url: 'http://127.0.0.1:1/mcp', headers: { authorization: 'Bearer a\nb' } }, /the value of "authorization" is not a valid header value/],
  ]
  for (const [options, expected] of cases) {
    await assert.rejects(registerMcpServer(options), (e) => e instanceof TypeError && expected.test(e.message), JSON.stringify(options))
  }
})

test('a server that cannot be reached, or refuses the credentials, rejects naming it and the cause, never the header values', async (t) => {
  const server = await httpServer(t, { token: 'right-token-0123456789' })
  const secret = 'wrong-token-SECRET-987654321'
  await assert.rejects(registerMcpServer({ name: freshName('auth'), url: server.url, headers: { authorization: `Bearer ${secret}` } }), (e) => {
    assert.match(e.message, /^registerMcpServer: could not connect to the MCP server "auth_\d+" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): it refused the credentials/)
    assert.ok(!e.message.includes(secret))
    return true
  })
  const { names } = await register(t, { url: server.url, headers: { authorization: 'Bearer right-token-0123456789' }, prefix: `${freshName('a')}_`, tools: ['add'] })
  assert.equal(names.length, 1)
  assert.equal(server.log.find((e) => e.kind === 'initialize').headers.authorization, 'Bearer right-token-0123456789')

  const closed = await startMcpHttpServer()
  const url = closed.url
  await closed.close()
  await assert.rejects(registerMcpServer({ name: freshName('down'), url }), /could not connect to the MCP server "down_\d+" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): .*refused/i, 'the cause, down to the refused connection')
  await assert.rejects(registerMcpServer({ name: freshName('nocmd'), command: '/nonexistent/mcp-server' }), /could not connect to the MCP server "nocmd_\d+" \(\/nonexistent\/mcp-server\): it could not be started/)
})

test('a redirect is not followed', async (t) => {
  const target = await httpServer(t)
  const server = await httpServer(t, { redirectTo: target.url })
  await assert.rejects(registerMcpServer({ name: freshName('redir'), url: server.url }), /redirect \(HTTP 307\), which is not followed/)
  assert.equal(target.log.length, 0, 'the redirect target never heard from us')
})

test("names the API would refuse, or that another tool or server owns, reject naming every one; a server never takes a JS tool's name", async (t) => {
  const server = await httpServer(t, { tools: ['add', 'bad name!', 'get_order_status'] })
  const prefix = `${freshName('n')}_`
  await assert.rejects(registerMcpServer({ name: freshName('bad'), url: server.url, prefix }), (e) => {
    assert.match(e.message, new RegExp(`"${prefix}bad name!" \\(not a name the Messages API accepts`))
    assert.match(e.message, /Nothing of it was registered/)
    return true
  })
  assert.ok(!listTools().some((d) => d.name.startsWith(prefix)), 'nothing of it is registered')

  const jsName = `${prefix}add`
  registerTool({ definition: { name: jsName, description: 'JS add', input_schema: { type: 'object' } }, execute: async () => 'js' })
  t.after(() => unregisterTool(jsName))
  await assert.rejects(registerMcpServer({ name: freshName('taken'), url: server.url, prefix, tools: ['add', 'get_order_status'] }), new RegExp(`"${jsName}" \\(already registered with registerTool\\)`))
  assert.equal(listTools().find((d) => d.name === jsName).description, 'JS add', 'the JS tool is untouched')

  const owner = freshName('owner')
  await register(t, { name: owner, url: server.url, prefix, tools: ['get_order_status'] })
  await assert.rejects(registerMcpServer({ name: freshName('second'), url: server.url, prefix, tools: ['get_order_status'] }), new RegExp(`already offered by the MCP server "${owner}"`))
  assert.throws(() => registerTool({ definition: { name: `${prefix}get_order_status`, input_schema: { type: 'object' } }, execute: async () => 1 }), new RegExp(`is a tool of the MCP server "${owner}"`))
  await assert.rejects(registerMcpServer({ name: owner, url: server.url, prefix: 'other_' }), /already registered; unregisterMcpServer/)
  await assert.rejects(registerMcpServer({ name: freshName('gone'), url: server.url, tools: ['nope'] }), /"nope" \(named in tools, but the server does not offer it\)/)
})
