'use strict'
// Streaming on the JS side (contract §8), with no dependencies at run time:
//   1. ToolStream: the single-consumer buffer of StreamParts that `streamWithTools` returns.
//   2. Its two Responses: the AI SDK UI message stream (SSE, for `useChat`) and plain text.
// The producer (the binding) pushes parts in batches and ends the stream with the RunResult.
// The way back, what `useChat` posts turned into Messages API params, is ui-messages.js.

const { fromUIMessages, asText } = require('./ui-messages.js')

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
        if (part.declined) {
          // The person said no: the AI SDK's own state for it, not a failure.
          out.push({ type: 'tool-output-denied', toolCallId: part.toolUseId })
        } else if (part.isError) {
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

module.exports = { ToolStream, createPartStream, fromUIMessages, UI_MESSAGE_STREAM_HEADERS, USER_ERROR_TEXT }
