// The test kit's replies (replies.js) as the stand-in's steps, made when a request comes: a
// tool_use gets a fresh id each time it is sent, and a cut reply is cut the way the request reads
// it (a stream before its end, a JSON body half sent).

import { randomBytes } from 'node:crypto'
import { sseEvents } from '../../stand-in/sse.mjs'

const toolUseId = () => `toolu_test_${randomBytes(12).toString('hex')}`

/** The content as sent: every tool_use with an id. */
const withIds = (content) => content.map((b) => (b.type === 'tool_use' && typeof b.id !== 'string' ? { ...b, id: toolUseId() } : b))

/**
 * How many events of the streamed `step` go out before the cut: up to its first content delta, so
 * the client has begun to read the reply; without content, half of what comes before its end.
 */
function cutPoint(step) {
  const events = sseEvents({ content: step.content, stop_reason: step.stop_reason, usage: {} })
  const delta = events.findIndex(([name]) => name === 'content_block_delta')
  if (delta !== -1) return delta + 1
  return Math.max(1, Math.floor(events.findIndex(([name]) => name === 'message_delta') / 2))
}

/** The stand-in step that answers `body` with the kit's `reply`. */
export function stepFor(reply, body) {
  switch (reply.kind) {
    case 'message':
      return { content: withIds(reply.content), stop_reason: reply.stopReason }
    case 'error':
      return { status: reply.status, headers: { ...reply.headers } }
    case 'slow':
      return { fault: 'delay', ms: reply.ms, then: stepFor(reply.reply, body) }
    case 'cut': {
      const inner = reply.reply
      if (inner.kind === 'slow') return stepFor({ ...inner, reply: { kind: 'cut', reply: inner.reply } }, body)
      const step = stepFor(inner, body)
      // A reply that is no message (an error, a fault) has nothing to cut: it is sent as it is.
      if (!Array.isArray(step.content)) return step
      return body?.stream === true ? { ...step, sseCutAfter: cutPoint(step) } : { fault: 'truncated' }
    }
    default:
      throw new TypeError(`anthropic-tool-calling/testing: unknown reply ${JSON.stringify(reply)}`)
  }
}
