'use strict'
// A streamed run's UI message stream, recorded in its store (CONTRACT §13, resumable streams):
// each batch of parts becomes the SSE text a UI message stream Response sends for it, handed to
// the engine, whose writer for the run stores it off the JS thread (src/engine/store/
// stream_log.rs). One hand-over per batch of parts, never one per token. `resumeStream`
// (resume.js) replays and follows it.

const { UIChunker } = require('./ui-chunker.js')
const { Store } = require('../store.js')

const sse = (chunks) => {
  let text = ''
  for (const chunk of chunks) text += `data: ${JSON.stringify(chunk)}\n\n`
  return text
}

/**
 * The recorder of a run with `store`: `feed(parts)` with each batch, `end(result)` once (a
 * promise: the end is handed over when it settles). Its id comes with the run's first part; a
 * run refused before it began records nothing. The process that starts a run is its stream's
 * first holder (generation 0).
 *
 * `takenOver`: `{ runId }` for a streamed run that `resumeRun` or `recoverRuns` takes over: the
 * recording goes on in the same stream (see `recording`).
 */
function recorderFor(store, takenOver) {
  const native = Store.nativeOf(store)
  if (native === undefined) return null
  // What a plain `toUIMessageStreamResponse()` sends: every follower sees the same stream.
  const chunker = new UIChunker({ onError: undefined, messageId: undefined, sendReasoning: true })
  if (takenOver !== undefined) return recording(native, chunker, takenOver.runId)
  let runId = null
  let held = ''
  const hand = (text, done) => {
    if (runId === null) {
      held += text
      return
    }
    if (text === '' && !done) return
    native.recordStream(runId, 0, held + text, done)
    held = ''
  }
  return {
    feed(parts) {
      const out = []
      for (const part of parts) {
        if (runId === null && part.type === 'start-step' && typeof part.runId === 'string') runId = part.runId
        chunker.write(part, out)
      }
      hand(sse(out), false)
    },
    async end(result) {
      if (runId === null) return
      const out = []
      chunker.write({ type: 'finish', result }, out)
      hand(`${sse(out)}data: [DONE]\n\n`, true)
    },
  }
}

/**
 * The recorder of a run taken over. Its first part comes once this process holds the run: the
 * stream is read then (nothing of an earlier holder's is written after that), with the run's
 * generation, which every slice carries — should the run be taken over again while this process
 * still runs it, its slices are dropped. The parts wait for that read, and the end for them.
 *
 * When the take-over ran nothing, the end is written only when the run's log says it is over,
 * with its stored result (it had finished, was stopped, or its options do not hold here). Any
 * other failure before a part (`thread_busy`, `store_unavailable`, options refused before the
 * take) leaves the run to a later take-over, which records on: the stream stays open for it.
 */
function recording(native, chunker, runId) {
  let generation = 0
  let waiting = []
  let read = null
  let fed = false
  let over = false
  const write = (parts) => {
    const out = []
    for (const part of parts) chunker.write(part, out)
    if (out.length > 0) native.recordStream(runId, generation, sse(out), false)
  }
  // The stream as this holder finds it: `null` when it cannot go on (over, or unreadable).
  const hold = async () => {
    try {
      const found = await native.streamState(runId)
      if (found == null || found.sent == null) return null
      generation = found.generation
      chunker.continueAfter(found.sent)
      return found
    } catch {
      return null
    }
  }
  const settle = async () => {
    over = (await hold()) === null
    const parts = waiting
    waiting = null
    if (!over) for (const batch of parts) write(batch)
  }
  return {
    feed(parts) {
      fed = true
      if (waiting === null) {
        if (!over) write(parts)
        return
      }
      waiting.push(parts)
      read ??= settle()
    },
    async end(result) {
      if (read !== null) await read
      if (over) return
      if (!fed) {
        const found = await hold()
        if (found === null || found.result == null) return
        result = JSON.parse(found.result)
      }
      const out = []
      chunker.write({ type: 'finish', result }, out)
      native.recordStream(runId, generation, `${sse(out)}data: [DONE]\n\n`, true)
    },
  }
}

module.exports = { recorderFor }
