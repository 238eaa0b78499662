// Resumable streams (CONTRACT §13): with a store, a streamed run's UI message stream is recorded,
// and resumeStream replays it and follows it to its end — in this process and from another one,
// on SQLite files and on a real PostgreSQL server. Every stream is read with the `ai` package's
// own parser and readUIMessageStream, as useChat reads it.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createStore, registerTool, resumeStream, stopRun, streamWithTools } from 'anthropic-tool-calling'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { at, chunkTypes, chunksOf, freshName, messageOf, reading, startApi, storeBackends, uiTextOf, until, KEY } from './helpers.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const { Store } = require('../lib/store.js')
const { scratch, backends: BACKENDS } = storeBackends('streams')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let files = 0

function gateTool() {
  const name = freshName('gate')
  let open, started
  const opened = new Promise((r) => (open = r))
  const began = new Promise((r) => (started = r))
  const seen = { runs: 0, aborted: 0, finished: 0 }
  registerTool({
    definition: { name, description: 'Waits for the test', input_schema: { type: 'object', properties: {} } },
    execute: async (_input, ctx) => {
      seen.runs++
      started()
      const aborted = new Promise((r) => ctx.signal.addEventListener('abort', () => r('aborted')))
      if ((await Promise.race([opened.then(() => 'open'), aborted])) === 'aborted') {
        seen.aborted++
        throw new Error('stopped')
      }
      seen.finished++
      return { opened: true }
    },
  })
  return { name, open: () => open(), began, seen }
}

const runIdOf = async (sseText) => (await chunksOf(sseText)).find((c) => c.type === 'start').messageMetadata.runId

for (const [backend, makeUrl] of Object.entries(BACKENDS)) {
  describe(`${backend}: resumable streams`, () => {
    test('a resumed stream replays the chunks so far and follows the live ones to the end, the same stream the first response sends', async (t) => {
      const api = await startApi(t)
      const gate = gateTool()
      api.script(reply([text('Let me look that up.'), toolUse(gate.name, {})]), { ...reply([text('It is on its way, and arrives on Friday.')]), streamDelayMs: 5 })
      const store = createStore(makeUrl())
      t.after(() => store.close())
      const stream = streamWithTools('Where is my order?', at(api, { store, thread: 'chat-1' }))
      const first = reading(stream.toUIMessageStreamResponse())
      await gate.began
      // The tool runs: what was sent so far (the first step) is replayed, then the rest followed.
      const byThread = await resumeStream({ thread: 'chat-1' }, { store })
      assert.equal(byThread.status, 200)
      assert.equal(byThread.headers.get('x-vercel-ai-ui-message-stream'), 'v1')
      assert.equal(byThread.headers.get('content-type'), 'text/event-stream')
      await until(() => first.soFar().includes('tool-input-available'), 'the first response to send the tool call')
      const runId = await runIdOf(first.soFar())
      assert.match(runId, /^run_/)
      const byRun = await resumeStream(runId, { store })
      assert.equal(byRun.status, 200)
      const followers = [reading(byThread), reading(byRun)]
      await until(() => followers.every((f) => f.soFar().includes('tool-input-available')), 'the followers to get the first step')
      assert.ok(!followers[0].soFar().includes('arrives on Friday'), 'nothing of the second step was sent before it came')
      gate.open()
      const firstText = await first.text
      for (const follower of followers) {
        const got = await follower.text
        // The whole stream, chunk for chunk as the first response sent it, then [DONE].
        assert.deepEqual(await chunksOf(got), await chunksOf(firstText))
        assert.ok(got.endsWith('data: [DONE]\n\n'))
        const message = await messageOf(await chunksOf(got))
        assert.equal(uiTextOf(message), 'Let me look that up.It is on its way, and arrives on Friday.')
        const tool = message.parts.find((p) => p.type === `tool-${gate.name}`)
        assert.deepEqual(tool.output, { opened: true })
        assert.equal(message.metadata.runId, runId)
      }
      assert.equal((await stream.result).error, null)
      assert.equal(gate.seen.runs, 1)
    })

    test('204 with no body when nothing is in progress or the owner may not see it; a finished run replays whole within streamRetentionMs, then is dropped', async (t) => {
      const api = await startApi(t)
      const gate = gateTool()
      api.script(reply([toolUse(gate.name, {})]), reply([text('Done.')]), reply([text('Again.')]))
      const url = makeUrl()
      const store = createStore(url, { streamRetentionMs: 1500 })
      t.after(() => store.close())
      const none = await resumeStream({ thread: 'nobody' }, { store })
      assert.equal(none.status, 204)
      assert.equal(none.body, null)
      const stream = streamWithTools('Hi', at(api, { store, thread: { id: 'owned', owner: 'alice' } }))
      const first = reading(stream.toUIMessageStreamResponse())
      await gate.began
      await until(() => first.soFar().includes('tool-input-available'), 'the first response to send the tool call')
      const runId = await runIdOf(first.soFar())
      // Another owner, or none, sees no thread and no run: 204, nothing leaks.
      assert.equal((await resumeStream({ thread: 'owned', owner: 'mallory' }, { store })).status, 204)
      assert.equal((await resumeStream({ thread: 'owned' }, { store })).status, 204)
      assert.equal((await resumeStream(runId, { store })).status, 204)
      assert.equal((await resumeStream(runId, { store, owner: 'mallory' })).status, 204)
      const alice = await resumeStream(runId, { store, owner: 'alice' })
      assert.equal(alice.status, 200)
      gate.open()
      const whole = await first.text
      assert.equal(await alice.text(), whole)
      await stream.result
      // Over: the thread has nothing in progress, but the run's id still replays it whole.
      assert.equal((await resumeStream({ thread: 'owned', owner: 'alice' }, { store })).status, 204)
      const late = await resumeStream(runId, { store, owner: 'alice' })
      assert.equal(late.status, 200)
      assert.equal(await late.text(), whole)
      assert.equal(uiTextOf(await messageOf(await chunksOf(whole))), 'Done.')
      await sleep(1700)
      assert.equal((await resumeStream(runId, { store, owner: 'alice' })).status, 204, 'dropped after streamRetentionMs')
      // Another store on the same database sees the same.
      const other = createStore(url)
      t.after(() => other.close())
      assert.equal((await resumeStream(runId, { store: other, owner: 'alice' })).status, 204)
      // The thread's messages stay.
      assert.equal((await store.getThread('owned', { owner: 'alice' })).messages.length, 4)
    })

    test('closing the responses never stops the run; stopRun does, and every follower ends with the abort', async (t) => {
      const api = await startApi(t)
      const gate = gateTool()
      api.script(reply([text('Working on it.'), toolUse(gate.name, {})]), reply([text('never asked for')]))
      const store = createStore(makeUrl())
      t.after(() => store.close())
      const stream = streamWithTools('Go', at(api, { store, thread: 'stop-me' }))
      const res = stream.toUIMessageStreamResponse()
      const reader = res.body.getReader()
      let head = ''
      while (!head.includes('"start"')) head += new TextDecoder().decode((await reader.read()).value)
      const runId = await runIdOf(head)
      await gate.began
      // The browser goes away (first response), and a resumed one is closed too.
      await reader.cancel()
      const resumed = await resumeStream(runId, { store })
      await resumed.body.cancel()
      await sleep(300)
      assert.equal(gate.seen.aborted, 0, 'the run goes on')
      assert.equal((await store.getThread('stop-me')).status, 'running')
      const followers = [reading(await resumeStream(runId, { store })), reading(await resumeStream({ thread: 'stop-me' }, { store }))]
      assert.equal(await stopRun(runId, { store }), true)
      const result = await stream.result
      assert.equal(result.error.code, 'aborted')
      for (const follower of followers) {
        const chunks = await chunksOf(await follower.text)
        assert.equal(chunkTypes(chunks).at(-1), 'abort')
        assert.equal(uiTextOf(await messageOf(chunks)), 'Working on it.')
      }
      assert.equal(gate.seen.aborted, 1, "the run's tool was stopped")
      assert.equal(gate.seen.finished, 0)
      assert.equal(api.requests.length, 1, 'nothing was asked of the model after the stop')
    })

    test('the stream is written in slices, never one per token', async (t) => {
      const api = await startApi(t)
      const long = 'Every word of this answer comes in a few characters at a time. '.repeat(12)
      api.script({ ...reply([text(long)]), streamDelayMs: 2 })
      const store = createStore(makeUrl())
      t.after(() => store.close())
      const stream = streamWithTools('Talk', at(api, { store, thread: 'slices' }))
      const whole = await stream.toUIMessageStreamResponse().text()
      const deltas = chunkTypes(await chunksOf(whole)).filter((t) => t === 'text-delta').length
      const runId = await runIdOf(whole)
      // The last slice is written just after the run's end reached JS.
      let read
      await until(async () => (read = await Store.nativeOf(store).followStream(runId, '', 0, 0)).state === 'done', 'the last slice')
      assert.equal(read.state, 'done')
      assert.equal(read.text, whole)
      const tokens = Math.ceil(long.length / 4)
      assert.ok(read.seq < tokens / 4, `${read.seq} slices for about ${tokens} pieces of text (${deltas} deltas)`)
    })

    test('a run streaming in another process is followed to its end from this one, woken as it writes', async (t) => {
      const api = await startApi(t)
      api.script(reply([text('Checking.'), toolUse('wait', {})]), reply([text('All set: it ships today.')]))
      const url = makeUrl()
      const gateFile = join(scratch, `gate-${++files}`)
      const records = join(scratch, `records-${files}`)
      const job = { storeUrl: url, baseURL: api.url, apiKey: KEY, thread: 'far', prompt: 'Ship it?', gate: gateFile, records }
      const proc = spawn(process.execPath, [join(here, 'fixtures', 'stream-child.mjs'), JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      proc.stdout.on('data', (d) => (out += d))
      t.after(() => proc.kill('SIGKILL'))
      const store = createStore(url)
      t.after(() => store.close())
      await until(() => existsSync(records) && readFileSync(records, 'utf8').includes('start'), 'the child to run its tool', 30_000)
      const follower = reading(await resumeStream({ thread: 'far' }, { store }))
      await until(() => follower.soFar().includes('tool-input-available'), 'the replay')
      // The follower waits; the child goes on, and each write reaches it without a long poll.
      const opened = Date.now()
      writeFileSync(gateFile, '')
      await until(() => follower.soFar().includes('"finish"'), 'the end', 10_000).catch((e) => {
        throw new Error(`${e.message}; the follower got ${follower.soFar()}; the child said ${out}`)
      })
      const latency = Date.now() - opened
      if (backend === 'postgres') assert.ok(latency < 2500, `woken by NOTIFY, not a 5 s poll (${latency} ms)`)
      const message = await messageOf(await chunksOf(await follower.text))
      assert.equal(uiTextOf(message), 'Checking.All set: it ships today.')
      await until(() => out.includes('RESULT '), 'the child to end')
      assert.deepEqual(JSON.parse(out.split('RESULT ')[1]), { code: null, text: 'All set: it ships today.' })
    })
  })
}

test('resumeStream checks its arguments', async () => {
  await assert.rejects(resumeStream('run_x', {}), /resumeStream: options.store must be/)
  const store = createStore('sqlite::memory:')
  await assert.rejects(resumeStream(42, { store }), /resumeStream: the first argument must be a run id/)
  await assert.rejects(resumeStream({ thread: '' }, { store }), TypeError)
  assert.throws(() => createStore('sqlite::memory:', { streamRetentionMs: -1 }), /streamRetentionMs must be an integer/)
  await store.close()
})
