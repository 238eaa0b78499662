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
 */
function recorderFor(store) {
  const native = Store.nativeOf(store)
  if (native === undefined) return null
  // What a plain `toUIMessageStreamResponse()` sends: every follower sees the same stream.
  const chunker = new UIChunker({ onError: undefined, messageId: undefined, sendReasoning: true })
  let runId = null
  let held = ''
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

module.exports = { recorderFor }
