'use strict'
// The public API: a thin layer over the native binding. It reads process.env at call time,
// wraps each tool's `execute`, bridges AbortSignal and defines ToolError. The loop, the HTTP
// client, validation, retries and every error code live in Rust (src/engine).

const binding = require('./binding.js')
const { ToolStream, fromUIMessages } = require('./stream.js')

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

const { DEFAULT_MODEL, DEFAULT_MAX_TOKENS, DEFAULT_MAX_TOOL_ITERATIONS } = binding

const TOOL_RESULT = Symbol.for('anthropic-tool-calling.toolResult')
const RESULT_BLOCK_TYPES = new Set(['text', 'image', 'document', 'search_result', 'tool_reference'])

/**
 * Content blocks a tool returns as its `tool_result` content, as given: text, image, document,
 * search_result (and tool_reference). `output` in `toolCalls` is the array.
 */
function toolResult(blocks) {
  if (!Array.isArray(blocks)) throw new TypeError(`toolResult: expected an array of content blocks, got ${describe(blocks)}`)
  blocks.forEach((block, i) => {
    const type = block !== null && typeof block === 'object' ? block.type : undefined
    if (!RESULT_BLOCK_TYPES.has(type)) {
      throw new TypeError(`toolResult: blocks[${i}] must be a content block whose type is one of ${[...RESULT_BLOCK_TYPES].join(', ')}; got ${type === undefined ? describe(block) : JSON.stringify(type)}`)
    }
  })
  return Object.freeze({ [TOOL_RESULT]: true, blocks })
}

/** Runs in progress on this thread: what their tools need that cannot cross into Rust. */
const runs = new Map()
let lastRunId = 0

const ABORT = Symbol('abort')

/**
 * The `ctx` of one tool call: `{ toolUseId, signal, context }`. Its AbortController is made only
 * when the tool reads `signal` (most never do, and one per call is measurable at load); an abort
 * that comes first is remembered and the signal starts out aborted.
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

binding.setCancelHook((runId, toolUseId) => {
  const run = runs.get(runId)
  const call = run && run.calls.get(toolUseId)
  if (call) call[ABORT](new DOMException('The tool call was cancelled: it timed out or the run ended.', 'AbortError'))
})

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`.trim()
}

function registerTool(tool) {
  if (tool === null || typeof tool !== 'object') {
    throw new TypeError(`registerTool: expected { definition, execute }, got ${describe(tool)}`)
  }
  const { definition, execute } = tool
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
    throw new TypeError(`registerTool: definition must be an object { name, description, input_schema }, got ${describe(definition)}`)
  }
  const name = typeof definition.name === 'string' ? definition.name : '(unnamed)'
  if (typeof execute !== 'function') {
    throw new TypeError(`registerTool: execute of ${name} must be a function, got ${describe(execute)}`)
  }
  let json
  try {
    json = JSON.stringify(definition)
  } catch (e) {
    throw new TypeError(`registerTool: definition of ${name} cannot be turned into JSON: ${e.message}`)
  }
  try {
    binding.registerTool(json, bridge(execute))
  } catch (e) {
    throw new TypeError(e.message)
  }
}

const NOT_STARTED = Object.freeze({ kind: 'not_started', content: '' })

/**
 * The function Rust calls for each tool call; it always resolves with a ToolReply. A call whose
 * run is gone, was aborted, or gave up on it (a timeout, a failed sibling in stop mode) before
 * this dispatch is never started: `control.begin` answers that, under the same lock the engine
 * takes when it gives up on a call.
 */
function bridge(execute) {
  return async (inputJson, toolUseId, runId) => {
    const run = runs.get(runId)
    if (run === undefined || !run.control.begin(toolUseId)) return NOT_STARTED
    const ctx = new CallContext(toolUseId, run.context)
    run.calls.set(toolUseId, ctx)
    let output
    let pending
    try {
      pending = execute(JSON.parse(inputJson), ctx)
      // Held until it settles: a Promise nothing else references would otherwise be collected
      // while pending, and the call would fail at random instead of timing out (toolTimeoutMs).
      run.pending.add(pending)
      output = await pending
    } catch (thrown) {
      run.causes.set(toolUseId, thrown)
      if (thrown !== null && typeof thrown === 'object' && thrown[TOOL_ERROR] === true) {
        return { kind: 'tool_error', content: String(thrown.message) }
      }
      return { kind: 'error', content: describeThrown(thrown) }
    } finally {
      run.calls.delete(toolUseId)
      run.pending.delete(pending)
    }
    if (output === undefined) output = null
    if (output !== null && typeof output === 'object' && output[TOOL_RESULT] === true) {
      try {
        const json = JSON.stringify(output.blocks)
        run.outputs.set(toolUseId, output.blocks)
        return { kind: 'blocks', content: json }
      } catch (e) {
        run.causes.set(toolUseId, e)
        return { kind: 'error', content: `its toolResult blocks cannot be turned into JSON (${e.message})` }
      }
    }
    if (typeof output === 'string') {
      run.outputs.set(toolUseId, output)
      return { kind: 'text', content: output }
    }
    try {
      const json = JSON.stringify(output)
      if (json === undefined) throw new TypeError(`${describe(output)} has no JSON form`)
      run.outputs.set(toolUseId, output)
      return { kind: 'json', content: json }
    } catch (e) {
      run.causes.set(toolUseId, e)
      return { kind: 'error', content: `it returned a value that cannot be turned into JSON (${e.message})` }
    }
  }
}

/** The developer's view of anything thrown. */
function describeThrown(thrown) {
  if (thrown instanceof Error) return thrown.name && thrown.name !== 'Error' ? `${thrown.name}: ${thrown.message}` : thrown.message || String(thrown)
  if (typeof thrown === 'string') return thrown
  if (thrown === undefined) return 'it threw undefined'
  try {
    return `it threw ${JSON.stringify(thrown)}`
  } catch {
    return `it threw ${String(thrown)}`
  }
}

function unregisterTool(name) {
  return typeof name === 'string' && binding.unregisterTool(name)
}

function listTools() {
  return JSON.parse(binding.listTools())
}

function failure(code, message, extra) {
  return { data: null, error: { code, message, ...extra } }
}

function isAbortSignal(value) {
  return value !== null && typeof value === 'object' && typeof value.aborted === 'boolean' && typeof value.addEventListener === 'function'
}

/**
 * Defines `target[key]` as the UTF-8 JSON in the Buffer `json`, parsed the first time it is
 * read: the history of a long run is large and most callers never look at it. It reads, writes,
 * enumerates and serialises like a plain data property.
 */
function lazyJson(target, key, json) {
  let value
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get() {
      if (json !== null) {
        value = JSON.parse(json.toString('utf8'))
        json = null
      }
      return value
    },
    set(v) {
      json = null
      value = v
    },
  })
}

/** Runs a conversation with the registered tools. Never rejects, never throws. */
function runWithTools(prompt, options) {
  return execute(prompt, options, null)
}

/**
 * Runs a conversation as `runWithTools` does, with each reply streamed: returns at once a
 * single-consumer async iterable of StreamParts with `result` and the two Response makers.
 * Never throws.
 */
function streamWithTools(prompt, options) {
  const streaming = { onParts: null, control: null, started: false }
  let push
  let end
  const stream = new ToolStream(
    (p, e) => {
      push = p
      end = e
    },
    // A Response body cancelled (the browser went away) aborts the run.
    { onCancel: () => streaming.control && streaming.control.abort() },
  )
  let result = null
  let lastBatch = false
  const finish = () => {
    if (result !== null && lastBatch) end(result)
  }
  streaming.onParts = (json, last, run) => {
    if (json.length > 2) {
      const parts = JSON.parse(json)
      for (const part of parts) fillOutputs(part, run)
      push(parts)
    }
    if (last) {
      lastBatch = true
      finish()
    }
  }
  execute(prompt, options, streaming).then((r) => {
    result = r
    // Refused before it reached the engine: no batch will come.
    if (!streaming.started) lastBatch = true
    finish()
  })
  return stream
}

/** Successful outputs cross as null: put back the very values the tools returned. */
function fillOutputs(part, run) {
  if (part.type === 'tool-result') {
    if (!part.isError) part.output = run.outputs.has(part.toolUseId) ? run.outputs.get(part.toolUseId) : null
  } else if (part.type === 'finish-step') {
    for (const call of part.toolCalls) if (!call.isError && run.outputs.has(call.toolUseId)) call.output = run.outputs.get(call.toolUseId)
  }
}

async function execute(prompt, options, streaming) {
  try {
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      return failure('invalid_request', `options must be an object, got ${describe(options)}. Nothing was sent.`)
    }
    const { signal, context, ...rest } = options || {}
    if (signal !== undefined && signal !== null && !isAbortSignal(signal)) {
      return failure('invalid_request', `Option signal must be an AbortSignal, got ${describe(signal)}. Nothing was sent.`)
    }
    const env = {
      ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY,
      ANTHROPIC_AUTH_TOKEN: process.env.ANTHROPIC_AUTH_TOKEN,
      ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL,
      ANTHROPIC_MODEL: process.env.ANTHROPIC_MODEL,
    }
    let request
    try {
      request = JSON.stringify({ prompt, options: rest, env })
    } catch (e) {
      return failure('invalid_request', `prompt and options must be JSON-serialisable (${e.message}). Nothing was sent.`)
    }
    lastRunId = (lastRunId + 1) >>> 0
    const runId = lastRunId
    const control = new binding.RunControl()
    const run = { context, control, calls: new Map(), causes: new Map(), pending: new Set(), outputs: new Map() }
    runs.set(runId, run)
    const onAbort = () => control.abort()
    if (signal) {
      signal.addEventListener('abort', onAbort, { once: true })
      if (signal.aborted) control.abort()
    }
    try {
      let pending
      if (streaming === null) {
        pending = binding.runWithTools(request, runId, control)
      } else {
        streaming.control = control
        pending = binding.runWithTools(request, runId, control, (json, last) => streaming.onParts(json, last, run))
        streaming.started = true
      }
      const reply = await pending
      const result = JSON.parse(reply.result)
      // Successful calls come back with output null: put back the very value each tool returned.
      const calls = result.data ? result.data.toolCalls : result.error.toolCalls
      if (calls) {
        for (const call of calls) if (!call.isError && run.outputs.has(call.toolUseId)) call.output = run.outputs.get(call.toolUseId)
      }
      if (result.data) lazyJson(result.data, 'messages', reply.messages)
      const error = result.error
      if (error && error.toolUseId !== undefined) {
        if (run.causes.has(error.toolUseId)) error.cause = run.causes.get(error.toolUseId)
        delete error.toolUseId
      }
      return result
    } finally {
      if (signal) signal.removeEventListener('abort', onAbort)
      for (const call of run.calls.values()) call[ABORT](new DOMException('The run ended.', 'AbortError'))
      runs.delete(runId)
    }
  } catch (e) {
    return failure('unknown_error', `Internal error in anthropic-tool-calling: ${e && e.message}. Please report it.`, { cause: e })
  }
}

module.exports = {
  registerTool,
  toolResult,
  unregisterTool,
  listTools,
  runWithTools,
  streamWithTools,
  fromUIMessages,
  ToolError,
  DEFAULT_MODEL,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOOL_ITERATIONS,
}
