'use strict'
// The `ctx` a tool's `execute` gets: `{ toolUseId, signal, context, attempt, idempotencyKey }`.

const ABORT = Symbol('abort')
const ABORTED = Symbol('aborted')

/**
 * The `ctx` of one tool call. Its AbortController is made only when the tool reads `signal`
 * (most never do, and one per call is measurable at load); an abort that comes first is
 * remembered and the signal starts out aborted.
 */
class CallContext {
  #controller = null
  #reason = undefined
  constructor(toolUseId, context, attempt = 1, idempotencyKey = '') {
    this.toolUseId = toolUseId
    this.context = context
    // 1, or 2, 3 … when a run taken over after its process stopped runs a started call again.
    this.attempt = attempt
    // `<runId>:<toolUseId>` in a durable run (the same on every attempt), else the tool_use id.
    this.idempotencyKey = idempotencyKey === '' ? toolUseId : idempotencyKey
  }
  get signal() {
    if (this.#controller === null) {
      this.#controller = new AbortController()
      if (this.#reason !== undefined) this.#controller.abort(this.#reason)
    }
    return this.#controller.signal
  }
  [ABORTED]() {
    return this.#reason !== undefined
  }
  [ABORT](reason) {
    if (this.#reason !== undefined) return
    this.#reason = reason
    if (this.#controller !== null) this.#controller.abort(reason)
  }
}

/** Aborts the signal of a call's `ctx` (once: a later reason is ignored). */
function abortCall(ctx, reason) {
  ctx[ABORT](reason)
}

/** Whether the engine gave up on the call (it timed out, its run ended) — without making a signal. */
function wasAborted(ctx) {
  return ctx[ABORTED]()
}

module.exports = { CallContext, abortCall, wasAborted }
