// Durable runs (CONTRACT §13): a run with a store outlives its process. Each test kills a real
// child process (SIGKILL) at a step boundary — inside a tool, while a request is in flight,
// during a stream — and takes the run over in another process, on a SQLite file and on a real
// PostgreSQL server; then checks the stand-in's request log (no committed reply requested
// again) and each tool's own record (a finished call ran once; an interrupted one ran again
// with the same idempotency key, or was told to the model as interrupted).
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createStore, resumeRun, stopRun, runWithTools } from 'anthropic-tool-calling'
import { startStandIn, text, toolUse, message, slow } from 'anthropic-tool-calling/testing'
import { durableChild, storeBackends } from './helpers.mjs'
import { reply, startMockApi, text as textBlock, toolUse as toolUseBlock } from '../stand-in/index.mjs'
import { TEST_CREDENTIALS } from '../stand-in/platforms/index.mjs'

const { scratch, backends: BACKENDS, pg: server } = storeBackends('durable')
let count = 0 // names each test's record file

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Each tool's own record: one entry per event, in order. */
const records = (file) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [])

/** The thread's run id while a run holds it (null once `proc` has printed its result). */
async function activeRun(url, thread, proc) {
  const store = createStore(url)
  try {
    // Up to 30 s: a child on a busy machine can take seconds to start.
    for (let i = 0; i < 3000; i++) {
      const t = await store.getThread(thread)
      if (t && t.activeRunId) return t.activeRunId
      if (proc && proc.printed()) return null
      await sleep(10)
    }
    throw new Error('no run holds the thread')
  } finally {
    await store.close()
  }
}

/** Kills `first` (SIGKILL), waits out its lease (600 ms) and takes run `runId` over in another child: what that child printed. */
async function killedAndTakenOver(first, base, runId) {
  await first.kill()
  await sleep(700)
  return durableChild({ ...base, mode: 'resume', runId }).result()
}

async function standIn(t, script) {
  const s = await startStandIn({
    replies: async (request) => {
      const next = script.shift()
      if (next === undefined) throw new Error('the script ran out')
      return typeof next === 'function' ? next(request) : next
    },
  })
  t.after(() => s.close())
  return s
}

/** The requests' histories, as JSON text, in order. */
const histories = (s) => s.requests.map((r) => JSON.stringify(r.messages))

for (const [backend, fresh] of Object.entries(BACKENDS)) {
  describe(backend, () => {
    test('killed inside a tool: the run is taken over in another process; the finished call is not run again, the interrupted one runs again with the same key', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [message([toolUse('lookup', { id: 'a' }), toolUse('charge', { id: 'b' })]), text('all done')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'order-1', prompt: 'charge it', hang: ['charge'] })
      await first.waitFor('hanging charge')
      const runId = await activeRun(url, 'order-1')
      while (!records(file).some((r) => r.tool === 'lookup' && r.phase === 'done')) await sleep(10)
      await sleep(1000) // the finished call's record is committed right after it returns (sub-ms on SQLite, a round trip on PostgreSQL)
      await first.kill()
      await sleep(700) // the lease (600 ms) runs out

      const second = durableChild({ ...base, mode: 'resume', runId })
      const result = await second.result()
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(result.data.text, 'all done')
      assert.equal(result.data.runId, runId)
      assert.equal(result.data.resumed, 1)

      const seen = records(file)
      const lookups = seen.filter((r) => r.tool === 'lookup' && r.phase === 'start')
      const charges = seen.filter((r) => r.tool === 'charge' && r.phase === 'start')
      assert.equal(lookups.length, 1, 'the finished call ran once')
      assert.deepEqual(charges.map((r) => r.attempt), [1, 2])
      assert.equal(charges[0].key, charges[1].key)
      assert.equal(charges[0].key, `${runId}:${charges[0].toolUseId}`)
      assert.notEqual(charges[0].pid, charges[1].pid)
      // Two requests in all: the committed reply was never requested again.
      assert.equal(s.requests.length, 2)
      const resultsSent = s.requests[1].messages.at(-1).content.filter((b) => b.type === 'tool_result')
      assert.equal(resultsSent.length, 2)
      assert.ok(result.data.toolCalls.some((c) => c.toolName === 'charge' && !c.isError))
    })

    test('killed between a reply and its tools: the reply is not requested again, the call runs once, as attempt 1', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('gated', { id: 'g' }), text('gated done')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'between', prompt: 'go', holdBeforeTools: true })
      await first.waitFor('between the reply and its tools')
      const runId = await activeRun(url, 'between')
      await first.kill()
      assert.deepEqual(records(file), [], 'no tool had started')
      await sleep(700)
      const result = await durableChild({ ...base, mode: 'resume', runId }).result()
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(result.data.text, 'gated done')
      assert.deepEqual(records(file).filter((r) => r.phase === 'start').map((r) => r.attempt), [1])
      assert.equal(s.requests.length, 2, 'the committed reply was not asked for again')
    })

    test('a run with a store and no thread is durable too: its own thread, taken over by recoverRuns', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('charge', { id: 'o' }), text('own thread done')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      // A whole history as the prompt, as a run without a store takes it.
      const first = durableChild({ ...base, mode: 'run', prompt: [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'Hi, how can I help?' }, { role: 'user', content: 'charge it' }], hang: ['charge'] })
      await first.waitFor('hanging charge')
      await first.kill()
      const store = createStore(url)
      t.after(() => store.close())
      assert.deepEqual(await store.listThreads(), [], 'a run\'s own thread is listed for nobody')
      await sleep(700)
      const recovered = await durableChild({ ...base, mode: 'recover' }).result()
      assert.equal(recovered.length, 1)
      const { runId, result } = recovered[0]
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(result.data.text, 'own thread done')
      assert.equal(result.data.runId, runId)
      assert.equal(result.data.resumed, 1)
      assert.equal(result.data.messages.length, 6)
      assert.deepEqual(records(file).filter((r) => r.phase === 'start').map((r) => r.attempt), [1, 2])
      assert.equal(s.requests.length, 2)
    })

    test('killed while a request is in flight: that request is sent again, nothing runs twice', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [slow(60_000, text('never seen')), (r) => toolUse('lookup', { id: 'x' }), text('found it')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'inflight', prompt: 'find x' })
      while (s.requests.length < 1) await sleep(10)
      const runId = await activeRun(url, 'inflight')
      const result = await killedAndTakenOver(first, base, runId)
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(result.data.text, 'found it')
      const h = histories(s)
      assert.equal(h.length, 3)
      assert.equal(h[0], h[1], 'the request that was in flight is sent again as it was')
      assert.equal(records(file).filter((r) => r.phase === 'start').length, 1)
    })

    test('killed during a stream: the run goes on from its last committed step (its stream recorded on)', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('lookup', { id: 'y' }), slow(60_000, text('never seen')), text('streamed on')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'stream', thread: 'stream', prompt: 'find y' })
      while (s.requests.length < 2) await sleep(10)
      const runId = await activeRun(url, 'stream')
      const result = await killedAndTakenOver(first, base, runId)
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(result.data.text, 'streamed on')
      const h = histories(s).map((m) => JSON.parse(m))
      assert.equal(h.length, 3)
      // The request cut with the process is sent again: the whole history this time (a new API
      // thread), ending with the same new turn.
      assert.deepEqual(h[2].at(-1), h[1].at(-1))
      assert.equal(h[2].length, 3)
      assert.equal(records(file).filter((r) => r.phase === 'start').length, 1)
    })

    test('a tool registered with onInterrupted: "report" is not run again: the model is told it was interrupted', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('notify', { id: 'n' }), text('told')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'report', prompt: 'notify', hang: ['notify'] })
      await first.waitFor('hanging notify')
      const runId = await activeRun(url, 'report')
      const result = await killedAndTakenOver(first, base, runId)
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(records(file).filter((r) => r.phase === 'start').length, 1)
      const told = s.requests[1].messages.at(-1).content.find((b) => b.type === 'tool_result')
      assert.equal(told.is_error, true)
      assert.match(told.content, /interrupted .*may or may not have taken effect/)
    })

    test('a run on a cloud platform is taken over with the settings its environment gives, though resumeRun names no provider', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const api = await startMockApi({ platform: 'aws' })
      t.after(() => api.close())
      api.script(reply([toolUseBlock('charge', { id: 'p' })]), reply([textBlock('charged on AWS')]))
      // Claude Platform on AWS needs its workspace: here only from the environment, which both
      // children inherit; the log keeps `provider: { type: 'aws' }`, and the resuming call gives none.
      process.env.ANTHROPIC_AWS_WORKSPACE_ID = TEST_CREDENTIALS.awsWorkspace.id
      t.after(() => delete process.env.ANTHROPIC_AWS_WORKSPACE_ID)
      const base = { storeUrl: url, baseURL: api.url, apiKey: TEST_CREDENTIALS.awsWorkspace.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'on-aws', prompt: 'charge it', hang: ['charge'], options: { provider: { type: 'aws' }, model: 'claude-sonnet-5-5' } })
      await first.waitFor('hanging charge')
      const runId = await activeRun(url, 'on-aws')
      const result = await killedAndTakenOver(first, base, runId)
      assert.equal(result.error, null, JSON.stringify(result.error))
      assert.equal(result.data.text, 'charged on AWS')
      assert.equal(api.requests.length, 2)
      assert.ok(api.requests.every((r) => r.headers['anthropic-workspace-id'] === TEST_CREDENTIALS.awsWorkspace.id && !r.broken))
    })

    test('resumeRun of a run still held is thread_busy; of a finished run, its stored result, and nothing runs', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('charge', { id: 'c' }), text('charged')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'held', prompt: 'charge', hang: ['charge'], leaseMs: 30_000 })
      await first.waitFor('hanging charge')
      const runId = await activeRun(url, 'held')
      const store = createStore(url)
      t.after(() => store.close())
      const busy = await resumeRun(runId, { store, apiKey: s.apiKey })
      assert.equal(busy.error.code, 'thread_busy')
      assert.equal(busy.data, null)
      // Stopped where it runs: the holder sees it within a second, its tool's signal fires.
      const asked = Date.now()
      assert.equal(await stopRun(runId, { store }), true)
      const stopped = await first.result()
      assert.ok(Date.now() - asked < 3000)
      assert.equal(stopped.error.code, 'aborted')
      assert.equal(stopped.error.runId, runId)
      assert.ok(records(file).some((r) => r.phase === 'aborted'), 'the running tool saw its signal')
      assert.equal(await stopRun(runId, { store }), false, 'a finished run is left as it is')
      const again = await resumeRun(runId, { store, apiKey: s.apiKey })
      assert.equal(again.error.code, 'aborted', 'a finished run resolves with its stored result')
      assert.equal(again.error.runId, runId)
      assert.equal(s.requests.length, 1)
      assert.equal(records(file).filter((r) => r.phase === 'start').length, 1)
      const missing = await resumeRun('run_nope', { store, apiKey: s.apiKey })
      assert.equal(missing.error.code, 'invalid_request')
    })

    test('a finished run: data.runId, and resumeRun returns the same result without a request', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('lookup', { id: 'z' }), text('found z')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const done = await durableChild({ ...base, mode: 'run', thread: 'done', prompt: 'find z' }).result()
      assert.match(done.data.runId, /^run_[0-9a-f]{44}$/) // when it started (12 hex digits), then 128 random bits
      assert.ok(Math.abs(parseInt(done.data.runId.slice(4, 16), 16) - Date.now()) < 120_000, done.data.runId)
      assert.equal(done.data.resumed, 0)
      const store = createStore(url)
      t.after(() => store.close())
      const again = await resumeRun(done.data.runId, { store, apiKey: s.apiKey })
      assert.equal(again.error, null)
      assert.equal(again.data.text, 'found z')
      assert.deepEqual(again.data.toolCalls.map((c) => [c.toolName, c.output]), [['lookup', { tool: 'lookup', id: 'z' }]])
      assert.deepEqual(again.data.messages, (await store.getThread('done')).messages)
      assert.equal(s.requests.length, 2)
    })

    test('two processes resuming the same run together: one takes it, the other is thread_busy, and the run stays whole', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('charge', { id: 'r' }), text('raced')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'race', prompt: 'charge', hang: ['charge'] })
      await first.waitFor('hanging charge')
      const runId = await activeRun(url, 'race')
      await first.kill()
      await sleep(700)
      const results = await Promise.all([durableChild({ ...base, mode: 'resume', runId }).result(), durableChild({ ...base, mode: 'resume', runId }).result()])
      // The loser found it held (thread_busy), or, coming after the winner had ended it, its
      // stored result: either way one process ran it.
      for (const r of results) {
        if (r.error) assert.equal(r.error.code, 'thread_busy', JSON.stringify(r.error))
        else assert.deepEqual([r.data.text, r.data.resumed, r.data.runId], ['raced', 1, runId])
      }
      assert.ok(results.some((r) => r.data !== null))
      assert.equal(records(file).filter((r) => r.phase === 'start' && r.attempt === 2).length, 1)
      const store = createStore(url)
      t.after(() => store.close())
      const after = await resumeRun(runId, { store, apiKey: s.apiKey })
      assert.equal(after.error, null, 'the run ended answered, not superseded')
      assert.equal(after.data.text, 'raced')
      assert.equal(await stopRun(runId, { store }), false)
    })

    test('stopRun of a run whose process died: it is not taken over again; it ends aborted and runs nothing', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('charge', { id: 's' }), text('never')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'dead-stop', prompt: 'charge', hang: ['charge'] })
      await first.waitFor('hanging charge')
      const runId = await activeRun(url, 'dead-stop')
      await first.kill()
      const store = createStore(url)
      t.after(() => store.close())
      assert.equal(await stopRun(runId, { store }), true)
      await sleep(700)
      const recovered = await durableChild({ ...base, mode: 'recover' }).result()
      assert.deepEqual(recovered, [], 'a stopped run is not recovered')
      const r = await resumeRun(runId, { store, apiKey: s.apiKey })
      assert.equal(r.error.code, 'aborted')
      assert.equal(r.error.runId, runId)
      assert.equal(records(file).filter((x) => x.phase === 'start').length, 1)
      assert.equal(s.requests.length, 1)
      const thread = await store.getThread('dead-stop')
      assert.equal(thread.status, 'idle')
    })

    test('a run taken over whose toolChoice names a tool not registered here ends with its error and is not taken again', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('charge', { id: 'q' }), text('never')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const first = durableChild({ ...base, mode: 'run', thread: 'choice', prompt: 'charge', hang: ['charge'] })
      await first.waitFor('hanging charge')
      const runId = await activeRun(url, 'choice')
      await first.kill()
      await sleep(700)
      // This process registers none of the run's tools.
      const store = createStore(url)
      t.after(() => store.close())
      const r = await resumeRun(runId, { store, apiKey: s.apiKey })
      assert.equal(r.error?.code, 'tool_validation_error', JSON.stringify(r))
      const again = await resumeRun(runId, { store, apiKey: s.apiKey })
      assert.equal(again.error?.code, 'tool_validation_error')
      assert.equal(s.requests.length, 1)
    })

    test('property: killed at random points, again and again, every run ends once; each call finished once or was re-attempted with its key; no committed reply requested again', async (t) => {
      let seed = Number(process.env.DURABLE_SEED ?? Date.now() % 100_000)
      const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647)
      t.diagnostic(`seed ${seed} (DURABLE_SEED=${seed} repeats it)`)
      const url = fresh()
      let made = 0
      const log = [] // per request: its history, and what its reply was (tool_use ids, or the text)
      const s = await startStandIn({
        replies: async (request) => {
          const rounds = request.messages.filter((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result')).length
          const entry = { history: JSON.stringify(request.messages), ids: [], text: null }
          log.push(entry)
          await sleep(Math.floor(random() * 120))
          if (rounds >= 3) {
            entry.text = `done ${++made}`
            return text(entry.text)
          }
          entry.ids = [`toolu_p${++made}a`, `toolu_p${made}b`]
          return message([toolUse('lookup', { id: `r${rounds}`, ms: Math.floor(random() * 150) }, entry.ids[0]), toolUse('charge', { id: `r${rounds}`, ms: Math.floor(random() * 150) }, entry.ids[1])])
        },
      })
      t.after(() => s.close())
      for (let run = 0; run < 4; run++) {
        const file = join(scratch, `records-${++count}.jsonl`)
        const thread = `prop-${run}`
        const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
        const first = log.length
        let proc = durableChild({ ...base, mode: 'run', thread, prompt: `run ${run}` })
        let runId = await activeRun(url, thread, proc)
        let result = null
        for (let kills = 0; result === null; kills++) {
          if (kills < 2) {
            await sleep(50 + Math.floor(random() * 600))
            await proc.kill()
          }
          const printed = await proc.result().catch(() => null)
          if (printed !== null) {
            result = printed
            break
          }
          await sleep(700)
          proc = durableChild({ ...base, mode: 'resume', runId })
        }
        assert.equal(result.error, null, JSON.stringify(result.error))
        runId ??= result.data.runId
        assert.equal(result.data.runId, runId)
        const store = createStore(url)
        const { messages } = await store.getThread(thread)
        await store.close()
        // The model saw exactly one result for each call, and the run ended once, with its answer.
        const uses = messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : []))
        const results = messages.flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id) : []))
        assert.equal(uses.length, 6)
        assert.deepEqual([...results].sort(), [...uses].sort())
        assert.equal(messages.at(-1).content.at(-1).text ?? messages.at(-1).content, result.data.text)
        // Each call: one key on every attempt, attempts 1, 2 … in order, and it finished.
        for (const id of uses) {
          const mine = records(file).filter((r) => r.toolUseId === id)
          const starts = mine.filter((r) => r.phase === 'start')
          assert.ok(starts.length >= 1, `${id} never ran`)
          // Attempts go up, each seen once; one may be missing (the first, or any later one) when a
          // process was killed after the call was recorded as started and before its tool began.
          const attempts = starts.map((r) => r.attempt)
          assert.ok(attempts.every((a, i) => a >= 1 && (i === 0 || a > attempts[i - 1])), `${id}: attempts in order: ${attempts}`)
          assert.ok(mine.every((r) => r.key === `${runId}:${id}`), `${id}: one key on every attempt`)
          assert.ok(mine.some((r) => r.phase === 'done'), `${id} never finished`)
        }
        // A request is sent again only while its reply was not committed.
        const mineLog = log.slice(first)
        const committed = (e) => (e.text !== null ? e.text === result.data.text : e.ids.every((id) => uses.includes(id)))
        mineLog.forEach((e, i) => {
          const before = mineLog.slice(0, i).find((o) => o.history === e.history && committed(o))
          assert.equal(before, undefined, `request ${i} asked again for a reply already committed`)
        })
        runId = null
      }
    })

    test('two processes racing recoverRuns never take the same run; each expired run is resumed once', async (t) => {
      const url = fresh()
      const file = join(scratch, `records-${++count}.jsonl`)
      const s = await standIn(t, [toolUse('charge', { id: '1' }), toolUse('charge', { id: '2' }), text('one'), text('two')])
      const base = { storeUrl: url, baseURL: s.url, apiKey: s.apiKey, records: file }
      const a = durableChild({ ...base, mode: 'run', thread: 'r1', prompt: 'one', hang: ['charge'] })
      await a.waitFor('hanging charge')
      const b = durableChild({ ...base, mode: 'run', thread: 'r2', prompt: 'two', hang: ['charge'] })
      await b.waitFor('hanging charge')
      const ids = [await activeRun(url, 'r1'), await activeRun(url, 'r2')]
      await a.kill()
      await b.kill()
      await sleep(700)
      const [x, y] = await Promise.all([durableChild({ ...base, mode: 'recover' }).result(), durableChild({ ...base, mode: 'recover' }).result()])
      const taken = [...x, ...y].map((r) => r.runId)
      assert.deepEqual([...taken].sort(), [...ids].sort(), 'every expired run was taken, none twice')
      for (const { result } of [...x, ...y]) assert.equal(result.error, null, JSON.stringify(result.error))
      const seconds = records(file).filter((r) => r.phase === 'start' && r.attempt === 2)
      assert.equal(seconds.length, 2, 'each interrupted charge ran again exactly once')
    })
  })
}

test('a streamed durable run tells its runId in its first part and in the UI stream start chunk', async (t) => {
  const { registerTool, streamWithTools } = await import('anthropic-tool-calling')
  registerTool({ definition: { name: 'durable_stream_lookup', description: 'Looks up', input_schema: { type: 'object' } }, execute: async () => 'ok' })
  const s = await standIn(t, [toolUse('durable_stream_lookup', {}), text('streamed'), toolUse('durable_stream_lookup', {}), text('again')])
  const store = createStore(BACKENDS.sqlite())
  t.after(() => store.close())
  const parts = []
  const stream = streamWithTools('go', { store, thread: 'ui', baseURL: s.url, apiKey: s.apiKey, tools: ['durable_stream_lookup'] })
  for await (const part of stream) parts.push(part)
  const result = await stream.result
  assert.equal(parts[0].type, 'start-step')
  assert.equal(parts[0].runId, result.data.runId)
  assert.match(result.data.runId, /^run_/)

  const ui = streamWithTools('once more', { store, thread: 'ui', baseURL: s.url, apiKey: s.apiKey, tools: ['durable_stream_lookup'] })
  const sse = await ui.toUIMessageStreamResponse().text()
  const chunks = sse.split('\n\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)))
  const again = await ui.result
  assert.deepEqual(chunks[0], { type: 'start', messageMetadata: { runId: again.data.runId } })
  assert.notEqual(again.data.runId, result.data.runId)
})

test("postgres: a run's log keeps no secret: not the key, the headers, the approval secret or an MCP server's token", async (t) => {
  const url = server().createDatabase('secrets')
  const s = await standIn(t, [text('kept')])
  const store = createStore(url)
  t.after(() => store.close())
  const secrets = { key: s.apiKey, header: 'hdr-secret-0123456789', approval: 'approval-secret-0123456789abcdef0123456789', token: 'mcp-token-0123456789' }
  const r = await runWithTools('hi', {
    store,
    thread: 'secret',
    baseURL: s.url,
    apiKey: secrets.key,
    headers: { 'x-team': secrets.header },
    approvalSecret: secrets.approval,
    mcpServers: [{ name: 'docs', url: 'https://docs.example.com/mcp', authorizationToken: secrets.token }],
  })
  assert.equal(r.error, null, JSON.stringify(r.error))
  const logged = server().sql('secrets', 'SELECT options FROM atc_runs')
  assert.match(logged, /docs\.example\.com/)
  for (const secret of Object.values(secrets)) assert.ok(!logged.includes(secret), `the log holds ${secret}`)
})
