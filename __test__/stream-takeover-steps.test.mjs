// Streamed runs taken over in states only a race makes (CONTRACT §13), set up on a real
// PostgreSQL server with psql. A run whose step was committed before that step's end reached the
// stream (the stream table locked while the first process commits its round and asks for its
// next step; then it is killed): the take-over goes on with the next step, so the open step is
// finished and kept, not taken back. A run that ended a while ago (its result stored, its stream
// without an end) when recoverRuns reached it: its stream gets its end from that result. Read with the `ai` package's own parser
// and readUIMessageStream.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { createStore, resumeStream } from 'anthropic-tool-calling'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { postgresBin } from '../scripts/postgres.mjs'
import { chunkTypes, chunksOf, durableChild, hangingStreamedRun, messageOf, reading, startApi, storeBackends, uiTextOf, until, KEY } from './helpers.mjs'

const { scratch, backends } = storeBackends('steps')
const waitFor = (check, what) => until(check, what, 20_000)

const psqlOf = (url) => spawn(join(postgresBin(), 'psql'), [url, '-q', '-v', 'ON_ERROR_STOP=1'], { stdio: ['pipe', 'pipe', 'inherit'] })

/** A psql session holding `atc_streams` locked (no slice can be written) until `release()`. */
async function lockStreams(url) {
  const psql = psqlOf(url)
  let out = ''
  psql.stdout.on('data', (d) => (out += d))
  const exited = new Promise((resolve) => psql.on('exit', resolve))
  psql.stdin.write("BEGIN;\nLOCK TABLE atc_streams IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n")
  await waitFor(() => out.includes('locked'), 'psql to lock the streams')
  return {
    async release() {
      psql.stdin.end('COMMIT;\n')
      await exited
    },
  }
}

test('postgres: a step committed whose finish-step never reached the stream is kept when the take-over goes on with the next step', async (t) => {
  const api = await startApi(t)
  api.script(
    reply([text('Let me look it up.'), toolUse('lookup', { id: 'l', ms: 300 })]),
    // The first process asks for step 1 and is killed while it streams.
    { ...reply([text('This answer is cut off and asked for again.')]), streamDelayMs: 2000 },
    reply([text(' Found it.')]),
  )
  const url = backends.postgres()
  const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records: join(scratch, 'records.jsonl') }
  const first = durableChild({ ...base, mode: 'stream', thread: 'steps', prompt: 'Look it up' })
  t.after(() => first.kill())
  const store = createStore(url)
  t.after(() => store.close())
  await waitFor(() => first.said('streaming'), 'the child to stream')
  const follower = reading(await resumeStream({ thread: 'steps' }, { store }))
  await waitFor(() => follower.soFar().includes('tool-input-available'), 'the first step in the stream')
  const lock = await lockStreams(url)
  t.after(() => lock.release())
  // The round ran and was committed with the next request; none of it reached the stream.
  await waitFor(() => api.requests.length === 2, 'the child to ask for its next step')
  await first.kill()
  await lock.release()
  const start = (await chunksOf(follower.soFar())).find((c) => c.type === 'start')
  const runId = start.messageMetadata.runId
  await new Promise((r) => setTimeout(r, 800))
  const result = await durableChild({ ...base, mode: 'resume', runId }).result()
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(result.data.text, ' Found it.')
  const chunks = await chunksOf(await follower.text)
  const types = chunkTypes(chunks)
  assert.ok(!types.includes('reset-step'), `the committed step is not taken back: ${types.join(' ')}`)
  assert.deepEqual(types.filter((c) => c.endsWith('-step')), ['start-step', 'finish-step', 'start-step', 'finish-step'])
  assert.equal(types.at(-1), 'finish')
  const message = await messageOf(chunks)
  assert.equal(uiTextOf(message), 'Let me look it up. Found it.')
  assert.ok(message.parts.some((p) => p.type === 'tool-lookup'), 'the call stays')
})

test('postgres: recoverRuns reaching a run that had ended (its result stored, its stream without an end) writes the end from that result', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('Let me charge it.'), toolUse('charge', { id: 'e' })]), reply([text('must not be asked')]))
  const url = backends.postgres()
  const base = { storeUrl: url, baseURL: api.url, apiKey: KEY, records: join(scratch, 'records-ended.jsonl') }
  const { child: first, store, follower, runId } = await hangingStreamedRun(t, base, 'ended')
  await first.kill()
  await new Promise((r) => setTimeout(r, 800))
  // What recoverRuns finds when another process ended the run after it listed it and died
  // before it wrote the stream's end: the result stored a while ago (neither the run nor its
  // stream changed for 10 s), the thread not let go yet, the stream's end not written.
  const ended = JSON.stringify({ data: null, error: { code: 'tool_execution_error', message: 'The charge failed.' } })
  const psql = psqlOf(url)
  psql.stdin.end(`UPDATE atc_runs SET status = 'done', result = '${ended}', updated_at = updated_at - 10000 WHERE id = '${runId}';
    UPDATE atc_streams SET updated_at = updated_at - 10000 WHERE run_id = '${runId}';\n`)
  assert.equal(await new Promise((resolve) => psql.on('exit', resolve)), 0)
  const recovered = await durableChild({ ...base, mode: 'recover' }).result()
  assert.deepEqual(recovered, [], 'a run another process ended is not this one to report')
  const at = Date.now()
  await waitFor(() => follower.over(), 'the follower to end')
  assert.ok(Date.now() - at < 4000, 'the follower ends at once, not when the stream is given up')
  const chunks = await chunksOf(await follower.text)
  assert.deepEqual(chunkTypes(chunks).slice(-2), ['error', 'finish'])
  assert.equal(api.requests.length, 1)
})
