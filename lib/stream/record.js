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
 * The recorder of a run taken over. When this process takes the run, the engine tells it first
 * (a `taken` part, not a StreamPart) with the generation the take gave it, which every slice
 * carries: should the run be taken over again while this process still runs it, its slices are
 * dropped. Its first part comes once this process holds the run: the stream is read then
 * (nothing of an earlier holder's is written after that) and must still be of this generation —
 * a third process that took the run over before that read has it, and nothing is written here.
 * The parts wait for that read, and the end for them. A take-over that ran nothing after the
 * take (its options do not hold here) writes the end of the result it ended the run with.
 *
 * Without a take (the run had ended, `thread_busy`, `store_unavailable`, options refused before
 * the take) the end is written only when the run's log says it is over, with its stored result,
 * and only once neither the run nor its stream changed for a while: a holder that has just ended
 * the run writes its own end right after (its last slices, then the end), with the same
 * generation. Otherwise the run is left to its holder or a later take-over: the stream stays open.
 */
function recording(native, chunker, runId) {
  let taken = null
  let generation = 0
  let waiting = []
  let read = null
  let over = false
  const write = (parts) => {
    const out = []
    for (const part of parts) chunker.write(part, out)
    if (out.length > 0) native.recordStream(runId, generation, sse(out), false)
  }
  // The stream as this holder finds it: `null` when it cannot go on (over, unreadable, or taken
  // over again since this process took it).
  const hold = async () => {
    try {
      const found = await native.streamState(runId)
      if (found == null || found.sent == null) return null
      if (taken !== null && found.generation !== taken) return null
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
      const rest = []
      for (const part of parts) {
        if (part.type === 'taken') taken = part.generation
        else rest.push(part)
      }
      if (rest.length === 0) return
      if (waiting === null) {
        if (!over) write(rest)
        return
      }
      waiting.push(rest)
      read ??= settle()
    },
    async end(result) {
      if (taken === null) {
        const found = await hold()
        if (found === null || found.result == null || !found.idle) return
        result = JSON.parse(found.result)
      } else {
        await (read ??= settle())
        if (over) return
      }
      const out = []
      chunker.write({ type: 'finish', result }, out)
      native.recordStream(runId, generation, `${sse(out)}data: [DONE]\n\n`, true)
    },
  }
}

module.exports = { recorderFor }
