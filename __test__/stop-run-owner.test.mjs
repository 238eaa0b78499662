// stopRun with `owner` (CONTRACT §13, durable runs): a run id from a browser is outside input, so
// a run whose thread has another owner is not found — nothing stopped, its stream untouched —
// while its own owner stops it. The state set with psql on a real PostgreSQL server: a run
// nobody holds (its lease ran out), in a thread bound to alice, its stream open.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { createStore, stopRun } from 'anthropic-tool-calling'
import { postgresBin } from '../scripts/postgres.mjs'
import { storeBackends } from './helpers.mjs'

const { backends } = storeBackends('stop-owner')
const sql = (url, statements) => {
  const r = spawnSync(join(postgresBin(), 'psql'), [url, '-At', '-q', '-v', 'ON_ERROR_STOP=1', '-c', statements], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return r.stdout.replace(/\n$/, '')
}

test('postgres: stopRun with another owner finds no run and stops nothing; with the thread\'s owner it stops it', async (t) => {
  const url = backends.postgres()
  const store = createStore(url)
  t.after(() => store.close())
  await store.getThread('none')
  sql(url, `INSERT INTO atc_threads (id, owner, metadata, status, active_run, lease_until, pending, secret, created_at, updated_at)
              VALUES ('t', 'alice', '{}', 'running', 'run_1.0', 1, '[]', 's', 0, 0);
            INSERT INTO atc_runs (id, thread_id, options, started_at_seq, progress, status, result, resumed, stop_requested, created_at, updated_at)
              VALUES ('run_1', 't', '{}', 0, '{}', 'running', '', 0, 0, 0, 0);
            INSERT INTO atc_streams (run_id, done, expires_at, updated_at) VALUES ('run_1', 0, 0, 0);
            INSERT INTO atc_stream_chunks (run_id, seq, chunks) VALUES ('run_1', 1, E'data: a\\n\\n');`)
  const state = () => sql(url, "SELECT r.status || ' ' || r.stop_requested || ' ' || s.done FROM atc_runs r JOIN atc_streams s ON s.run_id = r.id WHERE r.id = 'run_1'")
  assert.equal(await stopRun('run_1', { store, owner: 'mallory' }), false)
  assert.equal(state(), 'running 0 0', 'nothing stopped, the stream untouched')
  // `owner: session?.userId` of a visitor with no session: the key is given, so the run must be
  // ownerless (as for threads) — alice's is not.
  assert.equal(await stopRun('run_1', { store, owner: undefined }), false)
  assert.equal(await stopRun('run_1', { store, owner: null }), false)
  assert.equal(state(), 'running 0 0', 'nothing stopped by an owner key without a value')
  await assert.rejects(stopRun('run_1', { store, owner: 42 }), /stopRun: owner must be a string/)
  assert.equal(state(), 'running 0 0')
  assert.equal(await stopRun('run_1', { store, owner: 'alice' }), true)
  assert.equal(state(), 'done 1 1')
  assert.equal(await stopRun('run_1', { store, owner: 'alice' }), false, 'a stopped run is over')
})
