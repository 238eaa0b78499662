'use strict'
// toUIMessages: a thread's stored messages as the UI messages that `useChat` takes as its initial
// messages — the other way from lib/ui-messages.js. A turn of the assistant (its replies and the
// results of its calls, until the user speaks again) is one UI message, a `step-start` between
// its replies; each call is a `tool-<name>` part in the state its result left it. A call the
// person declined is `output-denied`, as the stream left it.

const { asText } = require('./ui-messages.js')

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** The text a tool result's content reads as on the page: a string, or its text blocks joined. */
function resultOutput(content) {
  if (Array.isArray(content) && content.every((b) => isObject(b) && b.type === 'text')) content = content.map((b) => b.text).join('')
  if (typeof content !== 'string') return content ?? ''
  // A tool's object or array reached the model as its JSON: the page shows it as the value again.
  if (/^\s*[[{]/.test(content)) {
    try {
      return JSON.parse(content)
    } catch {}
  }
  return content
}

/**
 * The reason of a declined call (`""` for none) when `result` is the answer the package gives a
 * call the person declined ("The user declined this call[: reason]. Do not retry it."); else
 * undefined.
 */
function declinedReason(result) {
  if (result.is_error !== true) return undefined
  const output = resultOutput(result.content)
  if (typeof output !== 'string') return undefined
  const m = /^The user declined this call(?:: ([\s\S]*))?\. Do not retry it\.$/.exec(output)
  return m ? (m[1] ?? '') : undefined
}

function userParts(content) {
  const parts = []
  for (const block of typeof content === 'string' ? [{ type: 'text', text: content }] : content) {
    if (!isObject(block)) continue
    if (block.type === 'text') parts.push({ type: 'text', text: block.text })
    else if (block.type === 'image' && isObject(block.source)) {
      const s = block.source
      if (s.type === 'base64') parts.push({ type: 'file', mediaType: s.media_type, url: `data:${s.media_type};base64,${s.data}` })
      else if (s.type === 'url') parts.push({ type: 'file', mediaType: 'image/*', url: s.url })
    }
  }
  return parts
}

/**
 * `messages` (a thread's, as stored) as UI messages; `pending` are its calls waiting for a person
 * (`pendingApprovals`), shown as `approval-requested`.
 */
function toUIMessages(messages, pending = []) {
  const waiting = new Map(pending.map((p) => [p.toolUseId, p]))
  const out = []
  let turn = null
  const tools = new Map()
  messages.forEach((message, i) => {
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content
    if (!Array.isArray(content)) return
    if (message.role === 'user') {
      const results = content.filter((b) => isObject(b) && b.type === 'tool_result')
      for (const r of results) {
        const part = tools.get(r.tool_use_id)
        if (!part) continue
        const denied = declinedReason(r)
        // The approval id was used up by the answer; the part's `approval.id` is the call's id.
        if (denied !== undefined) Object.assign(part, { state: 'output-denied', approval: { id: r.tool_use_id, approved: false, ...(denied ? { reason: denied } : {}) } })
        else if (r.is_error === true) Object.assign(part, { state: 'output-error', errorText: asText(resultOutput(r.content)) })
        else Object.assign(part, { state: 'output-available', output: resultOutput(r.content) })
      }
      const parts = userParts(content.filter((b) => !(isObject(b) && b.type === 'tool_result')))
      if (parts.length === 0) return
      turn = null
      out.push({ id: `m${i}`, role: 'user', parts })
      return
    }
    if (message.role !== 'assistant') return
    if (turn === null) {
      turn = { id: `m${i}`, role: 'assistant', parts: [] }
      out.push(turn)
    }
    turn.parts.push({ type: 'step-start' })
    for (const block of content) {
      if (!isObject(block)) continue
      if (block.type === 'text' && block.text !== '') turn.parts.push({ type: 'text', text: block.text, state: 'done' })
      else if (block.type === 'thinking' && block.thinking) turn.parts.push({ type: 'reasoning', text: block.thinking, state: 'done' })
      else if (block.type === 'tool_use') {
        const asked = waiting.get(block.id)
        const part = asked
          ? { type: `tool-${block.name}`, toolCallId: block.id, state: 'approval-requested', input: block.input, approval: { id: asked.approvalId } }
          : { type: `tool-${block.name}`, toolCallId: block.id, state: 'input-available', input: block.input }
        tools.set(block.id, part)
        turn.parts.push(part)
      }
    }
  })
  return out
}

module.exports = { toUIMessages }
