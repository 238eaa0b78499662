'use strict'
// The `ctx` a tool's `execute` gets: `{ toolUseId, signal, context }`.

const ABORT = Symbol('abort')

/**
 * The `ctx` of one tool call. Its AbortController is made only when the tool reads `signal`
 * (most never do, and one per call is measurable at load); an abort that comes first is
 * remembered and the signal starts out aborted.
 */
class CallContext {
  #controller = null
  #reason = undefined
  constructor(toolUseId, context) {
    this.toolUseId = toolUseId
    this.context = context
  }
  get signal() {
    if (this.#controller === null) {
      this.#controller = new AbortController()
      if (this.#reason !== undefined) this.#controller.abort(this.#reason)
    }
    return this.#controller.signal
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

module.exports = { CallContext, abortCall }
