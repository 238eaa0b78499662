'use strict'
// The public API: a thin layer over the native binding. It reads process.env at call time,
// wraps each tool's `execute`, bridges AbortSignal and defines ToolError. The loop, the HTTP
// client, validation, retries and every error code live in Rust (src/engine).

const binding = require('./binding.js')

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

const DEFAULT_MODEL = 'claude-sonnet-5-5'
const DEFAULT_MAX_TOKENS = 4096
const DEFAULT_MAX_TOOL_ITERATIONS = 5

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
  // A Standard Schema (zod, valibot, arktype…): the API and the Rust engine get its JSON Schema;
  // its own `validate` runs on each input after the engine's check.
  const standard = standardSchemaOf(definition.input_schema)
  const sent = standard ? { ...definition, input_schema: jsonSchemaOf(name, definition.input_schema, standard) } : definition
  let json
  try {
    json = JSON.stringify(sent)
  } catch (e) {
    throw new TypeError(`registerTool: definition of ${name} cannot be turned into JSON: ${e.message}`)
  }
  try {
    binding.registerTool(json, bridge(execute, standard))
  } catch (e) {
    throw new TypeError(e.message)
  }
}

/** The `~standard` props of a Standard Schema (standardschema.dev), else null. */
function standardSchemaOf(schema) {
  if (schema === null || (typeof schema !== 'object' && typeof schema !== 'function')) return null
  const props = schema['~standard']
  return props !== null && typeof props === 'object' && typeof props.validate === 'function' ? props : null
}

/**
 * The JSON Schema of a Standard Schema's *input* (what the model must send): through
 * `~standard.jsonSchema` (zod ≥ 4.2, arktype, valibot's toStandardJsonSchema), else, for zod
 * 4.0–4.1, through `z.toJSONSchema` of the zod the application installed (an optional peer).
 */
function jsonSchemaOf(name, schema, standard) {
  const fail = (why) => new TypeError(`registerTool: input_schema of ${name} ${why}`)
  let converted
  if (standard.jsonSchema !== null && typeof standard.jsonSchema === 'object' && typeof standard.jsonSchema.input === 'function') {
    try {
      converted = standard.jsonSchema.input({ target: 'draft-2020-12' })
    } catch (e) {
      throw fail(`cannot be turned into a JSON Schema (${standard.vendor}: ${e && e.message}); use types that JSON can carry`)
    }
  } else if (standard.vendor === 'zod') {
    if (schema._zod === undefined) {
      throw fail('is a zod 3 schema, which gives no JSON Schema; write it with zod 4 (import { z } from "zod" with zod ≥ 4.2)')
    }
    const zod = optionalZod()
    if (!zod) throw fail('is a zod schema without ~standard.jsonSchema (zod < 4.2) and zod\'s toJSONSchema cannot be loaded; install zod ≥ 4.2')
    try {
      converted = zod.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' })
    } catch (e) {
      throw fail(`cannot be turned into a JSON Schema (zod: ${e && e.message}); use types that JSON can carry`)
    }
  } else {
    throw fail(
      `is a Standard Schema (${standard.vendor}) that gives no JSON Schema (no ~standard.jsonSchema); ` +
        'use one that does (zod ≥ 4.2, arktype, valibot through toStandardJsonSchema) or a JSON Schema object',
    )
  }
  if (converted === null || typeof converted !== 'object' || Array.isArray(converted)) {
    throw fail(`did not convert: its JSON Schema came out as ${describe(converted)}, not an object`)
  }
  return converted
}

/** The application's zod 4 (`zod`, or `zod/v4` of zod 3.25), if it has one. */
function optionalZod() {
  for (const id of ['zod', 'zod/v4']) {
    try {
      const zod = require(id)
      if (typeof zod.toJSONSchema === 'function') return zod
    } catch {}
  }
  return null
}

const MAX_LISTED_ISSUES = 3

/** A Standard Schema's issues as the engine words JSON Schema errors: `items[0].name: reason`. */
function describeIssues(issues) {
  const lines = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
    let field = ''
    for (const seg of issue.path || []) {
      const key = seg !== null && typeof seg === 'object' ? seg.key : seg
      if (typeof key === 'number' || (typeof key === 'string' && /^[0-9]+$/.test(key))) field += `[${String(key)}]`
      else field += (field ? '.' : '') + String(key)
    }
    const message = String(issue.message || 'invalid').replace(/\s*\n\s*/g, ' ')
    return `${field || '(root)'}: ${message}`
  })
  if (issues.length > lines.length) lines.push(`(and ${issues.length - lines.length} more)`)
  return lines.length > 0 ? lines.join('\n') : '(root): the input was refused by its schema'
}

/**
 * The function Rust calls for each tool call; it always resolves with a ToolReply. With a
 * Standard Schema the input goes through its `validate` first: `execute` gets the parsed value
 * (transforms and defaults applied), and its issues are reported like a JSON Schema failure.
 */
function bridge(execute, standard) {
  return async (inputJson, toolUseId, runId) => {
    const run = runs.get(runId)
    const ctx = new CallContext(toolUseId, run ? run.context : undefined)
    if (run) run.calls.set(toolUseId, ctx)
    let output
    let pending
    try {
      let input = JSON.parse(inputJson)
      if (standard) {
        const checked = await standard.validate(input)
        if (checked === null || typeof checked !== 'object') throw new TypeError(`its schema's ~standard.validate returned ${describe(checked)}`)
        if (checked.issues) {
          if (run) run.causes.set(toolUseId, checked.issues)
          return { kind: 'invalid_input', content: describeIssues(checked.issues) }
        }
        input = checked.value
      }
      pending = execute(input, ctx)
      // Held until it settles: a Promise nothing else references would otherwise be collected
      // while pending, and the call would fail at random instead of timing out (toolTimeoutMs).
      if (run) run.pending.add(pending)
      output = await pending
    } catch (thrown) {
      if (run) run.causes.set(toolUseId, thrown)
      if (thrown !== null && typeof thrown === 'object' && thrown[TOOL_ERROR] === true) {
        return { kind: 'tool_error', content: String(thrown.message) }
      }
      return { kind: 'error', content: describeThrown(thrown) }
    } finally {
      if (run) {
        run.calls.delete(toolUseId)
        run.pending.delete(pending)
      }
    }
    if (output === undefined) output = null
    if (typeof output === 'string') {
      if (run) run.outputs.set(toolUseId, output)
      return { kind: 'text', content: output }
    }
    try {
      const json = JSON.stringify(output)
      if (json === undefined) throw new TypeError(`${describe(output)} has no JSON form`)
      if (run) run.outputs.set(toolUseId, output)
      return { kind: 'json', content: json }
    } catch (e) {
      if (run) run.causes.set(toolUseId, e)
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
async function runWithTools(prompt, options) {
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
    const run = { context, calls: new Map(), causes: new Map(), pending: new Set(), outputs: new Map() }
    runs.set(runId, run)
    const onAbort = () => control.abort()
    if (signal) {
      signal.addEventListener('abort', onAbort, { once: true })
      if (signal.aborted) control.abort()
    }
    try {
      const reply = await binding.runWithTools(request, runId, control)
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
  unregisterTool,
  listTools,
  runWithTools,
  ToolError,
  DEFAULT_MODEL,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOOL_ITERATIONS,
}
