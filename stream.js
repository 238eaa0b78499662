'use strict'
// Streaming on the JS side (contract §8), with no dependencies at run time:
//   1. ToolStream: the single-consumer buffer of StreamParts that `streamWithTools` returns.
//   2. Its two Responses: the AI SDK UI message stream (SSE, for `useChat`) and plain text.
//   3. fromUIMessages: what `useChat` posts, turned back into Messages API params.
// The producer (the binding) pushes parts in batches and ends the stream with the RunResult.

// --- 1. The part buffer ----------------------------------------------------------------------

const NOT_TAKEN = null

/**
 * The parts of one run, read once: by iterating, or by one `to…Response()`. Parts nobody reads
 * are buffered; the run goes on either way and `result` always resolves. Made by `createPartStream`.
 */
class ToolStream {
  #queue = []
  #head = 0
  #ended = false
  /** Set once the reader has gone (a `break`, a cancelled body): later parts are not kept. */
  #dropping = false
  /** Readers waiting for a part: each resolves with a part, or null at the end. */
  #waiters = []
  /** Who took the parts, for the single-consumer TypeError. */
  #takenBy = NOT_TAKEN
  #onCancel
  #resolveResult
  #result

  /**
   * `executor(push, end)` is called at once with the producer's two functions, as with `new Promise`.
   * `onCancel(reason)` is called when the body of a Response from this stream is cancelled
   * (the client went away), so the producer can abort the run.
   */
  constructor(executor, options) {
    const onCancel = options && options.onCancel
    if (onCancel !== undefined && typeof onCancel !== 'function') {
      throw new TypeError('ToolStream: onCancel must be a function')
    }
    this.#onCancel = onCancel
    this.#result = new Promise((resolve) => {
      this.#resolveResult = resolve
    })
    executor(
      (parts) => this.#push(parts),
      (result) => this.#end(result),
    )
  }

  /** The RunResult that `runWithTools` would have resolved with; never rejects. */
  get result() {
    return this.#result
  }

  #push(parts) {
    if (this.#ended) throw new TypeError('ToolStream: push() after end()')
    if (!Array.isArray(parts)) throw new TypeError('ToolStream: push() takes an array of parts')
    if (this.#dropping) return
    for (const part of parts) if (part !== null && typeof part === 'object') this.#offer(part)
  }

  #end(result) {
    if (this.#ended) throw new TypeError('ToolStream: end() called twice')
    if (!this.#dropping) this.#offer({ type: 'finish', result })
    this.#ended = true
    while (this.#waiters.length > 0) this.#waiters.shift()(null)
    this.#resolveResult(result)
  }

  #offer(part) {
    if (this.#waiters.length > 0) this.#waiters.shift()(part)
    else this.#queue.push(part)
  }

  /** The next part, or null once the stream is over (never rejects). */
  #next() {
    if (this.#head < this.#queue.length) {
      const part = this.#queue[this.#head]
      this.#queue[this.#head++] = undefined
      // Compact now and then, so a long unread run does not keep a sparse array alive.
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head)
        this.#head = 0
      }
      return Promise.resolve(part)
    }
    if (this.#ended || this.#dropping) return Promise.resolve(null)
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  /** The parts that are buffered now, without waiting. */
  #drain() {
    const parts = this.#queue.slice(this.#head)
    this.#queue = []
    this.#head = 0
    return parts
  }

  /** The reader has gone: forget what is buffered and keep nothing more. */
  #drop() {
    this.#dropping = true
    this.#queue = []
    this.#head = 0
    while (this.#waiters.length > 0) this.#waiters.shift()(null)
  }

  #take(by) {
    if (this.#takenBy !== NOT_TAKEN) {
      throw new TypeError(
        `ToolStream: the parts were already taken by ${this.#takenBy}; a stream has a single consumer ` +
          '(iterate it or return one of its Responses, once). `result` can be awaited any number of times.',
      )
    }
    this.#takenBy = by
  }

  /** Iterates the parts; the last one is `{ type: "finish", result }`. Never throws once started. */
  [Symbol.asyncIterator]() {
    this.#take('an earlier iteration')
    let done = false
    const iterator = {
      next: async () => {
        if (done) return { value: undefined, done: true }
        const part = await this.#next()
        if (part === null) {
          done = true
          return { value: undefined, done: true }
        }
        return { value: part, done: false }
      },
      // `break` in for-await: later parts are not kept, but the run goes on and `result` resolves.
      return: async (value) => {
        done = true
        this.#drop()
        return { value, done: true }
      },
      [Symbol.asyncIterator]() {
        return iterator
      },
    }
    return iterator
  }

  /**
   * A Response in the AI SDK UI message stream protocol (SSE), for `useChat`. `init` is a
   * ResponseInit (status, statusText, headers merged over the protocol's) plus `messageId`,
   * `sendReasoning` (default true) and `onError(error)` → the text of the `error` chunk.
   */
  toUIMessageStreamResponse(init) {
    const { onError, messageId, sendReasoning, ...responseInit } = init || {}
    if (onError !== undefined && typeof onError !== 'function') throw new TypeError('toUIMessageStreamResponse: onError must be a function')
    if (messageId !== undefined && typeof messageId !== 'string') throw new TypeError('toUIMessageStreamResponse: messageId must be a string')
    this.#take('toUIMessageStreamResponse()')
    const chunker = new UIChunker({ onError, messageId, sendReasoning: sendReasoning !== false })
    const body = this.#body(
      () => chunker.start(),
      (part, out) => chunker.write(part, out),
      () => 'data: [DONE]\n\n',
      (chunk) => `data: ${JSON.stringify(chunk)}\n\n`,
    )
    return new Response(body, withHeaders(responseInit, UI_MESSAGE_STREAM_HEADERS))
  }

  /** A Response with the reply text as it comes: `text/plain; charset=utf-8`. */
  toTextStreamResponse(init) {
    this.#take('toTextStreamResponse()')
    const body = this.#body(
      () => [],
      (part, out) => {
        if (part.type === 'text-delta' && part.text !== '') out.push(part.text)
      },
      () => '',
      (text) => text,
    )
    return new Response(body, withHeaders(init || {}, { 'content-type': 'text/plain; charset=utf-8' }))
  }

  /**
   * A byte stream of the parts: `write(part, out)` pushes what a part becomes onto `out`,
   * `format` turns each into text. Pulled, so nothing is encoded before the client asks, and
   * all parts buffered at a pull go out as one chunk.
   */
  #body(start, write, tail, format) {
    const encoder = new TextEncoder()
    let head = start()
    let cancelled = false
    return new ReadableStream({
      // A pull must enqueue or close: the stream does not pull again by itself after an empty one.
      pull: async (controller) => {
        let out = head
        head = []
        for (;;) {
          const first = await this.#next()
          if (cancelled) return
          // null: the stream was dropped (cancelled) or is over; the finish part is always the last one.
          let finished = first === null
          if (first !== null) {
            for (const part of [first, ...this.#drain()]) {
              write(part, out)
              if (part.type === 'finish') finished = true
            }
          }
          let text = ''
          for (const item of out) text += format(item)
          if (finished) text += tail()
          if (text !== '') controller.enqueue(encoder.encode(text))
          if (finished) controller.close()
          if (text !== '' || finished) return
          out = []
        }
      },
      cancel: (reason) => {
        cancelled = true
        this.#drop()
        if (this.#onCancel) {
          try {
            this.#onCancel(reason)
          } catch {
            // A hook that throws must not break the cancellation of the body.
          }
        }
      },
    })
  }
}

/**
 * The producer's side of a new ToolStream: `push(parts)` adds a batch of parts, `end(result)`
 * adds the final `{ type: "finish", result }` and resolves `stream.result`.
 */
function createPartStream(options) {
  let push
  let end
  const stream = new ToolStream((p, e) => {
    push = p
    end = e
  }, options)
  return { stream, push, end }
}

function withHeaders(init, defaults) {
  const headers = new Headers(init.headers)
  for (const [name, value] of Object.entries(defaults)) if (!headers.has(name)) headers.set(name, value)
  return { status: init.status, statusText: init.statusText, headers }
}

// --- 2. The UI message stream ------------------------------------------------------------------

/** The headers the AI SDK sends with a UI message stream. */
const UI_MESSAGE_STREAM_HEADERS = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
})

/** What the browser is told when a run fails: fixed sentences, never the developer's message. */
const USER_ERROR_TEXT = Object.freeze({
  invalid_request: 'The request could not be processed.',
  authentication_error: 'The assistant is not available right now because of a configuration problem.',
  rate_limited: 'Too many requests right now. Please wait a moment and try again.',
  overloaded: 'The assistant is overloaded right now. Please try again in a moment.',
  network_error: 'The assistant could not be reached. Please try again.',
  tool_validation_error: 'A tool could not accept what it was given, so the reply stopped. Please try again.',
  tool_execution_error: 'A tool failed while the reply was being prepared. Please try again.',
  max_iterations_exceeded: 'The request needed more steps than allowed. Please try a simpler request.',
  output_truncated: 'The reply was too long and was cut off. Please try a shorter request.',
  aborted: 'The reply was stopped.',
  unknown_error: 'Something went wrong. Please try again.',
})

/** The API's stop reasons as the AI SDK's finish reasons. */
const FINISH_REASON = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool-calls',
  approval_required: 'tool-calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content-filter',
}

/**
 * Turns StreamParts into UI message chunks. The parts have no block boundaries, so an open
 * text or reasoning part is ended when anything else comes; text that resumes gets a new id.
 */
class UIChunker {
  #onError
  #messageId
  #sendReasoning
  /** The open text or reasoning part: { kind: 'text' | 'reasoning', id }. */
  #open = null
  #lastId = 0
  /** Per toolUseId: { toolName, inputText, available }. */
  #calls = new Map()

  constructor({ onError, messageId, sendReasoning }) {
    this.#onError = onError
    this.#messageId = messageId
    this.#sendReasoning = sendReasoning
  }

  start() {
    return [this.#messageId === undefined ? { type: 'start' } : { type: 'start', messageId: this.#messageId }]
  }

  write(part, out) {
    switch (part.type) {
      case 'start-step':
        this.#close(out)
        out.push({ type: 'start-step' })
        return
      case 'text-delta':
        if (part.text === '') return
        this.#openAs('text', out)
        out.push({ type: 'text-delta', id: this.#open.id, delta: part.text })
        return
      case 'reasoning-delta':
        if (!this.#sendReasoning || part.text === '') return
        this.#openAs('reasoning', out)
        out.push({ type: 'reasoning-delta', id: this.#open.id, delta: part.text })
        return
      case 'tool-input-start':
        this.#close(out)
        this.#calls.set(part.toolUseId, { toolName: part.toolName, inputText: '', available: false })
        out.push({ type: 'tool-input-start', toolCallId: part.toolUseId, toolName: part.toolName })
        return
      case 'tool-input-delta': {
        const call = this.#calls.get(part.toolUseId)
        // A delta for a call that was never started would make useChat throw; it has no toolName to start it with.
        if (call === undefined || call.available) return
        call.inputText += part.delta
        out.push({ type: 'tool-input-delta', toolCallId: part.toolUseId, inputTextDelta: part.delta })
        return
      }
      case 'tool-call':
        this.#close(out)
        this.#available(part.toolUseId, part.toolName, part.input, out)
        return
      case 'tool-result':
        this.#close(out)
        this.#ensureAvailable(part.toolUseId, part.toolName, out)
        if (part.isError) {
          // The model-facing text; `part.error` is the developer's and never leaves the server.
          out.push({ type: 'tool-output-error', toolCallId: part.toolUseId, errorText: asText(part.output) })
        } else {
          out.push({ type: 'tool-output-available', toolCallId: part.toolUseId, output: part.output === undefined ? null : part.output })
        }
        return
      case 'finish-step':
        this.#close(out)
        out.push({ type: 'finish-step' })
        return
      case 'finish':
        this.#close(out)
        this.#finish(part.result, out)
        return
      default:
      // A part type this version does not know: nothing to show for it.
    }
  }

  #finish(result, out) {
    const error = result && result.error
    if (error) {
      if (error.code === 'aborted') {
        out.push({ type: 'abort' })
        return
      }
      out.push({ type: 'error', errorText: this.#errorText(error) })
      out.push({ type: 'finish', finishReason: 'error' })
      return
    }
    const data = (result && result.data) || {}
    for (const pending of data.pendingApprovals || []) {
      this.#ensureAvailable(pending.toolUseId, pending.toolName, out, pending.input)
      out.push({ type: 'tool-approval-request', approvalId: pending.approvalId, toolCallId: pending.toolUseId })
    }
    out.push({ type: 'finish', finishReason: FINISH_REASON[data.stopReason] || 'other' })
  }

  #errorText(error) {
    if (this.#onError) {
      try {
        const text = this.#onError(error)
        if (typeof text === 'string') return text
      } catch {
        // Fall back to the fixed sentence: a failing hook must not leak anything or break the stream.
      }
    }
    return USER_ERROR_TEXT[error.code] || USER_ERROR_TEXT.unknown_error
  }

  #available(toolUseId, toolName, input, out) {
    const call = this.#calls.get(toolUseId) || { toolName, inputText: '', available: false }
    call.available = true
    this.#calls.set(toolUseId, call)
    out.push({ type: 'tool-input-available', toolCallId: toolUseId, toolName, input: input === undefined ? {} : input })
  }

  /** A result or approval for a call whose input was never announced: announce it first. */
  #ensureAvailable(toolUseId, toolName, out, input) {
    const call = this.#calls.get(toolUseId)
    if (call !== undefined && call.available) return
    if (input === undefined) input = parseInput(call ? call.inputText : '')
    this.#available(toolUseId, toolName, input, out)
  }

  #openAs(kind, out) {
    if (this.#open !== null && this.#open.kind === kind) return
    this.#close(out)
    this.#open = { kind, id: `${kind}-${++this.#lastId}` }
    out.push({ type: `${kind}-start`, id: this.#open.id })
  }

  #close(out) {
    if (this.#open === null) return
    out.push({ type: `${this.#open.kind}-end`, id: this.#open.id })
    this.#open = null
  }
}

/** The input the model wrote, from its streamed JSON; `{}` when there was none (as the API has it). */
function parseInput(text) {
  if (text === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    return {}
  }
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

// --- 3. UI messages → Messages API params -------------------------------------------------------

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
/** Block types a tool output array may hold to be sent back as content blocks (`toolResult(blocks)`). */
const RESULT_BLOCK_TYPES = new Set(['text', 'image', 'document', 'search_result'])

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
    throw new TypeError(`fromUIMessages: expected an array of UI messages, got ${describe(uiMessages)}`)
  }
  const out = new History()
  const system = []
  const approvals = []
  const lastIndex = uiMessages.length - 1
  uiMessages.forEach((message, i) => {
    const where = `messages[${i}]${message && typeof message.id === 'string' ? ` (id ${JSON.stringify(message.id)})` : ''}`
    if (!isObject(message)) throw new TypeError(`fromUIMessages: ${where} must be an object, got ${describe(message)}`)
    if (!Array.isArray(message.parts)) throw new TypeError(`fromUIMessages: ${where} has no parts array`)
    message.parts.forEach((part, j) => {
      if (!isObject(part) || typeof part.type !== 'string') {
        throw new TypeError(`fromUIMessages: ${where}.parts[${j}] must be an object with a type, got ${describe(part)}`)
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
    throw new TypeError(`fromUIMessages: ${at} (${part.type}) has input ${describe(part.input)}; a tool input must be an object`)
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

/** The result the run gives a denied call (contract §9). */
function declined(id, approval) {
  const reason = isObject(approval) && typeof approval.reason === 'string' && approval.reason.trim() !== '' ? `: ${approval.reason}` : ''
  return { type: 'tool_result', tool_use_id: id, content: `The user declined this call${reason}. Do not retry it.`, is_error: true }
}

/** A tool output as the model got it: a string as it is, `toolResult(blocks)` as those blocks, anything else as JSON. */
function resultContent(output) {
  if (typeof output === 'string') return output
  if (Array.isArray(output) && output.length > 0 && output.every((b) => isObject(b) && RESULT_BLOCK_TYPES.has(b.type))) return output
  return asText(output)
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

function describe(value) {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`
}

module.exports = { ToolStream, createPartStream, fromUIMessages, UI_MESSAGE_STREAM_HEADERS, USER_ERROR_TEXT }
