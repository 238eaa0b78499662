'use strict'
// Durable runs: a run with a store outlives its process. `resumeRun` takes a run over from its
// log (in any process that registered the same tools), `recoverRuns` takes over every run whose
// lease ran out, `stopRun` stops a run wherever it runs. The engine does the work (src/engine/
// store/run_log.rs); this layer checks arguments.

const { describe } = require('./describe.js')
const { startRun } = require('./run.js')
const { Store, ownerOf } = require('./store.js')

// What resumeRun is given again: the store, the secrets a log never keeps, and what JS keeps.
// `baseURL`, `mcpServers` and `provider` too: a log leaves out a baseURL with a password or a
// query, every MCP server's authorizationToken, and the provider's AWS credentials.
const GIVEN_AGAIN = new Set(['store', 'apiKey', 'authToken', 'approvalSecret', 'headers', 'baseURL', 'mcpServers', 'provider'])
let recording
const JS_ONLY = new Set(require('../binding.js').jsOnlyOptions().map((o) => o.name))

const refused = (message) => ({ data: null, error: { code: 'invalid_request', message } })

function checkRunId(runId, where) {
  if (typeof runId !== 'string' || runId.length < 1 || runId.length > 200) {
    return `${where}: runId must be a run's id (data.runId), a string of 1 to 200 characters, got ${describe(runId, { quote: true })}`
  }
  return null
}

function storeOf(options, where) {
  if (options === null || typeof options !== 'object' || !(options.store instanceof Store)) {
    return [null, `${where}: options.store must be the store the run was started with (createStore()), got ${describe(options && options.store, { quote: true })}`]
  }
  return [options.store, null]
}

/**
 * Takes run `runId` over and goes on from its last committed step; resolves like
 * `runWithTools` (never rejects). `options`: `store`, the secrets (`apiKey`, `authToken`,
 * `approvalSecret`, `headers`) and the JS options (`signal`, `context`, hooks); everything else
 * is the run's own, read from its log.
 */
async function resumeRun(runId, options, recovering = false) {
  const bad = checkRunId(runId, 'resumeRun')
  if (bad) return refused(`${bad}. Nothing was run.`)
  const [, noStore] = storeOf(options, 'resumeRun')
  if (noStore) return refused(`${noStore}. Nothing was run.`)
  for (const key of Object.keys(options)) {
    if (!GIVEN_AGAIN.has(key) && !JS_ONLY.has(key)) {
      return refused(`resumeRun: option ${key} is the run's own (its log keeps it); give only store, apiKey, authToken, approvalSecret, headers, baseURL, mcpServers, provider and the JS options (signal, context, hooks). Nothing was run.`)
    }
  }
  // A run that was streamed goes on recording into its stream (resumeStream's followers see it
  // to its end); one that was not stays unrecorded.
  let streamed
  try {
    streamed = await Store.nativeOf(options.store).streamOpen(runId)
  } catch (e) {
    const what = e && typeof e.message === 'string' ? e.message : String(e)
    return { data: null, error: { code: 'store_unavailable', runId, message: `The store failed: ${what}. Check that the database is up and reachable, then resume the run again. Nothing was run.` } }
  }
  if (!streamed) return startRun([], options, null, { runId, recovering })
  const recorder = (recording ??= require('./stream/record.js')).recorderFor(options.store, { runId })
  const result = await startRun([], options, { push: (parts) => recorder.feed(parts), control: null }, { runId, recovering })
  try {
    await recorder.end(result)
  } catch {
    // The stream's end could not be handed over: its followers end on their own once the run
    // is over (src/engine/store/stream_log.rs); the run's result stands.
  }
  return result
}

/**
 * Takes over the runs whose lease ran out (their process stopped), at most `limit` (default
 * 10), and resumes each here; resolves with `[{ runId, result }]` for the runs this process
 * took (another process calling it at the same time takes the others).
 */
async function recoverRuns(options) {
  const [store, noStore] = storeOf(options, 'recoverRuns')
  if (noStore) throw new TypeError(noStore)
  const { limit = 10, ...rest } = options
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new TypeError(`recoverRuns: limit must be an integer from 1 to 1000, got ${describe(limit, { quote: true })}`)
  }
  const ids = await store.expiredRuns(limit)
  const done = await Promise.all(ids.map(async (runId) => ({ runId, result: await resumeRun(runId, rest, true) })))
  // A run another process took first (it may have ended since) is not this one's to report.
  return done.filter(({ result }) => !(result.error && result.error.code === 'thread_busy'))
}

/**
 * Stops run `runId` wherever it runs (within a second; at once if nobody holds it); whether it was
 * going on. With an `owner` key (a run id from a browser is outside input), a run whose thread
 * has another owner is not found: `false`, nothing stopped; `undefined` or `null` there is the
 * ownerless owner, as for threads. Without the key, any owner's run (trusted server code).
 */
async function stopRun(runId, options) {
  const bad = checkRunId(runId, 'stopRun')
  if (bad) throw new TypeError(bad)
  const [store, noStore] = storeOf(options, 'stopRun')
  if (noStore) throw new TypeError(noStore)
  // An `owner` key given without a value (`owner: session?.userId` with no session) is the
  // ownerless owner, as for threads: only without the key is any owner's run stopped.
  const owner = Object.hasOwn(options, 'owner') ? ownerOf(options, 'stopRun') : null
  return store.stopRun(runId, owner)
}

module.exports = { resumeRun, recoverRuns, stopRun }
