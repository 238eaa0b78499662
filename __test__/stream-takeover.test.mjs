// Resumable streams across a take-over (CONTRACT §13): a child process streams a run with a store
// and is killed (SIGKILL) mid-run; a follower reads the run's stream with resumeStream from this
// process, before and after another child takes the run over (resumeRun, recoverRuns). The new
// holder records on into the same stream, so every follower — read with the `ai` package's own
// parser and readUIMessageStream — sees the run to its finish; the slices are numbered on, with
// no gap. On SQLite files and on a real PostgreSQL server.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { createStore, resumeStream } from 'anthropic-tool-calling'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { chunkTypes, chunksOf, durableChild, hangingStreamedRun, messageOf, reading, startApi, storeBackends, uiTextOf, until, KEY } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { Store } = require('../lib/store.js')
const { scratch, backends: BACKENDS } = storeBackends('takeover')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let files = 0

/** A child takes seconds to start on a busy machine: the waits here allow 20 s. */
const waitFor = (check, what) => until(check, what, 20_000)

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
        const { child: first, store, follower: before, runId } = await hangingStreamedRun(t, base, `t-${takeOver}`)
        const native = Store.nativeOf(store)
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
        await waitFor(() => during.soFar().includes('tool-input-available'), 'the replay to the new follower')

        const taker = durableChild({ ...base, mode: takeOver, runId })
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
        assert.equal(chunkTypes(chunks).at(-1), 'finish')
        assert.equal(chunkTypes(chunks).filter((c) => c === 'start').length, 1, 'one start')
        assert.equal(chunkTypes(chunks).filter((c) => c === 'tool-input-available').length, 1, 'the call announced once')
        const message = await messageOf(chunks)
        assert.equal(uiTextOf(message), 'Let me charge it.Charged: all done.')
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
      const first = durableChild({ ...base, mode: 'stream', thread: 'mid-text', prompt: 'Write' })
      t.after(() => first.kill())
      const store = createStore(url)
      t.after(() => store.close())
      await waitFor(() => first.said('streaming'), 'the child to stream')
      const follower = reading(await resumeStream({ thread: 'mid-text' }, { store }))
      await waitFor(() => follower.soFar().includes('text-delta'), 'some text')
      const runId = await runIdOf(follower)
      await first.kill()
      await sleep(800)
      const result = await durableChild({ ...base, mode: 'resume', runId }).result()
      assert.equal(result.error, null, JSON.stringify(result.error))
      const chunks = await chunksOf(await follower.text)
      assert.ok(chunkTypes(chunks).includes('reset-step'))
      assert.equal(chunkTypes(chunks).at(-1), 'finish')
      const message = await messageOf(chunks)
      assert.equal(uiTextOf(message), 'The second try is whole.')
      assert.equal(message.parts.filter((p) => p.type === 'step-start').length, 1)
      await sliceNumbers(Store.nativeOf(store), runId)
    })

    test('a run that was never streamed stays unrecorded when taken over', async (t) => {
      const api = await startApi(t)
      api.script(reply([toolUse('charge', { id: 'c' })]), reply([text('Done quietly.')]))
      const url = makeUrl()
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records: join(scratch, `records-${++files}.jsonl`) }
      const first = durableChild({ ...base, mode: 'run', thread: 'quiet', prompt: 'Charge', hang: ['charge'] })
      t.after(() => first.kill())
      const store = createStore(url)
      t.after(() => store.close())
      await waitFor(() => first.said('hanging charge'), 'the child to run its tool')
      const runId = (await store.getThread('quiet')).activeRunId
      await first.kill()
      await sleep(800)
      const result = await durableChild({ ...base, mode: 'resume', runId }).result()
      assert.equal(result.data.text, 'Done quietly.')
      assert.equal((await resumeStream(runId, { store })).status, 204)
      assert.equal(await Store.nativeOf(store).streamOpen(runId), false)
    })
  })
}
