// The addon in worker_threads. It loads in several workers at once,
// each with its own registry, running conversations concurrently; terminating a worker mid-run
// (a tool running, a request in flight) does not crash the process, and the main thread's runs
// keep working after. The secrets check rides along: the key appears in no result, no worker output and no
// stand-in record but the auth header.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { once } from 'node:events'
import { registerTool, listTools, runWithTools } from '../index.mjs'
import { text, toolUse, reply } from '../stand-in/index.mjs'
import { KEY, startApi, at } from './helpers.mjs'
import { assertRecordsClean, assertNoKeyIn, assertKeyAbsent } from './secrets.mjs'

const AGENT = new URL('./fixtures/worker-agent.mjs', import.meta.url)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
/** `promise`, or `fallback` after `ms` (a timer that keeps nothing alive). */
const within = (promise, ms, fallback) => Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms, fallback).unref())])

// The main thread's own who_am_i: the workers' tools of the same name must not replace it.
registerTool({
  definition: { name: 'who_am_i', input_schema: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] } },
  execute: ({ i }) => `main#${i}`,
})

/** The stand-in's model for every test here; `hooks.request(prompt)` sees each first request. */
function model(hooks = {}) {
  return (body) => {
    const first = body.messages[0].content
    const last = body.messages.at(-1)
    const results = Array.isArray(last.content) ? last.content.filter((b) => b.type === 'tool_result') : []
    if (results.length === 0) hooks.request?.(first)
    const m = /^whoami (\S+) (\d+)$/.exec(first)
    if (m) {
      if (results.length === 0) return reply([toolUse('who_am_i', { i: Number(m[2]) })])
      return reply([text(`${m[1]}/${m[2]}: ${results[0].content}`)])
    }
    if (first === 'hang-tool') return reply([toolUse('hang', {})])
    if (first === 'hang-request') return { fault: 'delay', ms: 400, then: reply([toolUse('who_am_i', { i: 1 })]) }
    return reply([text(`unexpected prompt ${first}`)])
  }
}

/** A worker running fixtures/worker-agent.mjs, with its messages and its output captured. */
function startWorker(t, id, api) {
  const worker = new Worker(AGENT, { workerData: { id, url: api.url, key: KEY }, stdout: true, stderr: true })
  const state = { output: '', errors: [], messages: [], waiters: [] }
  worker.stdout.setEncoding('utf8').on('data', (s) => (state.output += s))
  worker.stderr.setEncoding('utf8').on('data', (s) => (state.output += s))
  worker.on('error', (e) => state.errors.push(e))
  worker.on('message', (m) => {
    assertNoKeyIn(`a message of worker ${id}`, m)
    const w = state.waiters.findIndex((x) => x.type === m.type)
    if (w === -1) state.messages.push(m)
    else state.waiters.splice(w, 1)[0].resolve(m)
  })
  const exited = once(worker, 'exit').then(([code]) => code)
  t.after(() => worker.terminate())
  return {
    worker,
    id,
    exited,
    state,
    send: (msg) => worker.postMessage(msg),
    /** The next message of `type`, within `ms`. */
    next(type, ms = 10_000) {
      const i = state.messages.findIndex((m) => m.type === type)
      if (i !== -1) return Promise.resolve(state.messages.splice(i, 1)[0])
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`worker ${id}: no ${type} message within ${ms} ms (errors: ${state.errors.join('; ')})`)), ms)
        state.waiters.push({ type, resolve: (m) => (clearTimeout(timer), resolve(m)) })
      })
    },
    /** Nothing secret in what it wrote, and no error event. */
    check() {
      assertKeyAbsent(state.output, `the output of worker ${id}`)
      assert.deepEqual(state.errors, [], `worker ${id} raised errors`)
    },
  }
}

/** The main thread runs `n` conversations at once with its own tool; all must be right. */
async function assertMainWorks(api, n = 20, tag = 'main') {
  const results = await Promise.all(Array.from({ length: n }, (_, i) => runWithTools(`whoami ${tag} ${i}`, at(api, { tools: ['who_am_i'] }))))
  results.forEach((r, i) => {
    assert.equal(r.error, null, r.error && r.error.message)
    assert.equal(r.data.text, `${tag}/${i}: main#${i}`)
  })
  assertNoKeyIn('a main-thread result', results)
}

test('the addon loads in 4 workers at once; each has its own registry and runs conversations alongside the others', async (t) => {
  const api = await startApi(t, { handler: model() })
  const ids = ['w1', 'w2', 'w3', 'w4']
  const workers = ids.map((id) => startWorker(t, id, api))
  const ready = await Promise.all(workers.map((w) => w.next('ready')))
  ready.forEach((m, i) => assert.deepEqual(m.tools, ['who_am_i', `only_in_${ids[i]}`, 'hang'], `the registry of ${ids[i]}`))
  assert.deepEqual(listTools().map((d) => d.name), ['who_am_i'], 'the main thread sees none of the workers\' tools')

  // A worker cannot offer a tool registered in another one.
  workers.forEach((w, i) => w.send({ cmd: 'run-other', other: ids[(i + 1) % ids.length] }))
  for (const [i, w] of workers.entries()) {
    const { error } = await w.next('other')
    assert.equal(error.code, 'invalid_request')
    assert.match(error.message, new RegExp(`only_in_${ids[(i + 1) % ids.length]}.*not registered`))
  }

  // All at once: 4 workers × 60 conversations (10 at a time, tools taking 0–10 ms) and the main thread.
  workers.forEach((w) => w.send({ cmd: 'run', n: 60, concurrency: 10, delayMs: 10 }))
  await assertMainWorks(api, 60)
  for (const w of workers) {
    const done = await w.next('done', 30_000)
    assert.deepEqual(done.wrong, [], `worker ${w.id}`)
    assert.equal(done.correct, 60, `worker ${w.id}`)
  }
  // Asked to stop, each worker ends by itself: the addon holds no handle in a worker either.
  workers.forEach((w) => w.send({ cmd: 'exit' }))
  const codes = await within(Promise.all(workers.map((w) => w.exited)), 10_000, 'timeout')
  assert.deepEqual(codes, [0, 0, 0, 0], 'the workers exit by themselves')
  workers.forEach((w) => w.check())
  assert.equal(api.requests.length, 5 * 60 * 2, "run-other sends nothing")
  assertRecordsClean(api)
})

test('terminating a worker while its tool is running does not crash the process; the main thread goes on', async (t) => {
  const api = await startApi(t, { handler: model() })
  for (let round = 0; round < 3; round++) {
    const w = startWorker(t, `tool${round}`, api)
    await w.next('ready')
    w.send({ cmd: 'hang-tool' })
    await w.next('tool-started')
    const before = api.requests.length
    assert.equal(await w.worker.terminate(), 1)
    assert.equal(await w.exited, 1)
    await sleep(100)
    // The dead worker's run sends nothing more.
    assert.equal(api.requests.length, before, JSON.stringify(api.requests.slice(before - 1).map((q) => [q.receivedAt, q.body.messages.at(-1).content])))
    w.check()
    await assertMainWorks(api, 10, `main${round}`)
  }
  // A new worker loads and works after the others were killed.
  const fresh = startWorker(t, 'fresh', api)
  await fresh.next('ready')
  fresh.send({ cmd: 'run', n: 20, concurrency: 5 })
  const done = await fresh.next('done')
  assert.equal(done.correct, 20, done.wrong.join('; '))
  fresh.check()
  assertRecordsClean(api)
})

test('terminating a worker while its request is in flight does not crash the process; the late answer goes nowhere', async (t) => {
  let arrived
  const api = await startApi(t, { handler: model({ request: (prompt) => prompt === 'hang-request' && arrived?.() }) })
  for (let round = 0; round < 3; round++) {
    const w = startWorker(t, `req${round}`, api)
    await w.next('ready')
    const inFlight = new Promise((resolve) => (arrived = resolve))
    w.send({ cmd: 'hang-request' })
    await inFlight // the stand-in holds the answer back for 400 ms
    assert.equal(await w.worker.terminate(), 1)
    const before = api.requests.length
    await sleep(600) // the answer (a tool call) arrives after the worker is gone
    assert.equal(api.requests.length, before, 'the dead worker\'s run sends nothing more')
    w.check()
    await assertMainWorks(api, 10, `main${round}`)
  }
  assertRecordsClean(api)
})

test('workers terminated at random points of busy runs: no crash, and the main thread and a new worker work after', async (t) => {
  const api = await startApi(t, { handler: model() })
  const workers = Array.from({ length: 6 }, (_, i) => startWorker(t, `busy${i}`, api))
  await Promise.all(workers.map((w) => w.next('ready')))
  workers.forEach((w) => w.send({ cmd: 'run', n: 200, concurrency: 16, delayMs: 20 }))
  const mainRuns = assertMainWorks(api, 100)
  await Promise.all(
    workers.map(async (w, i) => {
      await sleep(30 + i * 40)
      await w.worker.terminate()
    }),
  )
  await mainRuns
  await sleep(200)
  workers.forEach((w) => w.check())
  await assertMainWorks(api, 20, 'after')
  const fresh = startWorker(t, 'after', api)
  await fresh.next('ready')
  fresh.send({ cmd: 'run', n: 20, concurrency: 5 })
  const done = await fresh.next('done')
  assert.equal(done.correct, 20, done.wrong.join('; '))
  assertRecordsClean(api)
})
