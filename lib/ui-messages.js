'use strict'
// fromUIMessages: the `messages` that the AI SDK's `useChat` posts, turned back into Messages API
// params — tool calls with their results as tool_use / tool_result turns, and the user's answers
// to approval requests as `.approvals`, for the run that resumes. A declined call's result is
// worded by the engine (the addon), like every failure the model reads.

const binding = require('../binding.js')
const { describe } = require('./describe.js')
const { RESULT_BLOCK_TYPES } = require('./tool-result.js')

const TOOL_ID = /^[a-zA-Z0-9_-]+$/
const TOOL_STATES = new Set([
  'input-streaming',
  'input-available',
  'approval-requested',
  'approval-responded',
  'output-available',
  'output-error',
  'output-denied',
])
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * The `messages` that `useChat` posts, as Messages API params to pass as the `prompt` of
 * `runWithTools` / `streamWithTools`. The returned array also carries two non-enumerable
 * properties: `system` (the text of the system messages, joined by a blank line, or undefined)
 * and `approvals` (the user's answers to approval requests, for the `approvals` option).
 * Throws a TypeError naming the message and part for input that is not UI messages.
 */
function fromUIMessages(uiMessages) {
  if (!Array.isArray(uiMessages)) {
    throw new TypeError(`fromUIMessages: expected an array of UI messages, got ${describe(uiMessages, { quote: true })}`)
  }
  const out = new History()
  const system = []
  const approvals = []
  const lastIndex = uiMessages.length - 1
  uiMessages.forEach((message, i) => {
    const where = `messages[${i}]${message && typeof message.id === 'string' ? ` (id ${JSON.stringify(message.id)})` : ''}`
    if (!isObject(message)) throw new TypeError(`fromUIMessages: ${where} must be an object, got ${describe(message, { quote: true })}`)
    if (!Array.isArray(message.parts)) throw new TypeError(`fromUIMessages: ${where} has no parts array`)
    message.parts.forEach((part, j) => {
      if (!isObject(part) || typeof part.type !== 'string') {
        throw new TypeError(`fromUIMessages: ${where}.parts[${j}] must be an object with a type, got ${describe(part, { quote: true })}`)
      }
    })
    switch (message.role) {
      case 'system': {
        let text = ''
        message.parts.forEach((p, j) => {
          if (p.type === 'text') text += checkedText(p, `${where}.parts[${j}]`)
        })
        if (text.trim() !== '') system.push(text)
        return
      }
      case 'user':
        out.add('user', userBlocks(message.parts, where))
        return
      case 'assistant':
        assistantTurns(message.parts, where, out, i === lastIndex ? approvals : null)
        return
      default:
        throw new TypeError(`fromUIMessages: ${where} has role ${JSON.stringify(message.role)}; expected "user", "assistant" or "system"`)
    }
  })
  const messages = out.finish()
  Object.defineProperty(messages, 'system', { value: system.length > 0 ? system.join('\n\n') : undefined })
  Object.defineProperty(messages, 'approvals', { value: approvals })
  return messages
}

/** The messages being built: same-role neighbours merge, so tool_results stay first in their message. */
class History {
  messages = []
  ids = new Set()

  add(role, blocks) {
    if (blocks.length === 0) return
    const last = this.messages[this.messages.length - 1]
    if (last && last.role === role) last.content.push(...blocks)
    else this.messages.push({ role, content: blocks })
  }

  finish() {
    const messages = this.messages
    // The API wants the conversation to open with the user: a greeting from the assistant (and
    // any results of its calls) is left out.
    while (messages.length > 0 && messages[0].role === 'assistant') {
      messages.shift()
      const next = messages[0]
      if (next) {
        next.content = next.content.filter((b) => b.type !== 'tool_result')
        if (next.content.length === 0) messages.shift()
      }
    }
    // The API refuses a final assistant message whose content ends with whitespace (a prefill).
    const last = messages[messages.length - 1]
    const block = last && last.role === 'assistant' ? last.content[last.content.length - 1] : undefined
    if (block && block.type === 'text') block.text = block.text.trimEnd()
    return messages
  }
}

function userBlocks(parts, where) {
  const blocks = []
  parts.forEach((part, j) => {
    const at = `${where}.parts[${j}]`
    switch (part.type) {
      case 'text': {
        const text = checkedText(part, at)
        if (text.trim() !== '') blocks.push({ type: 'text', text })
        return
      }
      case 'file':
        blocks.push(fileBlock(part, at))
        return
      default:
        if (!isDisplayOnly(part.type)) {
          throw new TypeError(`fromUIMessages: ${at} has type ${JSON.stringify(part.type)}, which a user message cannot hold`)
        }
    }
  })
  return blocks
}

/** Parts that are for the page only and are never sent to the model. */
function isDisplayOnly(type) {
  return type === 'source-url' || type === 'source-document' || type === 'custom' || type.startsWith('data-')
}

/**
 * An assistant UI message is one or more turns: each step (split at `step-start`, and wherever
 * text follows a tool call) becomes an assistant message with its text and `tool_use` blocks,
 * then a user message with their `tool_result`s. `approvals` is non-null for the last message.
 */
function assistantTurns(parts, where, out, approvals) {
  const steps = [[]]
  parts.forEach((part, j) => {
    if (part.type === 'step-start') steps.push([])
    else steps[steps.length - 1].push([part, j])
  })
  const lastStep = steps.length - 1
  steps.forEach((step, s) => {
    let uses = []
    let results = []
    let texts = []
    const flush = () => {
      out.add('assistant', [...texts, ...uses])
      out.add('user', results)
      uses = []
      results = []
      texts = []
    }
    for (const [part, j] of step) {
      const at = `${where}.parts[${j}]`
      const type = part.type
      if (type === 'text') {
        const text = checkedText(part, at)
        if (text.trim() === '') continue
        if (uses.length > 0) flush()
        texts.push({ type: 'text', text })
      } else if (type === 'dynamic-tool' || type.startsWith('tool-')) {
        const pair = toolBlocks(part, at, out.ids, s === lastStep ? approvals : null)
        if (pair === null) continue
        uses.push(pair.use)
        if (pair.result) results.push(pair.result)
      } else if (type === 'steering-message') {
        // A user message added to the run between two steps.
        flush()
        if (!Array.isArray(part.parts)) throw new TypeError(`fromUIMessages: ${at} (steering-message) has no parts array`)
        out.add('user', userBlocks(part.parts, `${at}.parts`))
      } else if (type === 'reasoning' || type === 'reasoning-file' || type === 'file' || isDisplayOnly(type)) {
        // Reasoning cannot be sent back without the signature the API gave it, and the UI does not
        // keep it; the API does not take files from the assistant. Both are display-only here.
        continue
      } else {
        throw new TypeError(`fromUIMessages: ${at} has unknown type ${JSON.stringify(type)}`)
      }
    }
    flush()
  })
}

/**
 * A tool part as `{ use, result }`, or null when it has no place in the history. A call without a
 * result (input still streaming, not run, never answered) is left out: the API refuses a
 * `tool_use` without its `tool_result`, and its model never saw a result for it.
 */
function toolBlocks(part, at, ids, approvals) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length)
  if (typeof name !== 'string' || name === '') throw new TypeError(`fromUIMessages: ${at} has no tool name`)
  if (!TOOL_STATES.has(part.state)) {
    throw new TypeError(`fromUIMessages: ${at} (${part.type}) has unknown state ${JSON.stringify(part.state)}`)
  }
  if (typeof part.toolCallId !== 'string' || !TOOL_ID.test(part.toolCallId)) {
    throw new TypeError(`fromUIMessages: ${at} (${part.type}) has toolCallId ${JSON.stringify(part.toolCallId)}; it must match ^[a-zA-Z0-9_-]+$`)
  }
  // Server tools ran at Anthropic; their blocks are not kept in the UI message, so they cannot be sent back.
  if (part.providerExecuted === true) return null
  const state = part.state
  if (state === 'input-streaming' || state === 'input-available' || state === 'approval-requested') return null
  if (state === 'output-available' && part.preliminary === true) return null
  const approval = part.approval
  if (state === 'approval-responded') {
    if (!isObject(approval) || typeof approval.id !== 'string' || typeof approval.approved !== 'boolean') {
      throw new TypeError(`fromUIMessages: ${at} (${part.type}) is approval-responded without approval { id, approved }`)
    }
    // Only an answer in the last step of the last message is still waiting for the run to resume;
    // an older one was never resumed: a denial is still an answer, an approval a call that never ran.
    if (approvals === null && approval.approved) return null
  }
  if (!isObject(part.input)) {
    throw new TypeError(`fromUIMessages: ${at} (${part.type}) has input ${describe(part.input, { quote: true })}; a tool input must be an object`)
  }
  if (ids.has(part.toolCallId)) throw new TypeError(`fromUIMessages: ${at} repeats toolCallId ${JSON.stringify(part.toolCallId)}`)
  ids.add(part.toolCallId)
  const use = { type: 'tool_use', id: part.toolCallId, name, input: part.input }
  const id = part.toolCallId
  switch (state) {
    case 'output-available':
      return { use, result: { type: 'tool_result', tool_use_id: id, content: resultContent(part.output) } }
    case 'output-error':
      if (typeof part.errorText !== 'string') throw new TypeError(`fromUIMessages: ${at} (${part.type}) is output-error without errorText`)
      return { use, result: { type: 'tool_result', tool_use_id: id, content: part.errorText, is_error: true } }
    case 'output-denied':
      return { use, result: declined(id, approval) }
    default: // approval-responded
      if (approvals !== null) {
        approvals.push(approval.reason === undefined ? { approvalId: approval.id, approved: approval.approved } : { approvalId: approval.id, approved: approval.approved, reason: approval.reason })
        // The run resumes with this decision and adds the result itself.
        return { use, result: null }
      }
      return { use, result: declined(id, approval) }
  }
}

/** The result the run gives a call the person declined: an error the model is told not to retry. */
function declined(id, approval) {
  const reason = isObject(approval) && typeof approval.reason === 'string' ? approval.reason : undefined
  // The engine's words (run/feedback.rs), as a run writes them for the same decision.
  const content = binding.declinedForModel(reason)
  return { type: 'tool_result', tool_use_id: id, content, is_error: true }
}

/**
 * A tool output as the model got it: a string as it is, `toolResult(blocks)` as those blocks
 * (without the citations of their text, below), anything else as JSON.
 */
function resultContent(output) {
  if (typeof output === 'string') return output
  if (Array.isArray(output) && output.length > 0 && output.every((b) => isObject(b) && RESULT_BLOCK_TYPES.has(b.type))) return output.map(uncited)
  return asText(output)
}

/**
 * A result block with the `citations` of its text blocks left out (in it, in a search_result's
 * content, in a document's own content): a tool result goes in a user message, and API version
 * 2026-10-21 refuses a cited text there, so a history kept from a run under 2023-06-01 would fail
 * every request after it. The text stays; `citations: { enabled }` of a document is no citation.
 */
function uncited(block) {
  if (block.type === 'text') {
    if (!Array.isArray(block.citations) || block.citations.length === 0) return block
    const { citations, ...rest } = block
    return rest
  }
  const inner = (items) => (Array.isArray(items) ? items.map((b) => (isObject(b) ? uncited(b) : b)) : items)
  if (block.type === 'search_result') return { ...block, content: inner(block.content) }
  if (block.type === 'document' && isObject(block.source) && Array.isArray(block.source.content)) {
    return { ...block, source: { ...block.source, content: inner(block.source.content) } }
  }
  return block
}

function fileBlock(part, at) {
  const { mediaType, url } = part
  if (typeof mediaType !== 'string' || typeof url !== 'string') {
    throw new TypeError(`fromUIMessages: ${at} (file) needs a string mediaType and url`)
  }
  const data = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url)
  const remote = /^https?:\/\//i.test(url)
  if (!data && !remote) throw new TypeError(`fromUIMessages: ${at} (file) has a url that is neither data: nor http(s): ${url.slice(0, 40)}`)
  const decoded = () => {
    try {
      return data[2] ? Buffer.from(data[3], 'base64') : Buffer.from(decodeURIComponent(data[3]))
    } catch {
      throw new TypeError(`fromUIMessages: ${at} (file) has a data: URL that cannot be decoded`)
    }
  }
  const source = (base64Type) => (data ? { type: 'base64', media_type: base64Type, data: data[2] ? data[3] : decoded().toString('base64') } : { type: 'url', url })
  if (IMAGE_TYPES.has(mediaType)) return { type: 'image', source: source(mediaType) }
  const title = typeof part.filename === 'string' && part.filename !== '' ? { title: part.filename } : {}
  if (mediaType === 'application/pdf') return { type: 'document', source: source(mediaType), ...title }
  if (mediaType.startsWith('text/plain') && data) {
    const text = decoded().toString('utf8')
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, ...title }
  }
  throw new TypeError(`fromUIMessages: ${at} (file) has mediaType ${JSON.stringify(mediaType)}; supported: image/jpeg, image/png, image/gif, image/webp, application/pdf, text/plain (data: URL)`)
}

function checkedText(part, at) {
  if (typeof part.text !== 'string') throw new TypeError(`fromUIMessages: ${at} (${part.type}) has no text string`)
  return part.text
}

/** A tool output as the text the model read: a string as it is, anything else as its JSON. */
function asText(output) {
  if (typeof output === 'string') return output
  try {
    const json = JSON.stringify(output === undefined ? null : output)
    return json === undefined ? 'null' : json
  } catch {
    return String(output)
  }
}

module.exports = { fromUIMessages, asText }
