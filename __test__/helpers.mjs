// Shared by the node:test suites: a stand-in API per test and the seed's tool.
import { before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readUIMessageStream, uiMessageChunkSchema, parseJsonEventStream } from 'ai'
import { createStore, registerTool, resumeStream, runWithTools } from '../index.mjs'
import { reply, startMockApi, text } from '../stand-in/index.mjs'
import { startStandIn } from 'anthropic-tool-calling/testing'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { postgresBin, startPostgres } from '../scripts/postgres.mjs'

/** The key the stand-in accepts. It must never show up anywhere but the auth header. */
export const KEY = 'sk-ant-test-SECRET-0123456789abcdef'

/** A stand-in API for one test, closed after it. */
export async function startApi(t, options = {}) {
  const api = await startMockApi({ apiKey: KEY, ...options })
  t.after(() => api.close())
  return api
}

/** Options that point a run at `api`. */
export function at(api, extra = {}) {
  return { apiKey: KEY, baseURL: api.url, ...extra }
}

/**
 * The stand-in through the public test kit (anthropic-tool-calling/testing), as a user's test
 * starts it, closed after the test. Its `requests` are the parsed bodies.
 */
export async function standIn(t, options) {
  const s = await startStandIn(options)
  t.after(() => s.close())
  return s
}

/** Options that point a run at a test kit stand-in `s`. */
export function via(s, extra = {}) {
  return { apiKey: s.apiKey, baseURL: s.url, ...extra }
}

/** The `tool_result` blocks of the last (user) message of a request body. */
export function resultsIn(request) {
  const last = request.messages.at(-1)
  assert.equal(last.role, 'user')
  return last.content.filter((b) => b.type === 'tool_result')
}

/**
 * A run with `options` (and no tools) resolves with `invalid_request` whose message says each of
 * `mentions`, and sends nothing; resolves with that error.
 */
export async function refusedUnsent(t, options, ...mentions) {
  const api = await startApi(t)
  api.script(reply([text('must not be asked')]))
  const r = await runWithTools('Hi', at(api, { tools: [], ...options }))
  assert.equal(r.data, null)
  assert.equal(r.error?.code, 'invalid_request', JSON.stringify(r.error))
  for (const m of mentions) assert.ok(r.error.message.includes(m), `message ${JSON.stringify(r.error.message)} should name ${m}`)
  assert.equal(api.requests.length, 0, 'nothing may be sent')
  return r.error
}

let lastName = 0
/** A tool name no other test of this file uses (the registry lives as long as the process). */
export const freshName = (base) => `${base}_${++lastName}`

export const orderSchema = {
  type: 'object',
  properties: { orderId: { type: 'string' } },
  required: ['orderId'],
}

/** Registers a tool with the order schema; returns the list of inputs it was called with. */
export function orderTool(name, execute = async (input) => ({ orderId: input.orderId, status: 'shipped' })) {
  const calls = []
  registerTool({
    definition: { name, description: `Look up an order (${name})`, input_schema: orderSchema },
    execute: async (input, ctx) => {
      calls.push({ input, ctx })
      return execute(input, ctx)
    },
  })
  return calls
}

/**
 * Registers a tool that echoes its input (`{ q }`); returns the inputs it was called with. `fail(n)`
 * makes call n throw; `needsApproval` is passed on when given.
 */
export function echoTool(name, { fail, needsApproval } = {}) {
  const calls = []
  registerTool({
    definition: { name, description: `Echo (${name})`, input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
    ...(needsApproval ? { needsApproval } : {}),
    execute: async (input) => {
      calls.push(input)
      if (fail && fail(calls.length)) throw new Error('flaky backend')
      return { echoed: input }
    },
  })
  return calls
}

/** The API key appears in nothing a user or the model sees. */
export function assertNoSecret(...things) {
  for (const thing of things) {
    const text = typeof thing === 'string' ? thing : JSON.stringify(thing, (_k, v) => (v instanceof Error ? `${v.name}: ${v.message}` : v))
    assert.ok(!text || !text.includes(KEY), `the API key leaked into ${text && text.slice(0, 200)}`)
  }
}

/** The `tool_result` blocks of the user message the API received in request `i`. */
export function toolResults(api, i) {
  const messages = api.requests[i].body.messages
  const last = messages[messages.length - 1]
  assert.equal(last.role, 'user')
  return last.content.filter((b) => b.type === 'tool_result')
}

/** Parts of a stream. */
export async function collect(stream) {
  const parts = []
  for await (const part of stream) parts.push(part)
  return parts
}

/**
 * The UIMessage useChat would build from a UI message stream Response (the SDK's own parser and
 * reader), continuing `message` when given (a resume), as a copy the caller may change.
 */
export async function uiMessageOf(res, message) {
  const errors = []
  const chunks = parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(parsed, controller) {
        if (!parsed.success) throw parsed.error
        controller.enqueue(parsed.value)
      },
    }),
  )
  let last
  for await (const m of readUIMessageStream({ message: message && structuredClone(message), stream: chunks, onError: (e) => errors.push(e) })) last = m
  assert.deepEqual(errors, [], 'the AI SDK reads the stream without errors')
  return structuredClone(last)
}

/** The environment variable the approval secret comes from when no option gives it. */
export const SECRET_ENV = 'ANTHROPIC_TOOL_CALLING_SECRET'

/**
 * For the test file that calls it: the approval secret in the environment is `value` (none when
 * undefined), whatever the machine has, and the machine's own comes back after the file.
 */
export function approvalSecretInEnv(value) {
  let saved
  before(() => {
    saved = process.env[SECRET_ENV]
    if (value === undefined) delete process.env[SECRET_ENV]
    else process.env[SECRET_ENV] = value
  })
  after(() => {
    if (saved === undefined) delete process.env[SECRET_ENV]
    else process.env[SECRET_ENV] = saved
  })
}

/**
 * For a test file of the store: a real PostgreSQL server started before its tests and stopped
 * after them (scripts/postgres.mjs), and a scratch folder removed after them (`prefix` names it).
 * `backends.sqlite()` / `backends.postgres()` give a fresh, empty store URL of each kind; `pg()`
 * is the server (`createDatabase`, `sql`).
 */
export function storeBackends(prefix) {
  const scratch = mkdtempSync(join(tmpdir(), `atc-${prefix}-`))
  let pg = null
  let count = 0
  before(async () => {
    pg = await startPostgres()
  })
  after(() => {
    pg?.stop()
    rmSync(scratch, { recursive: true, force: true })
  })
  const backends = {
    sqlite: () => `sqlite:${join(scratch, `s${++count}`, 'store.db')}`,
    postgres: () => pg.createDatabase(`${prefix.replace(/\W/g, '_')}${++count}`),
  }
  return { scratch, backends, pg: () => pg }
}

/** The UI message chunks of an SSE text, parsed by the AI SDK's own parser and schema. */
export async function chunksOf(body) {
  const out = []
  const parsed = parseJsonEventStream({ stream: new Response(body).body, schema: uiMessageChunkSchema })
  for await (const p of parsed) {
    if (!p.success) throw p.error
    out.push(p.value)
  }
  return out
}

/** The assistant message readUIMessageStream builds from the chunks (it throws on a malformed stream). */
export async function messageOf(chunks) {
  let last
  const stream = new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk)
      c.close()
    },
  })
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = message
  return last
}

/** A UI message's text parts, joined. */
export const uiTextOf = (message) => message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('')
/** The chunks' types, in order. */
export const chunkTypes = (chunks) => chunks.map((c) => c.type)

/** Reads a Response's body as text while it comes; `text` resolves at its end, `over()` says whether it came. */
export function reading(res) {
  let received = ''
  let over = false
  const decoder = new TextDecoder()
  const done = (async () => {
    for await (const bytes of res.body) received += decoder.decode(bytes, { stream: true })
    over = true
    return received
  })()
  return { text: done, soFar: () => received, over: () => over }
}

/** Waits (10 ms at a time, at most `ms`) until `check()` holds; `what` names it when it never does. */
export async function until(check, what, ms = 10_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

/**
 * A child process running `job` (see fixtures/durable-child.mjs): `said(line)` / `waitFor(line)`
 * its output, `printed()` whether it printed its result, `kill()` with SIGKILL, `result()` the
 * result it printed.
 */
export function durableChild(job) {
  const proc = spawn(process.execPath, [join(fixtures, 'durable-child.mjs'), JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  proc.stdout.on('data', (d) => (out += d))
  const exited = new Promise((resolve) => proc.on('exit', resolve))
  return {
    said: (line) => out.includes(line),
    async waitFor(line, ms = 15_000) {
      const deadline = Date.now() + ms
      while (!out.includes(line)) {
        if (Date.now() > deadline) throw new Error(`the child never said ${JSON.stringify(line)}; it said: ${out}`)
        await new Promise((r) => setTimeout(r, 10))
      }
    },
    printed: () => out.includes('RESULT '),
    /** Sends the child a signal (`SIGSTOP`, `SIGCONT`: a process stalled, then going on). */
    signal: (name) => proc.kill(name),
    async kill() {
      proc.kill('SIGKILL')
      await exited
    },
    async result() {
      await exited
      const line = out.split('\n').find((l) => l.startsWith('RESULT '))
      assert.ok(line, `the child printed no result: ${out}`)
      return JSON.parse(line.slice('RESULT '.length))
    },
  }
}

/**
 * A run a durable child streams in `thread` ("Charge it", its `charge` call left hanging),
 * followed from a store handle of the test's own until the first step reached the stream:
 * `{ child, store, follower, runId }`. `base`: the child's job (`storeUrl` …); `job`: more of it
 * (`leaseMs`, `toolChoice`). The child is killed and the store closed when the test ends.
 */
export async function hangingStreamedRun(t, base, thread, job = {}) {
  const child = durableChild({ ...base, mode: 'stream', thread, prompt: 'Charge it', hang: ['charge'], ...job })
  t.after(() => child.kill())
  const store = createStore(base.storeUrl)
  t.after(() => store.close())
  await until(() => child.said('hanging charge'), 'the child to run its tool', 20_000)
  const follower = reading(await resumeStream({ thread }, { store }))
  await until(() => follower.soFar().includes('tool-input-available'), 'the first step in the stream', 20_000)
  const start = (await chunksOf(follower.soFar())).find((c) => c.type === 'start')
  return { child, store, follower, runId: start.messageMetadata.runId }
}

/**
 * Stops `child` (SIGSTOP) where it is in no transaction of the store at `url`, which is then free
 * for the others: a child stopped inside one (its lease renewed, asked whether to stop) is let go
 * on a moment and stopped again. PostgreSQL: no session of the database is `idle in transaction`
 * (a statement sent before the stop has run by then). SQLite: `store` (a handle of the test's
 * own) gets the file's write lock within 300 ms (every operation takes it).
 */
export async function stallOutsideTransaction(child, url, store) {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
  for (let tries = 0; tries < 50; tries++) {
    child.signal('SIGSTOP')
    await sleep(60)
    let free
    if (url.startsWith('postgres')) {
      const r = spawnSync(join(postgresBin(), 'psql'), [url, '-At', '-c', "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'"], { encoding: 'utf8' })
      free = r.status === 0 && r.stdout.trim() === '0'
    } else {
      free = await Promise.race([store.getThread('none').then(() => true), sleep(300).then(() => false)])
    }
    if (free) return
    child.signal('SIGCONT')
    await sleep(37 * (tries + 1))
  }
  throw new Error('the child was never stopped outside a transaction')
}
