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
 * The recorder of a run with `store`: `feed(parts)` with each batch, `end(result)` once. Its
 * id comes with the run's first part; a run refused before it began records nothing.
 *
 * `takenOver`: `{ runId, sent }` for a streamed run that `resumeRun` or `recoverRuns` takes over,
 * `sent` being what its stream holds so far: the recording goes on after it, in the same stream,
 * from the first part of the take-over (one that fails with `thread_busy` records nothing).
 */
function recorderFor(store, takenOver) {
  const native = Store.nativeOf(store)
  if (native === undefined) return null
  // What a plain `toUIMessageStreamResponse()` sends: every follower sees the same stream.
  const chunker = new UIChunker({ onError: undefined, messageId: undefined, sendReasoning: true })
  let runId = null
  let held = ''
  if (takenOver !== undefined) {
    chunker.continueAfter(takenOver.sent)
    return recording(native, chunker, takenOver.runId)
  }
  const hand = (text, done) => {
    if (runId === null) {
      held += text
      return
    }
    if (text === '' && !done) return
    native.recordStream(runId, held + text, done)
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
    end(result) {
      if (runId === null) return
      const out = []
      chunker.write({ type: 'finish', result }, out)
      hand(`${sse(out)}data: [DONE]\n\n`, true)
    },
  }
}

/**
 * The recorder of a run taken over: it knows its id, and writes from the first part on. When the
 * take-over ran nothing, its end is written only when that end is known to be the run's: the
 * run's stored result (it had finished), or `aborted` (stopped while its process was gone). Any
 * other failure before a part (`thread_busy`, `store_unavailable`, options refused here, an
 * internal failure) may leave the run to a later take-over, which records on; the stream is left
 * open for it (followers of a run that did end stop on their own, src/engine/store/stream_log.rs).
 */
function recording(native, chunker, runId) {
  let fed = false
  return {
    feed(parts) {
      fed = true
      const out = []
      for (const part of parts) chunker.write(part, out)
      if (out.length > 0) native.recordStream(runId, sse(out), false)
    },
    end(result) {
      if (!fed && result && result.error && result.error.code !== 'aborted') return
      const out = []
      chunker.write({ type: 'finish', result }, out)
      native.recordStream(runId, `${sse(out)}data: [DONE]\n\n`, true)
    },
  }
}

module.exports = { recorderFor }
