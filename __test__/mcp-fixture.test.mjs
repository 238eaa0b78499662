// The MCP test server (fixtures/mcp-server.mjs) checked with the SDK's own client, so that a failing MCP test
// of the engine points at the engine and not at the server it talks to.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { DEFAULT_TOOLS, PNG_BASE64, readMcpLog, startMcpHttpServer } from './fixtures/mcp-server.mjs'

const serverScript = fileURLToPath(new URL('./fixtures/mcp-server.mjs', import.meta.url))

async function connectHttp(url, headers) {
  const client = new Client({ name: 'fixture-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  await client.connect(transport)
  return { client, transport }
}

async function listAll(client) {
  const names = []
  let cursor
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    names.push(...page.tools.map((tool) => tool.name))
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return names
}

const initializeBody = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
}
const postHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

describe('MCP fixture over Streamable HTTP', () => {
  let fixture, client, transport
  before(async () => {
    fixture = await startMcpHttpServer({ pageSize: 4 })
    ;({ client, transport } = await connectHttp(fixture.url, { 'x-test': 'yes' }))
  })
  after(async () => {
    await client.close()
    await fixture.close()
  })

  test('initialize is logged with the request headers, lowercased', () => {
    const init = fixture.log.find((entry) => entry.kind === 'initialize')
    assert.equal(init.headers['x-test'], 'yes')
    assert.equal(init.clientInfo.name, 'fixture-test')
  })

  test('tools/list pages by pageSize, and every page is logged with its cursor', async () => {
    const before = fixture.log.length
    assert.deepEqual(await listAll(client), DEFAULT_TOOLS)
    const cursors = fixture.log.slice(before).filter((entry) => entry.kind === 'list').map((entry) => entry.cursor)
    assert.deepEqual(cursors, [null, '4', '8'])
    const { tools } = await client.listTools()
    const order = tools.find((tool) => tool.name === 'get_order_status')
    assert.equal(order.inputSchema.properties.order_id.pattern, '^[0-9]+$')
    assert.ok(tools.every((tool) => tool.description))
  })

  test('a call answers with text and structured content, and is logged with its request id', async () => {
    const result = await client.callTool({ name: 'get_order_status', arguments: { order_id: '4821' }, _meta: { trace: 't1' } })
    assert.deepEqual(result.content, [{ type: 'text', text: 'Order 4821: shipped' }])
    assert.deepEqual(result.structuredContent, { order_id: '4821', status: 'shipped' })
    const call = fixture.log.findLast((entry) => entry.kind === 'call')
    assert.deepEqual(call.arguments, { order_id: '4821' })
    assert.equal(call.meta.trace, 't1')
    assert.equal(typeof call.requestId, 'number')
    assert.deepEqual((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).content, [{ type: 'text', text: '5' }])
  })

  test('failing is an isError result; rpc_error is a JSON-RPC error', async () => {
    const failed = await client.callTool({ name: 'failing', arguments: {} })
    assert.equal(failed.isError, true)
    assert.equal(failed.content[0].text, 'The order service is down for maintenance. Retry in 5 minutes.')
    await assert.rejects(client.callTool({ name: 'rpc_error', arguments: {} }), (err) => {
      assert.ok(err instanceof McpError)
      assert.equal(err.code, ErrorCode.InternalError)
      assert.match(err.message, /password=hunter2/)
      return true
    })
  })

  test('image, resources and empty content come back as the SDK types them', async () => {
    const image = await client.callTool({ name: 'image', arguments: {} })
    assert.deepEqual(image.content, [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }])
    const resource = await client.callTool({ name: 'resource', arguments: {} })
    assert.deepEqual(
      resource.content.map((block) => block.type),
      ['resource', 'resource_link'],
    )
    assert.equal(resource.content[0].resource.text, 'Order 4821 notes')
    const blob = await client.callTool({ name: 'blob_resource', arguments: {} })
    assert.match(Buffer.from(blob.content[0].resource.blob, 'base64').toString(), /^%PDF-/)
    assert.deepEqual((await client.callTool({ name: 'empty', arguments: {} })).content, [])
  })

  test('an aborted call reaches the server as notifications/cancelled with its request id', async () => {
    const controller = new AbortController()
    const pending = client.callTool({ name: 'slow', arguments: { ms: 5000 } }, undefined, { signal: controller.signal })
    const call = await fixture.waitFor((entry) => entry.kind === 'call' && entry.name === 'slow')
    controller.abort('user pressed stop')
    await assert.rejects(pending)
    const cancelled = await fixture.waitFor((entry) => entry.kind === 'cancelled')
    assert.equal(cancelled.requestId, call.requestId)
    assert.equal(cancelled.reason, 'user pressed stop')
  })

  test('setTools sends list_changed over the GET stream, and the new tool can be listed and called', async () => {
    await fixture.waitFor((entry) => entry.kind === 'stream' && entry.sessionId === transport.sessionId)
    const changed = new Promise((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, resolve))
    await assert.rejects(client.callTool({ name: 'late_tool', arguments: {} }), /Unknown tool: late_tool/)
    await fixture.setTools([...DEFAULT_TOOLS, 'late_tool'])
    await changed
    assert.ok((await listAll(client)).includes('late_tool'))
    assert.deepEqual((await client.callTool({ name: 'late_tool', arguments: {} })).content, [{ type: 'text', text: 'late' }])
    await fixture.setTools(DEFAULT_TOOLS)
  })

  test('crashNext drops the connection of the next call without an answer; the session goes on', async () => {
    fixture.crashNext()
    const headers = { ...postHeaders, 'mcp-session-id': transport.sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'crash-1', method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 1 } } })
    await assert.rejects(async () => {
      const res = await fetch(fixture.url, { method: 'POST', headers, body })
      await res.text()
    })
    assert.ok(fixture.log.some((entry) => entry.kind === 'call' && entry.requestId === 'crash-1'))
    assert.deepEqual((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).content, [{ type: 'text', text: '3' }])
  })

  test('terminating the session (DELETE) is logged as closed', async () => {
    const other = await connectHttp(fixture.url)
    const { sessionId } = other.transport
    await other.transport.terminateSession()
    await fixture.waitFor((entry) => entry.kind === 'closed' && entry.sessionId === sessionId)
    await other.client.close()
  })
})

describe('MCP fixture options', () => {
  test('token: a request without the bearer token gets 401 with WWW-Authenticate; with it, the client connects', async () => {
    const fixture = await startMcpHttpServer({ token: 's3cret' })
    try {
      const res = await fetch(fixture.url, { method: 'POST', headers: postHeaders, body: JSON.stringify(initializeBody) })
      assert.equal(res.status, 401)
      assert.match(res.headers.get('www-authenticate'), /^Bearer/)
      assert.equal((await res.json()).error, 'invalid_token')
      await assert.rejects(connectHttp(fixture.url, { authorization: 'Bearer wrong' }), (err) => err.code === 401)
      const { client } = await connectHttp(fixture.url, { authorization: 'Bearer s3cret' })
      assert.equal(fixture.log.find((entry) => entry.kind === 'initialize').headers.authorization, 'Bearer s3cret')
      await client.close()
    } finally {
      await fixture.close()
    }
  })

  test('redirectTo: every POST answers 307 with Location, and nothing reaches the target', async () => {
    const target = await startMcpHttpServer()
    const fixture = await startMcpHttpServer({ redirectTo: target.url })
    try {
      const res = await fetch(fixture.url, { method: 'POST', headers: postHeaders, body: JSON.stringify(initializeBody), redirect: 'manual' })
      assert.equal(res.status, 307)
      assert.equal(res.headers.get('location'), target.url)
      // Another port is another origin, which the SDK client does not follow either.
      await assert.rejects(connectHttp(fixture.url), (err) => err.code === 307)
      assert.deepEqual(target.log, [])
    } finally {
      await fixture.close()
      await target.close()
    }
  })

  test('the name the Messages API refuses is offered only when asked for', async () => {
    const fixture = await startMcpHttpServer({ tools: ['add', 'bad name!'] })
    try {
      const { client } = await connectHttp(fixture.url)
      assert.deepEqual(await listAll(client), ['add', 'bad name!'])
      await client.close()
    } finally {
      await fixture.close()
    }
  })
})

describe('MCP fixture over stdio', () => {
  let dir
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-fixture-'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('the child logs its environment, the initialize, each call, and its exit when stdin ends', async () => {
    const logFile = join(dir, 'stdio.jsonl')
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [serverScript, '--stdio', '--log', logFile, '--tools', 'env,add,late_tool'],
      env: { ...getDefaultEnvironment(), ORDERS_ROOT: '/data' },
    })
    const client = new Client({ name: 'fixture-test', version: '1.0.0' })
    await client.connect(transport)
    assert.deepEqual(await listAll(client), ['env', 'add', 'late_tool'])
    const keys = JSON.parse((await client.callTool({ name: 'env', arguments: {} })).content[0].text)
    assert.ok(keys.includes('ORDERS_ROOT'))
    assert.ok(!keys.some((key) => key.startsWith('ANTHROPIC_')))
    await client.close()

    const log = readMcpLog(logFile)
    assert.equal(log[0].kind, 'env')
    assert.equal(log[0].env.ORDERS_ROOT, '/data')
    assert.deepEqual(log.find((entry) => entry.kind === 'initialize').headers, {})
    assert.ok(log.some((entry) => entry.kind === 'call' && entry.name === 'env'))
    assert.equal(log.at(-1).kind, 'exit')
  })

  test('the crash tool makes the child exit with code 1 in the middle of the call', async () => {
    const logFile = join(dir, 'crash.jsonl')
    const child = spawn(process.execPath, [serverScript, '--stdio', '--log', logFile], { stdio: ['pipe', 'pipe', 'inherit'] })
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
    let answered = ''
    const answer = (id) =>
      new Promise((resolve) => {
        const check = () => answered.includes(`"id":${id}`) && (child.stdout.off('data', check), resolve())
        child.stdout.on('data', check)
      })
    child.stdout.on('data', (chunk) => (answered += chunk))
    const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`)
    send(initializeBody)
    await answer(1)
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'crash', arguments: {} } })
    assert.equal(await exited, 1)
    assert.doesNotMatch(answered, /"id":2/)
    const call = readMcpLog(logFile).find((entry) => entry.kind === 'call')
    assert.equal(call.name, 'crash')
    assert.equal(call.requestId, 2)
  })
})
