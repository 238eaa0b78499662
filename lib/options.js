'use strict'
// A run's options as JS reads them before anything crosses into Rust: the ones that stay in JS
// (`signal`, `context`, the hooks) are checked and taken out; the prompt, the rest of the options
// and the environment the engine reads go to the engine as one JSON request.

const { describe } = require('./describe.js')
const { HOOKS } = require('./hooks.js')

/** A failed RunResult. */
function failure(code, message, extra) {
  return { data: null, error: { code, message, ...extra } }
}

function isAbortSignal(value) {
  return value !== null && typeof value === 'object' && typeof value.aborted === 'boolean' && typeof value.addEventListener === 'function'
}

/**
 * Checks and splits the options of a run. Returns a failed RunResult (`{ data: null, error }`,
 * nothing sent) for options JS refuses, else `{ signal, context, hooks, request, timed }`:
 * `hooks` is null when no hook is given, `request` the JSON of `{ prompt, options, env }` for the
 * engine, `timed` whether the run has a `toolTimeoutMs`. process.env is read now, at each call.
 */
function readOptions(prompt, options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    return failure('invalid_request', `options must be an object, got ${describe(options)}. Nothing was sent.`)
  }
  const { signal, context, onToolCall, onToolResult, onStepFinish, ...rest } = options || {}
  if (signal !== undefined && signal !== null && !isAbortSignal(signal)) {
    return failure('invalid_request', `Option signal must be an AbortSignal, got ${describe(signal)}. Nothing was sent.`)
  }
  const given = { onToolCall, onToolResult, onStepFinish }
  for (const name of HOOKS) {
    if (given[name] !== undefined && given[name] !== null && typeof given[name] !== 'function') {
      return failure('invalid_request', `Option ${name} must be a function, got ${describe(given[name])}. Nothing was sent.`)
    }
  }
  const hooks = HOOKS.some((name) => typeof given[name] === 'function') ? given : null
  const env = {
    ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY,
    ANTHROPIC_AUTH_TOKEN: process.env.ANTHROPIC_AUTH_TOKEN,
    ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL,
    ANTHROPIC_MODEL: process.env.ANTHROPIC_MODEL,
    ANTHROPIC_TOOL_CALLING_SECRET: process.env.ANTHROPIC_TOOL_CALLING_SECRET,
  }
  let request
  try {
    request = JSON.stringify({ prompt, options: rest, env })
  } catch (e) {
    return failure('invalid_request', `prompt and options must be JSON-serialisable (${e.message}). Nothing was sent.`)
  }
  const timed = rest.toolTimeoutMs !== undefined && rest.toolTimeoutMs !== null
  return { signal, context, hooks, request, timed }
}

module.exports = { readOptions, failure }
