// A streamed run taken over after its step was committed, before that step's end reached the
// stream (CONTRACT §13): the take-over goes on with the next step, so the open step is finished
// and kept, not taken back. On a real PostgreSQL server, whose stream table the test locks (with
// psql) so that the first process commits its round and asks for its next step while none of
// its stream's slices can be written; then it is killed (SIGKILL) and another process takes the
// run over. Read with the `ai` package's own parser and readUIMessageStream.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { createStore, resumeStream } from 'anthropic-tool-calling'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { postgresBin } from '../scripts/postgres.mjs'
import { chunkTypes, chunksOf, durableChild, messageOf, reading, startApi, storeBackends, uiTextOf, until, KEY } from './helpers.mjs'

const { scratch, backends } = storeBackends('steps')
const waitFor = (check, what) => until(check, what, 20_000)

/** A psql session holding `atc_streams` locked (no slice can be written) until `release()`. */
async function lockStreams(url) {
  const psql = spawn(join(postgresBin(), 'psql'), [url, '-q', '-v', 'ON_ERROR_STOP=1'], { stdio: ['pipe', 'pipe', 'inherit'] })
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
