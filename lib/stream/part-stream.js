'use strict'
// The parts of a streamed run, with no dependencies at run time: ToolStream, the single-consumer
// buffer of StreamParts that `streamWithTools` returns, and its two Responses — the AI SDK UI
// message stream (SSE, for `useChat`; the chunks are made by ui-chunker.js) and plain text. The
// producer pushes parts in batches and ends the stream with the RunResult.

const { UIChunker, UI_MESSAGE_STREAM_HEADERS } = require('./ui-chunker.js')

const NOT_TAKEN = null

/**
 * The parts of one run, read once: by iterating, or by one `to…Response()`. Parts nobody reads
 * are buffered; the run goes on either way and `result` always resolves. `streamWithTools` makes
 * one through `createPartStream`.
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

/** A ResponseInit's status and headers, with each of `defaults` the caller did not set. */
function withHeaders(init, defaults) {
  const headers = new Headers(init.headers)
  for (const [name, value] of Object.entries(defaults)) if (!headers.has(name)) headers.set(name, value)
  return { status: init.status, statusText: init.statusText, headers }
}

module.exports = { ToolStream, createPartStream }
