// An MCP server is outside: what it says may echo the credentials it was sent, and its answers
// may be what the Messages API refuses. None of that reaches the model, the page or an error with
// a secret in it, and none of it fails the run. Also: a call stopped after it reached a server is
// reported like any stopped call.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { registerMcpServer, unregisterMcpServer, registerTool, unregisterTool, runWithTools, streamWithTools } from '../index.mjs'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { startHostile } from './fixtures/mcp-hostile-server.mjs'
import { startMcpHttpServer, PNG_BASE64 } from './fixtures/mcp-server.mjs'
import { fileURLToPath } from 'node:url'
import { listTools } from '../index.mjs'
import { at, startApi, freshName, collect } from './helpers.mjs'

const TOKEN = 'mcp-tok-SECRET-abcdef0123456789'
const bare = (ctx) => String(ctx.req.headers.authorization).replace(/^Bearer /, '')

async function hostile(t, behave) {
  const server = await startHostile(behave)
  t.after(() => server.close())
  return server
}

async function register(t, url, extra = {}) {
  const name = freshName('h')
  await registerMcpServer({ name, url, prefix: `${name}_`, headers: { authorization: `Bearer ${TOKEN}` }, ...extra })
  t.after(() => unregisterMcpServer(name))
  return `${name}_`
}

const noToken = (what, thing) => {
  const text = typeof thing === 'string' ? thing : JSON.stringify(thing)
  const at = text.indexOf(TOKEN)
  assert.equal(at, -1, `the token leaked into ${what}: …${text.slice(Math.max(0, at - 120), at + 40)}`)
}

for (const [label, call] of [
  ['isError words that echo the bare token', (ctx) => ctx.answer({ isError: true, content: [{ type: 'text', text: `invalid token ${bare(ctx)}` }] })],
  ['isError words that echo the whole header', (ctx) => ctx.answer({ isError: true, content: [{ type: 'text', text: `invalid header ${ctx.req.headers.authorization}` }] })],
  ['a JSON-RPC error that echoes the bare token', (ctx) => ctx.error(-32000, `token ${bare(ctx)} expired`)],
  ['a result that echoes the token', (ctx) => ctx.answer({ content: [{ type: 'text', text: `you are ${bare(ctx)}` }, { type: 'resource_link', uri: `https://x/?t=${bare(ctx)}`, name: 'n' }] })],
]) {
  for (const mode of ['continue', 'stop']) {
    test(`${label}: no trace of it anywhere (${mode})`, async (t) => {
      const server = await hostile(t, { call })
      const prefix = await register(t, server.url)
      const api = await startApi(t)
      api.script(reply([toolUse(`${prefix}echo`, {}, 'toolu_e')]), reply([text('done')]))
      const stream = streamWithTools('go', at(api, { onToolError: mode }))
      const parts = await collect(stream)
      const result = await stream.result
      noToken('the parts', parts)
      noToken('the result', result)
      noToken('what the model was sent', api.requests.map((r) => r.body))
      assert.ok(JSON.stringify(result).includes('[redacted]') || JSON.stringify(api.requests.map((r) => r.body)).includes('[redacted]'), 'the echo was there, redacted')
    })
  }
}

test('a tool list, or an initialize error, that echoes the token is quoted without it', async (t) => {
  const named = await hostile(t, { list: (ctx) => ctx.answer({ tools: [{ name: bare(ctx), inputSchema: { type: 'object' } }] }) })
  const err = await registerMcpServer({ name: freshName('h'), url: named.url, headers: { authorization: `Bearer ${TOKEN}` } }).catch((e) => e)
  assert.ok(err instanceof Error)
  assert.match(err.message, /not a name the Messages API accepts/, 'a name holding the token is no name')
  noToken('the rejection', err.message)

  const described = await hostile(t, { list: (ctx) => ctx.answer({ tools: [{ name: 'echo', description: `use ${bare(ctx)}`, inputSchema: { type: 'object' } }] }) })
  const prefix = await register(t, described.url)
  const api = await startApi(t)
  api.script(reply([text('hi')]))
  await runWithTools('go', at(api))
  const sent = api.requests[0].body.tools.find((d) => d.name === `${prefix}echo`)
  assert.equal(sent.description, 'use [redacted]')

  const refusing = await hostile(t, { initialize: (ctx) => ctx.error(-32000, `bad token ${bare(ctx)}`) })
  const init = await registerMcpServer({ name: freshName('h'), url: refusing.url, headers: { authorization: `Bearer ${TOKEN}` } }).catch((e) => e)
  assert.ok(init instanceof Error)
  noToken('the rejection', init.message)
})

test('a long cause is cut after its secrets are taken out: a token across the cut leaves no part of itself', async (t) => {
  let pad = 0
  const server = await hostile(t, { initialize: (ctx) => ctx.error(-32000, `${'x'.repeat(pad)} bad token ${bare(ctx)}`) })
  let cut = 0
  // The cause is cut at 400 characters: one of these puts the token across the cut.
  for (pad = 320; pad <= 380; pad += 4) {
    const err = await registerMcpServer({ name: freshName('cut'), url: server.url, headers: { authorization: `Bearer ${TOKEN}` } }).catch((e) => e)
    assert.ok(err instanceof Error)
    if (err.message.endsWith('….')) cut++
    // Its first 8 characters ("mcp-tok-") are enough to show the token was there, and more of it.
    assert.ok(!err.message.includes(TOKEN.slice(0, 8)), `a part of the token leaked (padding ${pad}): …${err.message.slice(-60)}`)
  }
  assert.ok(cut > 0, 'some causes were cut')
})

test("the URL's password and query are in no message", async () => {
  const url = 'http://alice:pw-SECRET-123456@127.0.0.1:9/mcp?api_key=KEY-SECRET-456789'
  const err = await registerMcpServer({ name: freshName('u'), url }).catch((e) => e)
  assert.ok(err instanceof Error)
  assert.match(err.message, /\(http:\/\/127\.0\.0\.1:9\/mcp\)/)
  assert.ok(!err.message.includes('pw-SECRET') && !err.message.includes('KEY-SECRET'), err.message)
})

test('an unreachable server on a port like 3020 is not called a redirect', async () => {
  const err = await registerMcpServer({ name: freshName('p'), url: 'http://127.0.0.1:3020/mcp' }).catch((e) => e)
  assert.ok(err instanceof Error)
  assert.doesNotMatch(err.message, /redirect/)
})

for (const [label, result] of [
  ['an empty text beside an image', { content: [{ type: 'text', text: '' }, { type: 'image', mimeType: 'image/png', data: PNG_BASE64 }] }],
  ['a blank text beside another text', { content: [{ type: 'text', text: 'a' }, { type: 'text', text: '  ' }] }],
  ['two empty texts', { content: [{ type: 'text', text: '' }, { type: 'text' }] }],
  ['a resource with empty text', { content: [{ type: 'resource', resource: { uri: 'file:///a', text: '' } }] }],
]) {
  test(`${label}: a result the API takes, and the run goes on`, async (t) => {
    const server = await hostile(t, { call: (ctx) => ctx.answer(result) })
    const prefix = await register(t, server.url)
    const api = await startApi(t)
    api.script(reply([toolUse(`${prefix}echo`, {}, 'toolu_b')]), reply([text('done')]))
    const r = await runWithTools('go', at(api, { onToolError: 'continue' }))
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'done')
  })
}

for (const how of ['an abort', 'a failed sibling in stop mode']) {
  test(`an MCP call stopped by ${how} after it reached the server is reported, in toolCalls and as a part`, async (t) => {
    const server = await startMcpHttpServer()
    t.after(() => server.close())
    const name = freshName('stop')
    await registerMcpServer({ name, url: server.url, prefix: `${name}_`, tools: ['slow'] })
    t.after(() => unregisterMcpServer(name))
    const calls = [toolUse(`${name}_slow`, { ms: 10000 }, 'toolu_slow')]
    if (how !== 'an abort') {
      const boom = freshName('boom')
      registerTool({ definition: { name: boom, input_schema: { type: 'object' } }, execute: async () => { await new Promise((r) => setTimeout(r, 200)); throw new Error('boom') } })
      t.after(() => unregisterTool(boom))
      calls.push(toolUse(boom, {}, 'toolu_boom'))
    }
    const api = await startApi(t)
    api.script(reply(calls))
    const controller = new AbortController()
    const stream = streamWithTools('go', at(api, { signal: controller.signal }))
    const reading = collect(stream)
    await server.waitFor((e) => e.kind === 'call' && e.name === 'slow')
    if (how === 'an abort') controller.abort()
    const result = await stream.result
    const parts = await reading
    const call = result.error.toolCalls.find((c) => c.toolUseId === 'toolu_slow')
    assert.ok(call, `in error.toolCalls: ${JSON.stringify(result.error.toolCalls)}`)
    assert.equal(call.isError, true)
    assert.ok(parts.some((p) => p.type === 'tool-result' && p.toolUseId === 'toolu_slow'), 'its tool-result part')
    await server.waitFor((e) => e.kind === 'cancelled')
  })
}

test('a token echoed as an object key (a property name, a structuredContent key) is taken out too', async (t) => {
  const server = await hostile(t, {
    list: (ctx) => ctx.answer({ tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { [bare(ctx)]: { type: 'string' } } } }] }),
    call: (ctx) => ctx.answer({ content: [], structuredContent: { [bare(ctx)]: 'you' } }),
  })
  const prefix = await register(t, server.url)
  noToken('listTools', listTools())
  const api = await startApi(t)
  api.script(reply([toolUse(`${prefix}echo`, {}, 'toolu_k')]), reply([text('done')]))
  const r = await runWithTools('go', at(api, { tools: [`${prefix}echo`] }))
  noToken('the requests', api.requests.map((q) => q.body))
  noToken('the result', r)
})

test('a content block type this version does not know is described to the model, not a failed call', async (t) => {
  const server = await hostile(t, { call: (ctx) => ctx.answer({ content: [{ type: 'text', text: 'Here:' }, { type: 'hologram', data: 'x' }] }) })
  const prefix = await register(t, server.url)
  const api = await startApi(t)
  api.script(reply([toolUse(`${prefix}echo`, {}, 'toolu_u')]), reply([text('done')]))
  const r = await runWithTools('go', at(api, { tools: [`${prefix}echo`] }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(r.data.toolCalls[0].isError, undefined)
  const sent = api.requests[1].body.messages.at(-1).content[0].content
  assert.deepEqual(sent[0], { type: 'text', text: 'Here:' })
  assert.match(sent[1].text, /content of type hologram, which is not passed on/)
})

test('a list change told while the server is being registered is not lost', async () => {
  const name = freshName('racy')
  const names = await registerMcpServer({ name, command: process.execPath, args: [fileURLToPath(new URL('./fixtures/mcp-racy-server.mjs', import.meta.url))], prefix: `${name}_` })
  try {
    assert.deepEqual(names, [`${name}_a`], 'the first listing')
    const deadline = Date.now() + 5000
    while (!listTools().some((d) => d.name === `${name}_b`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.ok(listTools().some((d) => d.name === `${name}_b`), 'the change was listed once the server was registered')
  } finally {
    await unregisterMcpServer(name)
  }
})

test('a credential in the URL path is in no message', async () => {
  const err = await registerMcpServer({ name: freshName('path'), url: 'http://127.0.0.1:9/s/zk-SECRET-0123456789abcdef/mcp' }).catch((e) => e)
  assert.ok(err instanceof Error)
  assert.ok(!err.message.includes('zk-SECRET'), err.message)
})
