// MCP servers over time: timeouts and aborts told to the server as notifications/cancelled, the
// tool list changing under a session, a connection that drops mid-call (never re-sent, reconnected
// after), a stdio server that crashes and is started again, approval per server, hooks and stream
// parts, a run that never needs the JS thread, and a process that exits with sessions open.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { registerMcpServer, unregisterMcpServer, registerTool, unregisterTool, listTools, runWithTools, streamWithTools } from '../index.mjs'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { startMcpHttpServer, readMcpLog, DEFAULT_TOOLS } from './fixtures/mcp-server.mjs'
import { at, startApi, freshName, toolResults, collect } from './helpers.mjs'

const FIXTURE = fileURLToPath(new URL('./fixtures/mcp-server.mjs', import.meta.url))
const SECRET = 'mcp-approval-secret-0123456789abcdef'

async function httpServer(t, options) {
  const server = await startMcpHttpServer(options)
  t.after(() => server.close())
  return server
}

/** Registers a server under a fresh name, with its name as the tools' prefix; unregistered after the test. */
async function register(t, options) {
  const name = freshName(options.base ?? 'srv')
  const prefix = `${name}_`
  delete options.base
  await registerMcpServer({ prefix, ...options, name })
  t.after(() => unregisterMcpServer(name))
  return { name, prefix }
}

const logFile = () => join(tmpdir(), `mcp-${process.pid}-${freshName('log')}.jsonl`)
const callsOf = (entries, name) => entries.filter((e) => e.kind === 'call' && (name === undefined || e.name === name))

async function until(check, what, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

test('toolTimeoutMs sends notifications/cancelled for the call, and the run goes on', async (t) => {
  const server = await httpServer(t)
  const { prefix } = await register(t, { url: server.url })
  const api = await startApi(t)
  api.script(reply([toolUse(`${prefix}slow`, { ms: 10000 }, 'toolu_slow')]), reply([text('It took too long.')]))
  const result = await runWithTools('Slow one', at(api, { toolTimeoutMs: 300, onToolError: 'continue' }))
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.match(toolResults(api, 1)[0].content, /did not finish within 300 ms/)
  const call = callsOf(server.log, 'slow')[0]
  const cancelled = await server.waitFor((e) => e.kind === 'cancelled')
  assert.equal(cancelled.requestId, call.requestId, 'the cancellation names the call')
})

test('an aborted signal sends notifications/cancelled for the running call', async (t) => {
  const server = await httpServer(t)
  const { prefix } = await register(t, { url: server.url })
  const api = await startApi(t)
  api.script(reply([toolUse(`${prefix}slow`, { ms: 10000 }, 'toolu_slow2')]))
  const controller = new AbortController()
  const running = runWithTools('Slow one', at(api, { signal: controller.signal }))
  await server.waitFor((e) => e.kind === 'call' && e.name === 'slow')
  controller.abort()
  const result = await running
  assert.equal(result.error.code, 'aborted')
  const cancelled = await server.waitFor((e) => e.kind === 'cancelled')
  assert.equal(cancelled.requestId, callsOf(server.log, 'slow')[0].requestId)
})

test('notifications/tools/list_changed refreshes the tools; a new name another tool owns is skipped, not taken', async (t) => {
  const server = await httpServer(t, { tools: ['add', 'get_order_status'] })
  const { prefix } = await register(t, { url: server.url })
  await server.waitFor((e) => e.kind === 'stream')
  const jsName = `${prefix}late_tool`
  registerTool({ definition: { name: jsName, description: 'the JS one', input_schema: { type: 'object' } }, execute: async () => 'from JS' })
  t.after(() => unregisterTool(jsName))

  await server.setTools(['add', 'image', 'late_tool'])
  const names = () => listTools().map((d) => d.name)
  await until(() => names().includes(`${prefix}image`) && !names().includes(`${prefix}get_order_status`), 'the new list')
  assert.ok(names().includes(`${prefix}add`))
  assert.equal(listTools().filter((d) => d.name === jsName).length, 1)
  assert.equal(listTools().find((d) => d.name === jsName).description, 'the JS one', 'the colliding name stays the JS tool')

  const api = await startApi(t)
  api.script(reply([toolUse(jsName, {}, 'toolu_js'), toolUse(`${prefix}get_order_status`, { order_id: '1' }, 'toolu_gone')]), reply([text('ok')]))
  const result = await runWithTools('Go', at(api, { onToolError: 'continue' }))
  const [js, gone] = toolResults(api, 1)
  assert.equal(js.content, 'from JS')
  assert.match(gone.content, /does not exist/, 'a removed tool is an unknown tool')
  assert.equal(result.data.toolCalls[1].isError, true)
  assert.equal(callsOf(server.log, 'late_tool').length, 0)
})

test('a call whose connection drops fails and is not sent again; the next call works', async (t) => {
  const server = await httpServer(t)
  const { prefix } = await register(t, { url: server.url })
  const api = await startApi(t)
  server.crashNext()
  api.script(reply([toolUse(`${prefix}add`, { a: 1, b: 2 }, 'toolu_drop')]), reply([text('It failed.')]))
  const dropped = await runWithTools('1+2', at(api, { onToolError: 'continue', toolTimeoutMs: 20000 }))
  assert.equal(dropped.error, null, JSON.stringify(dropped.error))
  const call = dropped.data.toolCalls[0]
  assert.equal(call.isError, true)
  assert.match(call.error, /dropped during the call .*not sent again/)
  assert.equal(callsOf(server.log, 'add').length, 1, 'the call reached the server once')

  api.script(reply([toolUse(`${prefix}add`, { a: 2, b: 2 }, 'toolu_after')]), reply([text('4')]))
  const after = await runWithTools('2+2', at(api))
  assert.equal(after.error, null, JSON.stringify(after.error))
  assert.equal(toolResults(api, 3)[0].content, '4')
})

test('a stdio server that crashes mid-call fails that call and is started again for the next', async (t) => {
  const log = logFile()
  const { prefix } = await register(t, { base: 'crash', command: process.execPath, args: [FIXTURE, '--stdio', '--log', log] })
  const api = await startApi(t)
  api.script(reply([toolUse(`${prefix}crash`, {}, 'toolu_crash')]), reply([text('It crashed.')]))
  const crashed = await runWithTools('Crash', at(api, { onToolError: 'continue' }))
  assert.equal(crashed.error, null, JSON.stringify(crashed.error))
  assert.equal(crashed.data.toolCalls[0].isError, true)
  assert.match(crashed.data.toolCalls[0].error, /dropped during the call/)

  api.script(reply([toolUse(`${prefix}add`, { a: 20, b: 1 }, 'toolu_again')]), reply([text('21')]))
  const again = await runWithTools('20+1', at(api))
  assert.equal(again.error, null, JSON.stringify(again.error))
  assert.equal(toolResults(api, 3)[0].content, '21')
  const entries = readMcpLog(log)
  assert.equal(entries.filter((e) => e.kind === 'env').length, 2, 'a second child was started')
  assert.equal(callsOf(entries, 'crash').length, 1, 'the crashed call was not sent again')
})

test('needsApproval per server: true pauses every call; a function is asked with the tool name, and a throw means "ask"', async (t) => {
  const server = await httpServer(t)
  const api = await startApi(t)
  const always = await register(t, { base: 'apr', url: server.url, needsApproval: true, tools: ['add'] })
  api.script(reply([toolUse(`${always.prefix}add`, { a: 1, b: 1 }, 'toolu_a1')]), reply([text('2')]))
  const options = at(api, { approvalSecret: SECRET })
  const paused = await runWithTools('1+1', options)
  assert.equal(paused.data.stopReason, 'approval_required')
  assert.equal(paused.data.pendingApprovals[0].toolName, `${always.prefix}add`)
  assert.equal(callsOf(server.log).length, 0, 'nothing ran before the yes')
  const done = await runWithTools(paused.data.messages, { ...options, approvals: [{ approvalId: paused.data.pendingApprovals[0].approvalId, approved: true }] })
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(done.data.text, '2')
  assert.equal(callsOf(server.log, 'add').length, 1)

  const asked = []
  const ask = await register(t, {
    base: 'ask',
    url: server.url,
    tools: ['add', 'get_order_status'],
    needsApproval: (toolName, input, ctx) => {
      asked.push({ toolName, input, toolUseId: ctx.toolUseId })
      if (toolName.endsWith('get_order_status')) throw new Error('cannot tell')
      return input.a > 100
    },
  })
  api.script(reply([toolUse(`${ask.prefix}add`, { a: 1, b: 2 }, 'toolu_small'), toolUse(`${ask.prefix}get_order_status`, { order_id: '7' }, 'toolu_status')]))
  const mixed = await runWithTools('Go', options)
  assert.equal(mixed.data.stopReason, 'approval_required')
  assert.deepEqual(asked.map((a) => [a.toolName, a.toolUseId]), [[`${ask.prefix}add`, 'toolu_small'], [`${ask.prefix}get_order_status`, 'toolu_status']])
  assert.deepEqual(asked[0].input, { a: 1, b: 2 })
  assert.deepEqual(mixed.data.pendingApprovals.map((p) => p.toolUseId), ['toolu_status'], 'the throw means the call waits')
  assert.equal(callsOf(server.log, 'add').length, 2, 'the small add ran')
})

test('hooks and stream parts see an MCP call like any other, with its output', async (t) => {
  const server = await httpServer(t)
  const { prefix } = await register(t, { url: server.url, tools: ['get_order_status'] })
  const api = await startApi(t)
  const name = `${prefix}get_order_status`
  api.script(reply([toolUse(name, { order_id: '4821' }, 'toolu_h')]), reply([text('Shipped.')]))
  const seen = []
  const result = await runWithTools('Status?', at(api, { onToolCall: (c) => seen.push(['call', c.toolName, c.input]), onToolResult: (c) => seen.push(['result', c.toolName, c.output]) }))
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.deepEqual(seen, [['call', name, { order_id: '4821' }], ['result', name, 'Order 4821: shipped']])

  api.script(reply([toolUse(name, { order_id: '4821' }, 'toolu_s')]), reply([text('Shipped.')]))
  const parts = await collect(streamWithTools('Status?', at(api)))
  const part = parts.find((p) => p.type === 'tool-result')
  assert.deepEqual({ toolName: part.toolName, output: part.output, isError: part.isError }, { toolName: name, output: 'Order 4821: shipped', isError: undefined })
})

test('a run whose tools are all MCP tools never needs the JS thread: the tool round completes while it is blocked', async (t) => {
  const log = logFile()
  const { prefix } = await register(t, { base: 'nojs', command: process.execPath, args: [FIXTURE, '--stdio', '--log', log], tools: ['add'] })
  const counter = new Int32Array(new SharedArrayBuffer(4))
  const worker = new Worker(new URL('./fixtures/api-worker.mjs', import.meta.url), { workerData: { counter, toolName: `${prefix}add` } })
  t.after(() => worker.terminate())
  const url = await new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  const running = runWithTools('2+3?', { apiKey: 'sk-ant-worker-key', baseURL: url })
  // Block this thread (no timers, no callbacks, no promise jobs) until the stand-in in the worker
  // has the second request, the one that carries the tool's result.
  const deadline = Date.now() + 10000
  while (Atomics.load(counter, 0) < 2 && Date.now() < deadline) Atomics.wait(counter, 0, Atomics.load(counter, 0), 50)
  assert.equal(Atomics.load(counter, 0), 2, 'the tool round went on without this thread')
  const result = await running
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(result.data.text, '5')
  assert.equal(callsOf(readMcpLog(log), 'add').length, 1)
})

test('worker threads have their own MCP servers', async (t) => {
  const server = await httpServer(t)
  const { prefix } = await register(t, { url: server.url, tools: ['add'] })
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads')
    const lib = require(workerData.index)
    lib.registerMcpServer({ name: 'in_worker', url: workerData.url, prefix: 'w_', tools: ['add'] })
      .then((names) => parentPort.postMessage({ names, listed: lib.listTools().map((d) => d.name) }), (e) => parentPort.postMessage({ error: e.message }))
  `, { eval: true, workerData: { url: server.url, index: fileURLToPath(new URL('../index.js', import.meta.url)) } })
  const seen = await new Promise((resolve) => worker.once('message', resolve))
  assert.deepEqual(seen, { names: ['w_add'], listed: ['w_add'] }, "the worker sees only its own server's tools")
  assert.ok(listTools().some((d) => d.name === `${prefix}add`))
  assert.ok(!listTools().some((d) => d.name === 'w_add'))
  const sessions = server.log.filter((e) => e.kind === 'initialize').length
  assert.equal(sessions, 2)
  await worker.terminate()
  await server.waitFor((e) => e.kind === 'closed')
  assert.equal(server.log.filter((e) => e.kind === 'closed').length, 1, "the ended worker's session is closed, ours is not")
})

test('unregistering an HTTP server ends its session with the server', async (t) => {
  const server = await httpServer(t)
  const name = freshName('bye')
  await registerMcpServer({ name, url: server.url, prefix: `${name}_`, tools: ['add'] })
  assert.equal(await unregisterMcpServer(name), true)
  await server.waitFor((e) => e.kind === 'closed')
  assert.ok(!listTools().some((d) => d.name === `${name}_add`))
})

test('the process exits when its work is done, with an HTTP and a stdio session still open', async () => {
  const script = `
    import { registerMcpServer } from ${JSON.stringify(new URL('../index.mjs', import.meta.url).href)}
    import { startMcpHttpServer } from ${JSON.stringify(new URL('./fixtures/mcp-server.mjs', import.meta.url).href)}
    const server = await startMcpHttpServer()
    await registerMcpServer({ name: 'h', url: server.url, tools: ['add'] })
    await registerMcpServer({ name: 's', command: process.execPath, args: [${JSON.stringify(FIXTURE)}, '--stdio'], prefix: 's_', tools: ['add'] })
    // The fixture server's own sockets would hold the loop: close it; our sessions must not.
    server.close()
    console.log('registered')
  `
  const started = Date.now()
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20000 })
  assert.equal(child.signal, null, `the process did not exit by itself: ${child.stderr}`)
  assert.equal(child.status, 0, child.stderr)
  assert.match(child.stdout, /registered/)
  assert.ok(Date.now() - started < 15000)
})

test("a stdio server that exits at start: the rejection says so, and its own stderr reaches this process's", async () => {
  const script = `
    import { registerMcpServer } from ${JSON.stringify(new URL('../index.mjs', import.meta.url).href)}
    const failing = "process.stderr.write('missing DATABASE_URL: cannot start\\n'); process.exit(3)"
    await registerMcpServer({ name: 'dies', command: process.execPath, args: ['-e', failing] }).catch((e) => console.log(e.message))
  `
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20000 })
  assert.equal(child.status, 0, child.stderr)
  assert.match(child.stdout, /could not connect to the MCP server "dies" .*: it closed the connection before it answered initialize/)
  assert.match(child.stderr, /missing DATABASE_URL: cannot start/)
})

test('a new tool whose name another tool holds is skipped with a line on stderr naming it', async () => {
  const script = `
    import { registerMcpServer, registerTool, listTools } from ${JSON.stringify(new URL('../index.mjs', import.meta.url).href)}
    import { startMcpHttpServer } from ${JSON.stringify(new URL('./fixtures/mcp-server.mjs', import.meta.url).href)}
    const server = await startMcpHttpServer({ tools: ['add'] })
    await registerMcpServer({ name: 'lc', url: server.url, prefix: 'lc_' })
    await server.waitFor((e) => e.kind === 'stream')
    registerTool({ definition: { name: 'lc_late_tool', input_schema: { type: 'object' } }, execute: async () => 'js' })
    await server.setTools(['add', 'late_tool', 'image'])
    while (!listTools().some((d) => d.name === 'lc_image')) await new Promise((r) => setTimeout(r, 10))
    await server.close()
  `
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20000, env: { ...process.env, ANTHROPIC_TOOL_CALLING_LOG: '' } })
  assert.equal(child.status, 0, child.stderr)
  assert.match(child.stderr, /the tools of the MCP server "lc" changed; these are not offered: "lc_late_tool" \(already registered with registerTool\)/)
})
