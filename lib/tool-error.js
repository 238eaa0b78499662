'use strict'
// ToolError: what `execute` throws to send its own words to the model.

const TOOL_ERROR = Symbol.for('anthropic-tool-calling.ToolError')

/** Throw it from `execute` to send your own words to the model (`is_error: true`). */
class ToolError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = 'ToolError'
  }
}
// A brand rather than `instanceof`, so a ToolError from another copy of this package counts too.
Object.defineProperty(ToolError.prototype, TOOL_ERROR, { value: true })

/** Whether a thrown value is a ToolError (of this copy of the package or another). */
function isToolError(thrown) {
  return thrown !== null && typeof thrown === 'object' && thrown[TOOL_ERROR] === true
}

module.exports = { ToolError, isToolError }
