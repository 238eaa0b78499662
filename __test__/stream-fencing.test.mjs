// Resumable streams and durable runs at their edges (CONTRACT §13): a holder whose lease ran out
// while it was still alive writes nothing into the stream of the run another process took over;
// stopRun of a run nobody holds ends it and its followers' streams; options a resumeRun gives
// that do not hold leave the run resumable; a take-over that finds the run over writes its
// stream's end. Child processes (fixtures/durable-child.mjs) run, stall (SIGSTOP), die (SIGKILL)
// and take over; followers read with the `ai` package's own parser and readUIMessageStream. On
// SQLite files and on a real PostgreSQL server.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createStore, resumeRun, resumeStream, stopRun } from 'anthropic-tool-calling'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { chunkTypes, chunksOf, durableChild, hangingStreamedRun, messageOf, stallOutsideTransaction, startApi, storeBackends, uiTextOf, until, KEY } from './helpers.mjs'

const { scratch, backends: BACKENDS } = storeBackends('fencing')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let files = 0

/** A child takes seconds to start on a busy machine: the waits here allow 20 s. */
const waitFor = (check, what) => until(check, what, 20_000)

/** The tool records a child wrote: one object per event. */
const recordsOf = (file) => {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))
  } catch {
    return []
  }
}

for (const [backend, makeUrl] of Object.entries(BACKENDS)) {
  describe(`${backend}: streams of runs at their edges`, () => {
    test('a holder stalled past its lease (SIGSTOP) writes nothing once another process took the run over: followers see one stream, ending with the new holder\'s end', async (t) => {
      const api = await startApi(t)
      api.script(reply([text('Let me charge it.'), toolUse('charge', { id: 'b', ms: 2500 })]), reply([text('Charged by the new holder.')]))
      const url = makeUrl()
      const records = join(scratch, `records-${++files}.jsonl`)
      // A lease of 2.4 s: the holder touches the store every 0.8 s; it is stopped where it is in
      // no transaction (stallOutsideTransaction), so the taker is never kept waiting by it.
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records, leaseMs: 2400 }
      const { child: stalled, store, follower, runId } = await hangingStreamedRun(t, base, 'stall')
      t.after(() => stalled.signal('SIGCONT'))
      await stallOutsideTransaction(stalled, url, store)
      await sleep(3200)
      // Another process takes the run over; while it runs the call again (2.5 s), the stalled
      // holder goes on, finds it lost the run, and ends with its own error.
      const taker = durableChild({ ...base, mode: 'resume', runId })
      await waitFor(() => recordsOf(records).some((r) => r.attempt === 2 && r.phase === 'start'), 'the new holder to run the call again')
      stalled.signal('SIGCONT')
      const lost = await stalled.result()
      assert.equal(lost.error?.code, 'store_unavailable', JSON.stringify(lost))
      const result = await taker.result()
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(result.data.resumed, 1)
      const chunks = await chunksOf(await follower.text)
      const types = chunkTypes(chunks)
      assert.equal(types.at(-1), 'finish', types.join(' '))
      assert.ok(!types.includes('error'), `the stalled holder's end is not in the stream: ${types.join(' ')}`)
      assert.equal(types.filter((c) => c === 'start').length, 1)
      const message = await messageOf(chunks)
      assert.equal(uiTextOf(message), 'Let me charge it.Charged by the new holder.')
      const charge = message.parts.find((p) => p.type === 'tool-charge')
      assert.deepEqual(charge.output, { tool: 'charge', id: 'b' })
      // A late follower reads the same stream.
      assert.equal(await (await resumeStream(runId, { store })).text(), await follower.text)
    })

    test('stopRun of a run whose process died (nobody took it over) ends it: the follower ends with the abort, and a later resumeRun or recoverRuns runs nothing', async (t) => {
      const api = await startApi(t)
      api.script(reply([text('Working on it.'), toolUse('charge', { id: 's' })]), reply([text('must not be asked')]))
      const url = makeUrl()
      const records = join(scratch, `records-${++files}.jsonl`)
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records }
      const { child: first, store, follower, runId } = await hangingStreamedRun(t, base, 'orphan')
      await first.kill()
      await sleep(800)
      assert.equal(follower.over(), false, 'the follower waits for the orphaned run')
      // From another store handle, as another instance would.
      const other = createStore(url)
      t.after(() => other.close())
      assert.equal(await stopRun(runId, { store: other }), true)
      await waitFor(() => follower.over(), 'the follower to end')
      const chunks = await chunksOf(await follower.text)
      assert.equal(chunkTypes(chunks).at(-1), 'abort', chunkTypes(chunks).join(' '))
      const message = await messageOf(chunks)
      assert.equal(uiTextOf(message), 'Working on it.')
      assert.equal((await resumeStream({ thread: 'orphan' }, { store })).status, 204)
      assert.equal(await stopRun(runId, { store }), false, 'a stopped run is over')
      const resumed = await durableChild({ ...base, mode: 'resume', runId }).result()
      assert.equal(resumed.error?.code, 'aborted', JSON.stringify(resumed))
      assert.deepEqual(await durableChild({ ...base, mode: 'recover' }).result(), [])
      assert.equal(api.requests.length, 1, 'nothing more was asked')
      assert.equal(recordsOf(records).filter((r) => r.phase === 'start').length, 1, 'the call never ran again')
      const thread = await store.getThread('orphan')
      assert.equal(thread.activeRunId ?? null, null)
    })

    test('resumeRun with options that do not hold (apiKey: 42) is invalid_request and leaves the run resumable, its stream open', async (t) => {
      const api = await startApi(t)
      api.script(reply([text('Let me charge it.'), toolUse('charge', { id: 'k' })]), reply([text('Charged after all.')]))
      const url = makeUrl()
      const records = join(scratch, `records-${++files}.jsonl`)
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records }
      const { child: first, store, follower, runId } = await hangingStreamedRun(t, base, 'bad-options')
      await first.kill()
      await sleep(800)
      const refused = await resumeRun(runId, { store, apiKey: 42 })
      assert.equal(refused.error?.code, 'invalid_request', JSON.stringify(refused))
      assert.match(refused.error.message, /apiKey/)
      assert.equal((await resumeStream({ thread: 'bad-options' }, { store })).status, 200, 'the run is still in progress')
      assert.equal(follower.over(), false)
      const result = await durableChild({ ...base, mode: 'resume', runId }).result()
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(result.data.text, 'Charged after all.')
      assert.equal(result.data.resumed, 1, 'the refused call took nothing over')
      const chunks = await chunksOf(await follower.text)
      assert.equal(chunkTypes(chunks).at(-1), 'finish')
      assert.equal(uiTextOf(await messageOf(chunks)), 'Let me charge it.Charged after all.')
    })

    test('a take-over that ends the run without running it (its options do not hold here) writes the stream\'s end', async (t) => {
      const api = await startApi(t)
      api.script(reply([text('Let me charge it.'), toolUse('charge', { id: 'g' })]), reply([text('must not be asked')]))
      const url = makeUrl()
      const records = join(scratch, `records-${++files}.jsonl`)
      const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records }
      const toolChoice = { type: 'tool', name: 'charge' }
      const { child: first, store, follower, runId } = await hangingStreamedRun(t, base, 'gone', { toolChoice })
      await first.kill()
      await sleep(800)
      // This process registered no `charge`: the run's toolChoice does not hold here, and the
      // run ends with invalid_request, for good.
      const result = await durableChild({ ...base, mode: 'resume', runId, only: ['lookup'] }).result()
      assert.equal(result.error?.code, 'invalid_request', JSON.stringify(result))
      const ended = Date.now()
      await waitFor(() => follower.over(), 'the follower to end')
      assert.ok(Date.now() - ended < 4000, 'the follower ends at once, not when the stream is given up')
      const chunks = await chunksOf(await follower.text)
      assert.deepEqual(chunkTypes(chunks).slice(-2), ['error', 'finish'])
      assert.equal(api.requests.length, 1)
    })
  })
}
