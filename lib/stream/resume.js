'use strict'
// resumeStream (CONTRACT §13, resumable streams): a run's recorded UI message stream (record.js)
// as a Response — what was sent so far, then the rest as it comes, to the end. Any instance
// sharing the store can serve it; the engine wakes a waiting follower at once when the run is in
// this process, by PostgreSQL's NOTIFY from another, or by a short poll of a SQLite file.
// Closing the Response only stops following: the run goes on (stopRun stops it).

const { describe } = require('../describe.js')
const { Store, checkId, ownerOf, unavailable } = require('../store.js')
const { UI_MESSAGE_STREAM_HEADERS } = require('./ui-chunker.js')

/** How long one call into the engine waits for more before JS asks again. */
const WAIT_MS = 15_000
/** How long a run that has not written its stream's first slice yet is waited for: a thread's
 * run in progress, or a run id (given as soon as the run's first chunk was sent). */
const FIRST_SLICE_MS = 2_000
const FIRST_SLICE_BY_ID_MS = 300

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function target(what, options) {
  if (typeof what === 'string') {
    if (what.length < 1 || what.length > 200) throw new TypeError(`resumeStream: a run id must be a string of 1 to 200 characters, got ${describe(what, { quote: true })}`)
    return { runId: what, owner: ownerOf(options, 'resumeStream') }
  }
  if (what !== null && typeof what === 'object' && !Array.isArray(what)) {
    return { thread: checkId(what.thread, 'resumeStream'), owner: ownerOf(what, 'resumeStream') }
  }
  throw new TypeError(`resumeStream: the first argument must be a run id (data.runId) or { thread, owner? }, got ${describe(what, { quote: true })}`)
}

/**
 * A Response in the UI message stream protocol with run `runId`'s stream (or the run in progress
 * on `{ thread, owner }`'s thread): its chunks so far, then the live ones to its end. 204 with
 * no body when there is none the owner may see (nothing in progress, or a finished run's stream
 * dropped after `streamRetentionMs`). A store that fails rejects with `store_unavailable`.
 */
async function resumeStream(what, options) {
  if (options === null || typeof options !== 'object' || !(options.store instanceof Store)) {
    throw new TypeError(`resumeStream: options.store must be the store the run was started with (createStore()), got ${describe(options && options.store, { quote: true })}`)
  }
  const { runId: given, thread, owner } = target(what, options)
  const native = Store.nativeOf(options.store)
  const none = () => new Response(null, { status: 204 })
  let runId = given
  let first
  try {
    if (thread !== undefined) {
      runId = await native.runningRun(thread, owner)
      if (runId === null) return none()
    }
    first = await native.followStream(runId, owner, 0, 0)
    // A thread's run that has only just begun may not have written its first slice yet.
    const patience = thread === undefined ? FIRST_SLICE_BY_ID_MS : FIRST_SLICE_MS
    for (let waited = 0; first.state === 'missing' && waited < patience; waited += 50) {
      await sleep(50)
      if (thread !== undefined && (await native.runningRun(thread, owner)) !== runId) return none()
      first = await native.followStream(runId, owner, 0, 0)
    }
  } catch (e) {
    throw unavailable(e)
  }
  if (first.state === 'missing') return none()
  const encoder = new TextEncoder()
  let next = first
  let seq = first.seq
  let closed = false
  const body = new ReadableStream({
    // A pull must enqueue or close: it waits until there is text, or the stream is over.
    pull: async (controller) => {
      for (;;) {
        if (next === null) {
          try {
            next = await native.followStream(runId, owner, seq, WAIT_MS)
          } catch {
            // The store failed while following: the stream ends here (the run is not affected).
            next = { state: 'done', text: '', seq }
          }
          if (closed) return
        }
        const slice = next
        next = null
        seq = slice.seq
        if (slice.text !== '') controller.enqueue(encoder.encode(slice.text))
        if (slice.state !== 'live') {
          controller.close()
          return
        }
        if (slice.text !== '') return
      }
    },
    cancel: () => {
      closed = true
    },
  })
  return new Response(body, { status: 200, headers: { ...UI_MESSAGE_STREAM_HEADERS } })
}

module.exports = { resumeStream }
