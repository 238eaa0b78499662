// anthropic-tool-calling/testing, through its public entry (the package's exports map): each
// reply helper and fault as runWithTools sees it, the default model, the function form of
// replies, the recorded request bodies, the API's 400 for a bad request, the command line, and
// that the main entry never loads any of it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { registerTool, runWithTools, streamWithTools, ToolError } from 'anthropic-tool-calling'
import {
  startStandIn, text, toolUse, thinking, message, pauseTurn, rateLimited, overloaded, serverError, cutStream, slow,
} from 'anthropic-tool-calling/testing'
import { freshName } from './helpers.mjs'

const require = createRequire(import.meta.url)
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** A stand-in for one test, closed after it. */
async function standIn(t, options) {
  const s = await startStandIn(options)
  t.after(() => s.close())
  return s
}

const via = (s, extra = {}) => ({ apiKey: s.apiKey, baseURL: s.url, tools: [], ...extra })

/** Registers a weather tool under a fresh name; returns the name and the inputs it ran with. */
function weatherTool(execute = async ({ city }) => ({ city, temp: 21 })) {
  const name = freshName('get_weather')
  const inputs = []
  registerTool({
    definition: { name, description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    execute: async (input) => {
      inputs.push(input)
      return execute(input)
    },
  })
  return { name, inputs }
}

test('ESM and CommonJS load one module instance, with every helper', async () => {
  const cjs = require('anthropic-tool-calling/testing')
  const esm = await import('anthropic-tool-calling/testing')
  const names = ['startStandIn', 'text', 'toolUse', 'thinking', 'message', 'pauseTurn', 'rateLimited', 'overloaded', 'serverError', 'cutStream', 'slow']
  assert.deepEqual(Object.keys(cjs).sort(), [...names].sort())
  for (const n of names) assert.equal(esm[n], cjs[n], n)
  assert.equal(esm.default, cjs)
  assert.equal(require.resolve('anthropic-tool-calling/testing'), join(root, 'lib', 'testing', 'index.js'))
})

test('a scripted conversation: the replies in order, url and apiKey for the run, requests the parsed bodies', async (t) => {
  const { name, inputs } = weatherTool()
  const s = await standIn(t, { replies: [message([thinking('The user wants the weather.'), toolUse(name, { city: 'Oslo' })]), text('Sunny in Oslo.')] })
  assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  assert.match(s.apiKey, /^sk-ant-test-[0-9a-f]{32}$/)
  const r = await runWithTools('Weather in Oslo?', via(s, { tools: [name] }))
  assert.equal(r.error, null, r.error?.message)
  assert.equal(r.data.text, 'Sunny in Oslo.')
  assert.deepEqual(inputs, [{ city: 'Oslo' }])
  const [first, second] = s.requests
  assert.equal(s.requests.length, 2)
  assert.deepEqual(first.messages, [{ role: 'user', content: 'Weather in Oslo?' }])
  assert.deepEqual(first.tools.map((tool) => tool.name), [name])
  // As sent: the run keeps its conversation on the API's Threads, so the second request carries
  // only the tool results, continuing the first reply (whose thinking block the stand-in holds).
  assert.deepEqual(first.thread, { type: 'create' })
  assert.equal(second.thread.type, 'continue')
  assert.equal(second.messages.length, 1)
  const [result] = second.messages[0].content
  assert.deepEqual(result, { type: 'tool_result', tool_use_id: r.data.toolCalls[0].toolUseId, content: '{"city":"Oslo","temp":21}' })
  assert.match(result.tool_use_id, /^toolu_/)
  // Without Threads the whole history goes back: the thinking block signed, unchanged.
  const whole = await standIn(t, { replies: [message([thinking('Again.'), toolUse(name, { city: 'Oslo' })]), text('Sunny.')] })
  const again = await runWithTools('Weather in Oslo?', via(whole, { tools: [name], apiThreads: false }))
  assert.equal(again.error, null, again.error?.message)
  const turn = whole.requests[1].messages[1]
  assert.equal(turn.role, 'assistant')
  assert.equal(turn.content[0].type, 'thinking')
  assert.equal(typeof turn.content[0].signature, 'string')
})

test('a reply used twice sends its tool_use with a fresh id each time', async (t) => {
  const { name } = weatherTool()
  const call = toolUse(name, { city: 'Rome' })
  const s = await standIn(t, { replies: [call, call, 'done'] })
  const r = await runWithTools('x', via(s, { tools: [name] }))
  assert.equal(r.error, null, r.error?.message)
  const ids = r.data.toolCalls.map((c) => c.toolUseId)
  assert.equal(ids.length, 2)
  assert.notEqual(ids[0], ids[1])
  assert.equal(call.id, undefined, 'the helper\'s block is not changed')
})

test('rateLimited: a hint under 60 s is waited and the retry gets the next reply; over 60 s the run ends with rate_limited and retryAfter', async (t) => {
  const s = await standIn(t, { replies: [rateLimited(1), text('after the wait'), rateLimited(120)] })
  const started = performance.now()
  const ok = await runWithTools('hi', via(s))
  assert.equal(ok.error, null, ok.error?.message)
  assert.equal(ok.data.text, 'after the wait')
  assert.ok(performance.now() - started >= 900, 'the retry waited for retry-after')
  const limited = await runWithTools('hi', via(s))
  assert.equal(limited.error.code, 'rate_limited')
  assert.equal(limited.error.retryAfter, 120)
  assert.equal(limited.error.status, 429)
  assert.equal(s.requests.length, 3)
})

test('overloaded and serverError: retried, then overloaded (529) and unknown_error (500)', async (t) => {
  const s = await standIn(t, { replies: [overloaded(), text('recovered'), overloaded(), serverError()] })
  const recovered = await runWithTools('hi', via(s))
  assert.equal(recovered.data?.text, 'recovered', recovered.error?.message)
  const busy = await runWithTools('hi', via(s, { maxRetries: 0 }))
  assert.equal(busy.error.code, 'overloaded')
  assert.equal(busy.error.status, 529)
  const broken = await runWithTools('hi', via(s, { maxRetries: 0 }))
  assert.equal(broken.error.code, 'unknown_error')
  assert.equal(broken.error.status, 500)
  assert.match(broken.error.message, /api_error: Internal server error/)
})

test('cutStream: a JSON body or a stream cut mid-reply is network_error; a retry gets the next reply', async (t) => {
  const s = await standIn(t, { replies: [cutStream(text('never whole')), cutStream(text('a streamed answer, cut')), cutStream('cut again'), 'whole'] })
  const plain = await runWithTools('hi', via(s, { maxRetries: 0 }))
  assert.equal(plain.error.code, 'network_error')
  const streamed = await streamWithTools('hi', via(s, { maxRetries: 0 })).result
  assert.equal(streamed.error.code, 'network_error')
  assert.match(streamed.error.message, /streamed reply/)
  assert.equal(s.requests[1].stream, true)
  const retried = await streamWithTools('hi', via(s, { maxRetries: 1 })).result
  assert.equal(retried.data?.text, 'whole', retried.error?.message)
})

test('slow: with a smaller timeoutMs the attempt times out (network_error); with a larger one the reply comes', async (t) => {
  const s = await standIn(t, { replies: [slow(1000, text('too late')), slow(50, text('in time'))] })
  const late = await runWithTools('hi', via(s, { timeoutMs: 100, maxRetries: 0 }))
  assert.equal(late.error.code, 'network_error')
  assert.match(late.error.message, /timed out after 100 ms/)
  const inTime = await runWithTools('hi', via(s, { timeoutMs: 2000 }))
  assert.equal(inTime.data?.text, 'in time', inTime.error?.message)
})

test('pauseTurn: the run sends the paused turn back and the next reply continues it', async (t) => {
  const s = await standIn(t, { replies: [pauseTurn([text('Searching… ')]), text('found it.')] })
  const r = await runWithTools('hi', via(s))
  assert.equal(r.error, null, r.error?.message)
  assert.equal(r.data.text, 'Searching… found it.')
  // Over Threads the continuation sends no message; without, the paused turn goes back last.
  assert.deepEqual(s.requests[1].messages, [])
  const whole = await standIn(t, { replies: [pauseTurn([text('Searching… ')]), text('found it.')] })
  const unthreaded = await runWithTools('hi', via(whole, { apiThreads: false }))
  assert.equal(unthreaded.data?.text, 'Searching… found it.', unthreaded.error?.message)
  assert.deepEqual(whole.requests[1].messages.at(-1), { role: 'assistant', content: [{ type: 'text', text: 'Searching… ' }] })
})

test('message(blocks, stopReason): a max_tokens answer and a refusal', async (t) => {
  const s = await standIn(t, { replies: [message('Half an ans', 'max_tokens'), message([text('I cannot help with that.')], 'refusal')] })
  const cut = await runWithTools('hi', via(s))
  assert.equal(cut.data.stopReason, 'max_tokens')
  const refused = await runWithTools('hi', via(s))
  assert.equal(refused.data.stopReason, 'refusal')
  assert.equal(refused.data.text, 'I cannot help with that.')
})

test('the default model calls the offered tool the prompt names, with the prompt\'s JSON as input, then says what it returned', async (t) => {
  const { name, inputs } = weatherTool()
  const other = weatherTool()
  const s = await standIn(t)
  const r = await runWithTools(`Call ${name} with {"city": "Paris"}`, via(s, { tools: [name, other.name] }))
  assert.equal(r.error, null, r.error?.message)
  assert.deepEqual(inputs, [{ city: 'Paris' }])
  assert.deepEqual(other.inputs, [], 'a tool the prompt does not name is not called')
  assert.equal(r.data.text, `${name} returned: {"city":"Paris","temp":21}`)
  // Without JSON the input is made to fit the schema; a failure is said as such.
  const failing = weatherTool(() => {
    throw new ToolError('No weather station there.')
  })
  const f = await runWithTools(`What does ${failing.name} say?`, via(s, { tools: [failing.name], onToolError: 'continue' }))
  assert.equal(f.error, null, f.error?.message)
  assert.equal(failing.inputs.length, 1)
  assert.equal(typeof failing.inputs[0].city, 'string')
  assert.equal(f.data.text, `${failing.name} failed: No weather station there.`)
  // A prompt that names no tool gets an answer that says how to get one called.
  const none = await runWithTools('Hello?', via(s, { tools: [name] }))
  assert.equal(none.data.text, `This stand-in model calls the tools a prompt names; this one names none of: ${name}.`)
  assert.equal(inputs.length, 1)
})

test('the default model honours toolChoice and disable_parallel_tool_use', async (t) => {
  const a = weatherTool()
  const b = weatherTool()
  const s = await standIn(t)
  const prompt = `Use ${b.name} and ${a.name}`
  const forced = await runWithTools('No tool named here', via(s, { tools: [a.name, b.name], toolChoice: { type: 'tool', name: b.name } }))
  assert.equal(forced.error, null, forced.error?.message)
  assert.deepEqual(forced.data.toolCalls.map((c) => c.toolName), [b.name])
  const any = await runWithTools('No tool named here', via(s, { tools: [a.name, b.name], toolChoice: { type: 'any' } }))
  assert.deepEqual(any.data.toolCalls.map((c) => c.toolName), [a.name])
  const none = await runWithTools(prompt, via(s, { tools: [a.name, b.name], toolChoice: { type: 'none' } }))
  assert.deepEqual(none.data.toolCalls, [])
  const before = s.requests.length
  const parallel = await runWithTools(prompt, via(s, { tools: [a.name, b.name] }))
  assert.deepEqual(parallel.data.toolCalls.map((c) => c.toolName), [b.name, a.name], 'in the order the prompt names them')
  assert.equal(s.requests.length - before, 2, 'both calls in one reply')
  const oneByOne = await runWithTools(prompt, via(s, { tools: [a.name, b.name], toolChoice: { type: 'auto', disable_parallel_tool_use: true } }))
  assert.deepEqual(oneByOne.data.toolCalls.map((c) => c.toolName), [b.name, a.name])
  assert.equal(s.requests.length - before, 5, 'one call a reply')
})

test('the default model answers a run with output in JSON matching the schema, filled from what the tools returned', async (t) => {
  const { name } = weatherTool()
  const s = await standIn(t)
  const output = { type: 'object', properties: { city: { type: 'string' }, temp: { type: 'number' }, note: { type: 'string' } }, required: ['city', 'temp', 'note'], additionalProperties: false }
  const r = await runWithTools(`${name} {"city": "Bern"}`, via(s, { tools: [name], output }))
  assert.equal(r.error, null, r.error?.message)
  assert.equal(r.data.output.city, 'Bern')
  assert.equal(r.data.output.temp, 21)
  assert.equal(typeof r.data.output.note, 'string')
})

test('replies as a function: called with each parsed request, sync or async', async (t) => {
  const { name } = weatherTool()
  const seen = []
  const s = await standIn(t, {
    replies: async (request) => {
      seen.push(request.messages.length)
      const last = request.messages.at(-1)
      if (typeof last.content === 'string') return toolUse(name, { city: last.content })
      return `It is ${JSON.parse(last.content[0].content).temp} degrees.`
    },
  })
  const r = await runWithTools('Lima', via(s, { tools: [name] }))
  assert.equal(r.data?.text, 'It is 21 degrees.', r.error?.message)
  assert.deepEqual(seen, [1, 3])
  assert.deepEqual(r.data.toolCalls[0].input, { city: 'Lima' })
})

test('a bad request gets the API\'s own 400 and uses no reply; a bad reply or too few replies say what to do', async (t) => {
  const s = await standIn(t, { replies: ['the only reply'] })
  const orphan = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_nowhere', content: 'x' }] }]
  const r = await runWithTools(orphan, via(s))
  assert.equal(r.error.code, 'invalid_request')
  assert.equal(r.error.status, 400)
  assert.match(r.error.message, /unexpected `tool_use_id` found in `tool_result` blocks: toolu_nowhere/)
  // On the wire: the API's error body.
  const res = await fetch(`${s.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': s.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-x', max_tokens: 10, messages: orphan }),
  })
  assert.equal(res.status, 400)
  const body = await res.json()
  assert.equal(body.type, 'error')
  assert.equal(body.error.type, 'invalid_request_error')
  assert.equal(s.requests.length, 2)
  assert.deepEqual(s.requests[1].messages, orphan)
  // A wrong key is the API's 401.
  const wrong = await runWithTools('hi', { ...via(s), apiKey: 'sk-ant-not-this-one' })
  assert.equal(wrong.error.code, 'authentication_error')
  // Neither used the one reply; the next request gets it, the one after is told the list ran out.
  assert.equal((await runWithTools('hi', via(s))).data?.text, 'the only reply')
  const over = await runWithTools('hi', via(s, { maxRetries: 0 }))
  assert.equal(over.error.code, 'unknown_error')
  assert.match(over.error.message, /reply 2 was asked for, but replies holds 1; add a reply for this request/)

  await assert.rejects(startStandIn({ replies: [text('ok'), 42] }), { name: 'TypeError', message: /^replies\[1\]: a reply is built with message\(\)/ })
  await assert.rejects(startStandIn({ reply: [] }), { name: 'TypeError', message: /unknown option reply; the options are replies, apiKey, port, host/ })
  await assert.rejects(startStandIn({ apiKey: 'short' }), { name: 'TypeError', message: /apiKey must be a string of 8 characters or more/ })
  assert.throws(() => text(''), { name: 'TypeError', message: /^text: expected a non-empty string/ })
  assert.throws(() => toolUse('x', 'not an object'), { name: 'TypeError', message: /^toolUse: the input of x must be an object/ })
  assert.throws(() => rateLimited(-1), { name: 'TypeError' })
  const fn = await standIn(t, { replies: () => ({ not: 'a reply' }) })
  const junk = await runWithTools('hi', via(fn, { maxRetries: 0 }))
  assert.equal(junk.error.code, 'unknown_error')
  assert.match(junk.error.message, /replies \(the function\) returned no reply: a reply is built with message\(\)/)
})

test('startStandIn sets nothing global; close() stops it', async (t) => {
  const env = { ...process.env }
  const globals = Object.getOwnPropertyNames(globalThis)
  const s = await standIn(t)
  assert.deepEqual({ ...process.env }, env)
  assert.deepEqual(Object.getOwnPropertyNames(globalThis), globals)
  const fetchBefore = globalThis.fetch
  await s.close()
  assert.equal(globalThis.fetch, fetchBefore)
  const r = await runWithTools('hi', via(s, { maxRetries: 0 }))
  assert.equal(r.error.code, 'network_error')
})

test('the main entry loads none of the test kit, from require or import; loading the kit shows its files (the control)', () => {
  const fixture = join(root, '__test__', 'fixtures', 'loaded-modules.mjs')
  const loaded = (what) => {
    const r = spawnSync(process.execPath, [fixture, what], { cwd: root, encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const { required, resolved } = JSON.parse(r.stdout.trim().split('\n').pop())
    return [...required, ...resolved].map((f) => f.replace(/^file:\/\//, ''))
  }
  const kit = (files) => files.filter((f) => f.startsWith(join(root, 'lib', 'testing')) || f.startsWith(join(root, 'stand-in')))
  for (const what of ['cjs', 'esm']) {
    const files = loaded(what)
    assert.ok(files.includes(join(root, 'index.js')), `${what}: the main entry was loaded`)
    assert.deepEqual(kit(files), [], `${what}: the main entry loaded the kit`)
  }
  const control = kit(loaded('kit'))
  assert.ok(control.includes(join(root, 'lib', 'testing', 'index.js')) && control.includes(join(root, 'stand-in', 'server.mjs')), control.join('\n'))
})

test('the command line: `anthropic-tool-calling stand-in` serves the default model until SIGTERM; bad arguments exit 2', async (t) => {
  const pkg = require('../package.json')
  const cli = join(root, pkg.bin['anthropic-tool-calling'])
  const bad = spawnSync(process.execPath, [cli, 'stand-in', '--port', 'abc'], { encoding: 'utf8' })
  assert.equal(bad.status, 2)
  assert.match(bad.stderr, /--port needs a number from 0 to 65535, got abc/)
  assert.equal(spawnSync(process.execPath, [cli, 'serve'], { encoding: 'utf8' }).status, 2)

  const child = spawn(process.execPath, [cli, 'stand-in', '--port', '0', '--key', 'sk-ant-cli-test-key'], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  child.stdout.setEncoding('utf8')
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d
      const m = /ANTHROPIC_BASE_URL=(\S+)/.exec(out)
      if (m && out.includes('ANTHROPIC_API_KEY=sk-ant-cli-test-key')) resolve(m[1])
    })
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)))
  })
  const { name, inputs } = weatherTool()
  const r = await runWithTools(`${name} for {"city":"Kyiv"}`, { apiKey: 'sk-ant-cli-test-key', baseURL: url, tools: [name] })
  assert.equal(r.error, null, r.error?.message)
  assert.deepEqual(inputs, [{ city: 'Kyiv' }])
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  child.kill('SIGTERM')
  assert.deepEqual(await exited, { code: 0, signal: null })
})
