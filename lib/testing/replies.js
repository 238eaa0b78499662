'use strict'
// What the test kit's stand-in "says" to one request: a message built from content blocks, or a
// fault the real API can answer with. Plain data, built here and turned into the stand-in's own
// steps only when a request comes (steps.js), so one reply can be used for many requests.

const { describe } = require('../describe.js')

/** The replies these helpers built, so a reply is told from any other object. */
const built = new WeakSet()

function made(reply) {
  Object.freeze(reply)
  built.add(reply)
  return reply
}

const isReply = (value) => built.has(value)
const isBlock = (value) => value !== null && typeof value === 'object' && !Array.isArray(value) && typeof value.type === 'string'

function need(ok, helper, what, got) {
  if (!ok) throw new TypeError(`${helper}: ${what}, got ${describe(got)}`)
}

/** A text block. */
function text(s) {
  need(typeof s === 'string' && s.length > 0, 'text', 'expected a non-empty string (the API never sends an empty text block)', s)
  return { type: 'text', text: s }
}

/** A tool_use block; its id (`toolu_…`) is made when it is sent unless `id` is given. */
function toolUse(name, input = {}, id) {
  need(typeof name === 'string' && name.length > 0, 'toolUse', 'the tool name must be a non-empty string', name)
  need(input !== null && typeof input === 'object' && !Array.isArray(input), 'toolUse', `the input of ${name} must be an object`, input)
  need(id === undefined || (typeof id === 'string' && id.length > 0), 'toolUse', `the id of ${name} must be a non-empty string when given`, id)
  return id === undefined ? { type: 'tool_use', name, input } : { type: 'tool_use', id, name, input }
}

/** A thinking block; the stand-in signs it when it is sent, so it comes back valid. */
function thinking(s) {
  need(typeof s === 'string', 'thinking', 'expected a string', s)
  return { type: 'thinking', thinking: s }
}

/** The content of a message reply: a string is one text block. */
function blocksOf(content, helper) {
  const list = typeof content === 'string' || isBlock(content) ? [content] : content
  need(Array.isArray(list), helper, 'expected a list of content blocks (text(), toolUse(), thinking() …)', content)
  return list.map((b, i) => {
    if (typeof b === 'string') return text(b)
    need(isBlock(b), helper, `block ${i} must be a content block ({ type, … }) or a string`, b)
    return b
  })
}

/**
 * A message reply: its content blocks, and its stop reason (default `tool_use` when it calls a
 * tool, else `end_turn`).
 */
function message(blocks, stopReason) {
  const content = blocksOf(blocks, 'message')
  need(stopReason === undefined || (typeof stopReason === 'string' && stopReason.length > 0), 'message', 'stopReason must be a string such as "end_turn", "max_tokens" or "refusal"', stopReason)
  const calls = content.some((b) => b.type === 'tool_use')
  return made({ kind: 'message', content, stopReason: stopReason ?? (calls ? 'tool_use' : 'end_turn') })
}

/** A turn the API paused (stop_reason `pause_turn`): the client sends it back to be continued. */
function pauseTurn(blocks = []) {
  return message(blocks, 'pause_turn')
}

/** HTTP 429 rate_limit_error with `retry-after: <seconds>`. */
function rateLimited(retryAfterSeconds) {
  need(Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0, 'rateLimited', 'retryAfterSeconds must be a number of seconds, 0 or more', retryAfterSeconds)
  return made({ kind: 'error', status: 429, headers: { 'retry-after': String(retryAfterSeconds) } })
}

/** HTTP 529 overloaded_error. */
function overloaded() {
  return made({ kind: 'error', status: 529 })
}

/** HTTP 500 api_error. */
function serverError() {
  return made({ kind: 'error', status: 500 })
}

/** A reply whose connection is cut mid-way: a stream before its end, a JSON body half sent. */
function cutStream(reply) {
  return made({ kind: 'cut', reply: asReply(reply, 'cutStream') })
}

/** `reply`, sent after `ms` milliseconds of silence. */
function slow(ms, reply) {
  need(Number.isFinite(ms) && ms >= 0, 'slow', 'ms must be a number of milliseconds, 0 or more', ms)
  return made({ kind: 'slow', ms, reply: asReply(reply, 'slow') })
}

/**
 * `value` as a reply: one these helpers built, or content for a message (a string, a block, a
 * list of blocks). A TypeError naming `where` for anything else.
 */
function asReply(value, where) {
  if (isReply(value)) return value
  if (typeof value === 'string' || isBlock(value) || Array.isArray(value)) return message(value)
  throw new TypeError(`${where}: a reply is built with message(), text(), toolUse(), thinking(), pauseTurn(), rateLimited(), overloaded(), serverError(), cutStream() or slow() (or is a string, a content block or a list of them), got ${describe(value)}`)
}

module.exports = { text, toolUse, thinking, message, pauseTurn, rateLimited, overloaded, serverError, cutStream, slow, asReply }
