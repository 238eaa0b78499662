// A run's stream in the store at its races (CONTRACT §13, resumable streams), each state set up
// with psql on a real PostgreSQL server: a holder's slice waiting for the run's row while another
// transaction ends the run and its stream; the sweep of streams whose time is up; a take-over
// that finds the run just ended by a holder still writing its last slices; a recorder whose run
// was taken over again before it read the stream.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { createStore, resumeRun } from 'anthropic-tool-calling'
import { postgresBin } from '../scripts/postgres.mjs'
import { storeBackends, until, KEY } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { Store } = require('../lib/store.js')
const { recorderFor } = require('../lib/stream/record.js')

const { backends } = storeBackends('races')
const psql = (url) => join(postgresBin(), 'psql')
/** Runs `statements` with psql; its output (unaligned, tuples only). */
const sql = (url, statements) => {
  const r = spawnSync(psql(url), [url, '-At', '-q', '-v', 'ON_ERROR_STOP=1', '-c', statements], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return r.stdout.replace(/\n$/, '')
}
/** The stream of run `run`: its text and whether it is over. */
const streamOf = (url, run) => ({
  text: sql(url, `SELECT string_agg(chunks, '' ORDER BY seq) FROM atc_stream_chunks WHERE run_id = '${run}'`),
  done: sql(url, `SELECT done FROM atc_streams WHERE run_id = '${run}'`),
})
const RUN = `INSERT INTO atc_runs (id, thread_id, options, started_at_seq, progress, status, result, resumed, stop_requested, created_at, updated_at)`

/** A fresh PostgreSQL store with thread `t` and run `run_1` holding it (generation 0), its stream open with 'a'. */
async function storeWithARun(t, { lease = '9999999999999', status = "'running', ''", at = 'now' } = {}) {
  const url = backends.postgres()
  const store = createStore(url)
  t.after(() => store.close())
  await store.getThread('none')
  const now = at === 'now' ? Date.now() : at
  sql(url, `INSERT INTO atc_threads (id, owner, metadata, status, active_run, lease_until, pending, secret, created_at, updated_at)
              VALUES ('t', '', '{}', 'running', 'run_1.0', ${lease}, '[]', 's', 0, 0);
            ${RUN} VALUES ('run_1', 't', '{}', 0, '{}', ${status}, 0, 0, 0, ${now});
            INSERT INTO atc_streams (run_id, done, expires_at, updated_at) VALUES ('run_1', 0, 0, ${now});
            INSERT INTO atc_stream_chunks (run_id, seq, chunks) VALUES ('run_1', 1, E'data: a\\n\\n');`)
  return { url, store, native: Store.nativeOf(store) }
}

test('postgres: a holder\'s slice that waited for the run\'s row while another transaction ended the run and its stream is dropped: the stream stays over', async (t) => {
  const { url, store, native } = await storeWithARun(t)
  // A transaction that ends the run and its stream (as stopRun does for a run nobody holds),
  // holding the run's row while the holder's slice comes.
  const ender = spawn(psql(url), [url, '-q', '-v', 'ON_ERROR_STOP=1'], { stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  ender.stdout.on('data', (d) => (out += d))
  const exited = new Promise((resolve) => ender.on('exit', resolve))
  ender.stdin.write("BEGIN;\nSELECT id FROM atc_runs WHERE id = 'run_1' FOR UPDATE;\nSELECT 'locked';\n")
  await until(() => out.includes('locked'), 'psql to lock the run')
  native.recordStream('run_1', 0, 'data: late\n\n', false)
  await until(() => sql(url, 'SELECT count(*) FROM pg_locks WHERE NOT granted') !== '0', 'the slice to wait for the run\'s row')
  ender.stdin.end(`UPDATE atc_runs SET status = 'done', result = '{}' WHERE id = 'run_1';
    INSERT INTO atc_stream_chunks (run_id, seq, chunks) VALUES ('run_1', 2, E'data: [DONE]\\n\\n');
    UPDATE atc_streams SET done = 1, expires_at = 99999999999999 WHERE run_id = 'run_1';
    COMMIT;\n`)
  assert.equal(await exited, 0)
  await store.close()
  assert.deepEqual(streamOf(url, 'run_1'), { text: 'data: a\n\ndata: [DONE]\n\n', done: '1' })
})

test('postgres: the last write sweeps the streams whose time is up, and only those', async (t) => {
  const { url, native } = await storeWithARun(t)
  sql(url, `${RUN} VALUES ('old', 't', '{}', 0, '{}', 'done', '{}', 0, 0, 1, 1), ('live', 't', '{}', 0, '{}', 'running', '', 0, 0, 1, 1),
              ('expired', 't', '{}', 0, '{}', 'done', '{}', 0, 0, 1, 1), ('kept', 't', '{}', 0, '{}', 'done', '{}', 0, 0, 1, 1);
            INSERT INTO atc_streams (run_id, done, expires_at, updated_at) VALUES ('old', 0, 0, 1), ('live', 0, 0, 1), ('expired', 1, 2, 1), ('kept', 1, 99999999999999, 1);
            INSERT INTO atc_stream_chunks (run_id, seq, chunks) VALUES ('old', 1, 'x'), ('live', 1, 'x'), ('expired', 1, 'x'), ('kept', 1, 'x');
            UPDATE atc_runs SET status = 'done', result = '{}' WHERE id = 'run_1';`)
  native.recordStream('run_1', 0, 'data: [DONE]\n\n', true)
  const left = () => sql(url, "SELECT string_agg(run_id, ',' ORDER BY run_id) FROM atc_streams")
  await until(() => left() === 'kept,live,run_1', 'the sweep')
  assert.equal(sql(url, "SELECT count(*) FROM atc_stream_chunks WHERE run_id IN ('old', 'expired')"), '0')
  assert.equal(sql(url, "SELECT count(*) FROM atc_stream_chunks WHERE run_id IN ('live', 'kept')"), '2')
})

const stored = JSON.stringify({ data: null, error: { code: 'tool_execution_error', message: 'The charge failed.' } })
const ended = `'done', '${stored}'`

test('postgres: a take-over that finds the run just ended by its holder writes no end: the holder\'s last slices and its own end go in', async (t) => {
  const { url, store, native } = await storeWithARun(t, { lease: '1', status: ended })
  const result = await resumeRun('run_1', { store, apiKey: KEY })
  assert.equal(result.error?.code, 'tool_execution_error', JSON.stringify(result))
  // The holder hands its last slices and its end over after it committed the run's end (the
  // 40 ms gap between writes, and more on a busy machine): an end the take-over wrote would be
  // in by then.
  await new Promise((r) => setTimeout(r, 300))
  native.recordStream('run_1', 0, 'data: b\n\n', false)
  native.recordStream('run_1', 0, 'data: end\n\ndata: [DONE]\n\n', true)
  await store.close()
  assert.deepEqual(streamOf(url, 'run_1'), { text: 'data: a\n\ndata: b\n\ndata: end\n\ndata: [DONE]\n\n', done: '1' })
})

test('postgres: a take-over that finds the run ended a while ago (neither it nor its stream changed since) writes the end from its stored result', async (t) => {
  const { url, store } = await storeWithARun(t, { lease: '1', status: ended, at: Date.now() - 10_000 })
  const result = await resumeRun('run_1', { store, apiKey: KEY })
  assert.equal(result.error?.code, 'tool_execution_error', JSON.stringify(result))
  await store.close()
  const { text, done } = streamOf(url, 'run_1')
  assert.equal(done, '1')
  assert.match(text, /^data: a\n\ndata: \{"type":"error","errorText":".*"\}\n\ndata: \{"type":"finish","finishReason":"error"\}\n\ndata: \[DONE\]\n\n$/)
})

test('a recorder whose run was taken over again before it read the stream (a newer generation) writes nothing', async (t) => {
  const store = createStore(`sqlite:${join(backends.sqlite())}`)
  t.after(() => store.close())
  const native = Store.nativeOf(store)
  const written = []
  native.recordStream = (...args) => written.push(args)
  // This process took the run at generation 1; a third process took it over (generation 2)
  // before this one read the stream.
  native.streamState = async () => ({ sent: 'data: {"type":"start"}\n\n', generation: 2, result: null, idle: false })
  const recorder = recorderFor(store, { runId: 'run_x' })
  recorder.feed([{ type: 'taken', generation: 1 }])
  recorder.feed([{ type: 'start-step', step: 0, runId: 'run_x' }, { type: 'text-delta', text: 'Hi' }])
  await recorder.end({ data: { text: 'Hi', stopReason: 'end_turn' }, error: null })
  assert.deepEqual(written, [])
  // Of its own generation, it records on.
  native.streamState = async () => ({ sent: 'data: {"type":"start"}\n\n', generation: 1, result: null, idle: false })
  const own = recorderFor(store, { runId: 'run_x' })
  own.feed([{ type: 'taken', generation: 1 }])
  own.feed([{ type: 'start-step', step: 0, runId: 'run_x' }, { type: 'text-delta', text: 'Hi' }])
  await own.end({ data: { text: 'Hi', stopReason: 'end_turn' }, error: null })
  assert.ok(written.length >= 2 && written.every(([run, generation]) => run === 'run_x' && generation === 1), JSON.stringify(written))
  assert.equal(written.at(-1)[3], true)
})
