// Resumable streams across a take-over (CONTRACT §13): a child process streams a run with a store
// and is killed (SIGKILL) mid-run; a follower reads the run's stream with resumeStream from this
// process, before and after another child takes the run over (resumeRun, recoverRuns). The new
// holder records on into the same stream, so every follower — read with the `ai` package's own
// parser and readUIMessageStream — sees the run to its finish; the slices are numbered on, with
// no gap. On SQLite files and on a real PostgreSQL server.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readUIMessageStream, uiMessageChunkSchema, parseJsonEventStream } from 'ai'
import { createStore, resumeStream } from 'anthropic-tool-calling'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { startApi, storeBackends, KEY } from './helpers.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const { Store } = require('../lib/store.js')
const { scratch, backends: BACKENDS } = storeBackends('takeover')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let files = 0

async function chunksOf(body) {
  const out = []
  for await (const p of parseJsonEventStream({ stream: new Response(body).body, schema: uiMessageChunkSchema })) {
    if (!p.success) throw p.error
    out.push(p.value)
  }
  return out
}

/** The assistant message readUIMessageStream builds (it throws on a malformed stream). */
async function messageOf(chunks) {
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

const textOf = (message) => message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('')
const types = (chunks) => chunks.map((c) => c.type)

function reading(res) {
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

async function until(check, what, ms = 20_000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

/** A child running fixtures/durable-child.mjs (lease 600 ms); `result()` its printed result. */
function child(job) {
  const proc = spawn(process.execPath, [join(here, 'fixtures', 'durable-child.mjs'), JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  proc.stdout.on('data', (d) => (out += d))
  const exited = new Promise((resolve) => proc.on('exit', resolve))
  return {
    said: (line) => out.includes(line),
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

/** The run holding `thread`, read through the store's native follower API. */
async function runIdOf(follower) {
  const start = (await chunksOf(follower.soFar())).find((c) => c.type === 'start')
  return start.messageMetadata.runId
}

/** Every slice 1..seq is there: the text after slice k shrinks at each k. */
async function sliceNumbers(native, runId) {
  const whole = await native.followStream(runId, '', 0, 0)
  let before = whole.text
  for (let k = 1; k <= whole.seq; k++) {
    const after = await native.followStream(runId, '', k, 0)
    assert.ok(after.text.length < before.length || k === whole.seq, `slice ${k + 1} is missing`)
    before = after.text
  }
  return whole
}

for (const [backend, makeUrl] of Object.entries(BACKENDS)) {
  describe(`${backend}: a streamed run taken over records on`, () => {
    for (const takeOver of ['resume', 'recover']) {
      test(`killed inside a tool, taken over by ${takeOver === 'resume' ? 'resumeRun' : 'recoverRuns'}: followers attached before and after see the run to its finish`, async (t) => {
        const api = await startApi(t)
        api.script(reply([text('Let me charge it.'), toolUse('charge', { id: 'b' })]), { ...reply([text('Charged: all done.')]), streamDelayMs: 5 })
        const url = makeUrl()
        const records = join(scratch, `records-${++files}.jsonl`)
        const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records }
        const first = child({ ...base, mode: 'stream', thread: `t-${takeOver}`, prompt: 'Charge it', hang: ['charge'] })
        t.after(() => first.kill())
        const store = createStore(url)
        t.after(() => store.close())
        const native = Store.nativeOf(store)
        await until(() => first.said('hanging charge'), 'the child to run its tool')
        const before = reading(await resumeStream({ thread: `t-${takeOver}` }, { store }))
        await until(() => before.soFar().includes('tool-input-available'), 'the replay of the first step')
        const runId = await runIdOf(before)
        const cut = await native.followStream(runId, '', 0, 0)
        await first.kill()
        // The holder is gone and nobody has taken the run over: it is still in progress. The
        // follower waits (past the 5 s after which a stream of a run that ended is given up), and
        // a new one, by thread or by run, is given the stream, not 204.
        await sleep(takeOver === 'resume' ? 6000 : 800)
        assert.equal(before.over(), false, 'the follower keeps following a run whose process stopped')
        const orphanByThread = await resumeStream({ thread: `t-${takeOver}` }, { store })
        assert.equal(orphanByThread.status, 200)
        const during = reading(orphanByThread)
        await until(() => during.soFar().includes('tool-input-available'), 'the replay to the new follower')

        const taker = child({ ...base, mode: takeOver, runId })
        const result = await taker.result()
        const run = takeOver === 'resume' ? result : result.find((r) => r.runId === runId).result
        assert.equal(run.error, null, JSON.stringify(run.error))
        assert.equal(run.data.text, 'Charged: all done.')
        assert.equal(run.data.resumed, 1)
        const after = await resumeStream(runId, { store })
        assert.equal(after.status, 200)
        const whole = await after.text()
        for (const follower of [before, during]) assert.equal(await follower.text, whole)
        assert.ok(whole.endsWith('data: [DONE]\n\n'))
        const chunks = await chunksOf(whole)
        assert.equal(types(chunks).at(-1), 'finish')
        assert.equal(types(chunks).filter((c) => c === 'start').length, 1, 'one start')
        assert.equal(types(chunks).filter((c) => c === 'tool-input-available').length, 1, 'the call announced once')
        const message = await messageOf(chunks)
        assert.equal(textOf(message), 'Let me charge it.Charged: all done.')
        assert.equal(message.metadata.runId, runId)
        const charge = message.parts.find((p) => p.type === 'tool-charge')
        assert.deepEqual(charge.output, { tool: 'charge', id: 'b' })
        // The new holder's slices come after the first process's, numbered on without a gap.
        const read = await sliceNumbers(native, runId)
        assert.equal(read.state, 'done')
        assert.ok(read.seq > cut.seq, `${read.seq} slices after the ${cut.seq} the first process wrote`)
        assert.ok(read.text.startsWith(cut.text))
      })
    }

    test('killed mid-text: the cut step is taken back (reset-step) and asked for again; the stream ends with the answer', async (t) => {
      const api = await startApi(t)
      const partial = 'This first try is cut off before the model finishes writing it. '.repeat(20)
      api.script({ ...reply([text(partial)]), streamDelayMs: 40 }, reply([text('The second try is whole.')]))
      const url = makeUrl()
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records: join(scratch, `records-${++files}.jsonl`) }
      const first = child({ ...base, mode: 'stream', thread: 'mid-text', prompt: 'Write' })
      t.after(() => first.kill())
      const store = createStore(url)
      t.after(() => store.close())
      await until(() => first.said('streaming'), 'the child to stream')
      const follower = reading(await resumeStream({ thread: 'mid-text' }, { store }))
      await until(() => follower.soFar().includes('text-delta'), 'some text')
      const runId = await runIdOf(follower)
      await first.kill()
      await sleep(800)
      const result = await child({ ...base, mode: 'resume', runId }).result()
      assert.equal(result.error, null, JSON.stringify(result.error))
      const chunks = await chunksOf(await follower.text)
      assert.ok(types(chunks).includes('reset-step'))
      assert.equal(types(chunks).at(-1), 'finish')
      const message = await messageOf(chunks)
      assert.equal(textOf(message), 'The second try is whole.')
      assert.equal(message.parts.filter((p) => p.type === 'step-start').length, 1)
      await sliceNumbers(Store.nativeOf(store), runId)
    })

    test('a run that was never streamed stays unrecorded when taken over', async (t) => {
      const api = await startApi(t)
      api.script(reply([toolUse('charge', { id: 'c' })]), reply([text('Done quietly.')]))
      const url = makeUrl()
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records: join(scratch, `records-${++files}.jsonl`) }
      const first = child({ ...base, mode: 'run', thread: 'quiet', prompt: 'Charge', hang: ['charge'] })
      t.after(() => first.kill())
      const store = createStore(url)
      t.after(() => store.close())
      await until(() => first.said('hanging charge'), 'the child to run its tool')
      const runId = (await store.getThread('quiet')).activeRunId
      await first.kill()
      await sleep(800)
      const result = await child({ ...base, mode: 'resume', runId }).result()
      assert.equal(result.data.text, 'Done quietly.')
      assert.equal((await resumeStream(runId, { store })).status, 204)
      assert.equal(await Store.nativeOf(store).streamTail(runId), null)
    })
  })
}
