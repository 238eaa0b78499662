// stopRun of a run whose holder is still alive but stalled past its lease (CONTRACT §13): the
// run nobody holds is ended at once (its followers' stream ends with the abort) and asked to
// stop, so the holder, going on, ends as aborted — as the stored result says — rather than with
// store_unavailable, and writes nothing more into the stream. The holder is a child process
// (fixtures/durable-child.mjs) stopped with SIGSTOP outside any store transaction. On SQLite
// files and on a real PostgreSQL server. And a stop asked for while a dead holder's lease still
// runs: the take-over that then finds it ends the run, writing its stream's abort end.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { resumeStream, stopRun } from 'anthropic-tool-calling'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { chunkTypes, chunksOf, durableChild, hangingStreamedRun, messageOf, stallOutsideTransaction, startApi, storeBackends, uiTextOf, until, KEY } from './helpers.mjs'

const { scratch, backends: BACKENDS } = storeBackends('stop-stalled')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const waitFor = (check, what) => until(check, what, 20_000)

for (const [backend, makeUrl] of Object.entries(BACKENDS)) {
  describe(`${backend}: stopRun of a stalled holder's run`, () => {
    test('the run ends at once with the abort; the holder, going on, ends as aborted and writes nothing more', async (t) => {
      const api = await startApi(t)
      api.script(reply([text('Let me charge it.'), toolUse('charge', { id: 'x' })]), reply([text('must not be asked')]))
      const url = makeUrl()
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records: join(scratch, `records-${backend}.jsonl`), leaseMs: 2400 }
      const { child: holder, store, follower, runId } = await hangingStreamedRun(t, base, 'stalled')
      t.after(() => holder.signal('SIGCONT'))
      await stallOutsideTransaction(holder, url, store)
      await sleep(3200)
      // Its lease ran out: nobody holds the run, and stopRun ends it.
      assert.equal(await stopRun(runId, { store }), true)
      await waitFor(() => follower.over(), 'the follower to end')
      const sent = await follower.text
      assert.equal(chunkTypes(await chunksOf(sent)).at(-1), 'abort')
      holder.signal('SIGCONT')
      const result = await holder.result()
      assert.equal(result.error?.code, 'aborted', JSON.stringify(result))
      assert.equal(result.error.runId, runId)
      assert.equal(await (await resumeStream(runId, { store })).text(), sent, 'the holder wrote nothing more')
      assert.equal(uiTextOf(await messageOf(await chunksOf(sent))), 'Let me charge it.')
      assert.equal(api.requests.length, 1)
    })

    test('stopRun while a dead holder\'s lease still runs: the take-over that follows ends the run, and the follower ends with the abort', async (t) => {
      const api = await startApi(t)
      api.script(reply([text('Let me charge it.'), toolUse('charge', { id: 'y' })]), reply([text('must not be asked')]))
      const url = makeUrl()
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records: join(scratch, `records-${backend}-lease.jsonl`), leaseMs: 2400 }
      const { child: holder, store, follower, runId } = await hangingStreamedRun(t, base, 'stopped-dead')
      await holder.kill()
      // Its lease still runs: the stop is only asked for.
      assert.equal(await stopRun(runId, { store }), true)
      await sleep(300)
      assert.equal(follower.over(), false, 'the run is still held')
      await sleep(2600)
      const resumed = await durableChild({ ...base, mode: 'resume', runId }).result()
      assert.equal(resumed.error?.code, 'aborted', JSON.stringify(resumed))
      await waitFor(() => follower.over(), 'the follower to end')
      const chunks = await chunksOf(await follower.text)
      assert.equal(chunkTypes(chunks).at(-1), 'abort', chunkTypes(chunks).join(' '))
      assert.equal(uiTextOf(await messageOf(chunks)), 'Let me charge it.')
      assert.equal(api.requests.length, 1)
    })
  })
}
