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
  const { definition, execute, needsApproval } = tool
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
  if (needsApproval !== undefined && needsApproval !== null && typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    throw new TypeError(`registerTool: needsApproval of ${name} must be true, false or a function (input, ctx) => boolean, got ${describe(needsApproval)}`)
  }
  try {
    binding.registerTool(json, bridge(name, execute, standard), needsApproval === true, typeof needsApproval === 'function' ? asker(needsApproval) : undefined)
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
    const message = oneLine(String(issue.message || 'invalid'))
    return `${field || '(root)'}: ${message}`
  })
  if (issues.length > lines.length) lines.push(`(and ${issues.length - lines.length} more)`)
  return lines.length > 0 ? lines.join('\n') : '(root): the input was refused by its schema'
}

/**
 * `text` with each run of whitespace that holds a line break turned into one space — what
 * replacing the regex `\s*\n\s*` (global) with ' ' gives — in linear time. The regex tries every
 * start inside a long run of whitespace without a newline and scans to its end each time
 * (quadratic), and an issue message may quote the model's input. `trim` removes the same
 * characters as `\s` matches.
 */
function oneLine(text) {
  if (!text.includes('\n')) return text
  const pieces = text.split('\n')
  let out = pieces[0].trimEnd()
  // Whether the run of whitespace around the last newline still waits for its space.
  let open = false
  for (let i = 1; i < pieces.length; i++) {
    const piece = i < pieces.length - 1 ? pieces[i].trim() : pieces[i].trimStart()
    open = true
    if (piece !== '') {
      out += ` ${piece}`
      open = false
    }
  }
  return open ? `${out} ` : out
}


/**
 * A tool's `needsApproval(input, ctx)` as the engine asks it. Anything but a clear `false`
 * (a throw, a rejection) means the call waits for a person: a failed check never lets a risky
 * call through.
 */
function asker(needsApproval) {
  return async (inputJson, toolUseId, runId) => {
    const run = runs.get(runId)
    try {
      return (await needsApproval(JSON.parse(inputJson), { toolUseId, context: run ? run.context : undefined })) !== false
    } catch (e) {
      console.error('[anthropic-tool-calling] needsApproval threw; the call waits for approval:', e)
      return true
    }
  }
}

/**
 * The function Rust calls for each tool call; it returns nothing and settles the call through
 * the run's `control.settle(toolUseId, kind, content)` (always, exactly once, with a ToolReply's
 * kind and content). A call whose run is gone, was aborted, or gave up on it (a timeout, a failed
 * sibling in stop mode) before this dispatch is never started: `control.begin` answers that,
 * under the same lock the engine takes when it gives up on a call. With a Standard Schema the
 * input goes through its `validate` first: `execute` gets the parsed value (transforms and
 * defaults applied), and its issues are reported like a JSON Schema failure.
 */
function bridge(name, execute, standard) {
  return (inputJson, toolUseId, runId) => {
    const run = runs.get(runId)
    // A run no longer in `runs` has ended: nobody waits for this call.
    if (run === undefined) return
    const control = run.control
    if (!control.begin(toolUseId)) {
      control.settle(toolUseId, 'not_started', '')
      return
    }
    callTool(run, name, execute, standard, inputJson, toolUseId).then(
      (reply) => handOver(run, toolUseId, () => settle(run, toolUseId, reply)),
      (e) => handOver(run, toolUseId, () => settle(run, toolUseId, { kind: 'error', content: `the tool wrapper failed: ${describeThrown(e)}` })),
    )
  }
}

/** Settles a call with its reply (an output turned into one here). Never throws. */
function settle(run, toolUseId, reply) {
  try {
    if (reply.kind === null) {
      try {
        reply = replyOf(run, toolUseId, reply.content)
      } catch (e) {
        // An output that throws when looked at (a Proxy, a getter).
        run.causes.set(toolUseId, e)
        reply = { kind: 'error', content: `the tool wrapper failed: ${describeThrown(e)}` }
      }
    }
    run.control.settle(toolUseId, reply.kind, reply.content)
  } catch {
    // Only something thrown while describing a throw gets here: the call still settles.
    try {
      run.control.settle(toolUseId, 'error', 'the tool wrapper failed on a value it could not describe')
    } catch (e) {
      console.error('[anthropic-tool-calling] a tool call could not be settled:', e)
    }
  }
}

/**
 * How long the JS thread may spend per event-loop turn handing finished calls over (an output
 * turned into JSON, then `settle`). The engine's threads answer many runs at once, so at high
 * concurrency one turn could receive a hundred calls whose outputs are objects: serialising all
 * of them in that turn held the event loop for 10-20 ms (issue 14, `heavy-objects`). What does
 * not fit waits, first in first out, for the next turn, after its timers and I/O.
 */
const SLICE_MS = 1
/** Hand-overs waiting for a turn (from `handOvers[handOversHead]` on), oldest first. */
let handOvers = []
let handOversHead = 0
/** When this turn's slice ends (`performance.now()`); -1 when none is open. */
let sliceEnd = -1

/**
 * Runs `job` (which never throws) now if this turn's slice has time left and nothing waits. In
 * a run with `toolTimeoutMs`, the engine is first told that the call finished now: the time its
 * hand-over takes (turning an output into JSON, waiting for a later turn) is not the tool's, and
 * never makes a call that finished in time a timeout.
 */
function handOver(run, toolUseId, job) {
  const now = performance.now()
  if (sliceEnd < 0) {
    sliceEnd = now + SLICE_MS
    setImmediate(endSlice)
  }
  if (run.timed) {
    try {
      run.control.finished(toolUseId)
    } catch {}
  }
  if (handOversHead === handOvers.length && now < sliceEnd) job()
  else handOvers.push(job)
}

/** The check phase of the turn that opened the slice: what waits goes on in the next turn. */
function endSlice() {
  if (handOversHead < handOvers.length) setImmediate(nextSlice)
  else sliceEnd = -1
}

/** A turn's slice of the waiting hand-overs; the rest waits one more turn. */
function nextSlice() {
  const end = performance.now() + SLICE_MS
  do handOvers[handOversHead++]()
  while (handOversHead < handOvers.length && performance.now() < end)
  if (handOversHead < handOvers.length) {
    setImmediate(nextSlice)
    return
  }
  handOvers = []
  handOversHead = 0
  sliceEnd = -1
}

/**
 * One started call: resolves with its ToolReply `{ kind, content }`, or, when `execute`
 * returned, `{ kind: null, content: output }` for `replyOf` to turn into one.
 */
async function callTool(run, name, execute, standard, inputJson, toolUseId) {
  const ctx = new CallContext(toolUseId, run.context)
  run.calls.set(toolUseId, ctx)
  const input = JSON.parse(inputJson)
  // onToolCall: right before execute, so a call that waits for approval, is declined or never
  // starts is not announced as run.
  if (run.hooks !== null) callHook(run.hooks, 'onToolCall', { toolName: name, input, toolUseId })
  let output
  let pending
  try {
    let value = input
    if (standard) {
      const checked = await standard.validate(input)
      if (checked === null || typeof checked !== 'object') throw new TypeError(`its schema's ~standard.validate returned ${describe(checked)}`)
      if (checked.issues) {
        run.causes.set(toolUseId, checked.issues)
        return { kind: 'invalid_input', content: describeIssues(checked.issues) }
      }
      value = checked.value
    }
    pending = execute(value, ctx)
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
  return { kind: null, content: output }
}

/** The ToolReply for what `execute` returned (`toolCalls[].output` keeps the value itself). */
function replyOf(run, toolUseId, output) {
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

/**
 * Where runs end: the binding calls this channel's function once per run (one
 * ThreadsafeFunction for all of them), and `ending` holds each pending run's resolve. The
 * channel holds the event loop open while any run is pending (`hold`), as a native promise
 * would, and never while none is.
 */
const ending = new Map()
const channel = new binding.RunChannel((runId, result, messages) => {
  const resolve = ending.get(runId)
  if (resolve === undefined) return
  notWaiting(runId)
  resolve({ result, messages })
})

/** The end of run `runId`, as `{ result, messages }`. */
function ended(runId) {
  return new Promise((resolve) => {
    if (ending.size === 0) channel.hold(true)
    ending.set(runId, resolve)
  })
}

function notWaiting(runId) {
  if (ending.delete(runId) && ending.size === 0) channel.hold(false)
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
  const streaming = { push: null, control: null }
  let end
  const stream = new ToolStream(
    (push, e) => {
      streaming.push = push
      end = e
    },
    // A Response body cancelled (the browser went away) aborts the run.
    { onCancel: () => streaming.control && streaming.control.abort() },
  )
  execute(prompt, options, streaming).then((result) => end(result))
  return stream
}

/** Calls an observer hook; a throw (or a rejection) is logged and never ends the run. */
function callHook(hooks, name, arg) {
  const hook = hooks[name]
  if (typeof hook !== 'function') return
  const report = (e) => console.error(`[anthropic-tool-calling] ${name} threw; the run goes on:`, e)
  try {
    const out = hook(arg)
    if (out !== null && typeof out === 'object' && typeof out.then === 'function') out.then(undefined, report)
  } catch (e) {
    report(e)
  }
}

/**
 * A batch of parts from the engine: successful outputs are put back (they cross as null), the
 * hooks are told, and a stream gets them.
 */
function onParts(parts, run, streaming) {
  for (const part of parts) {
    if (part.type === 'tool-call') {
      run.inputs.set(part.toolUseId, part.input)
    } else if (part.type === 'tool-result') {
      if (!part.isError) part.output = run.outputs.has(part.toolUseId) ? run.outputs.get(part.toolUseId) : null
      if (run.hooks !== null) {
        const call = { toolName: part.toolName, input: run.inputs.get(part.toolUseId), output: part.isError ? null : part.output, durationMs: part.durationMs, toolUseId: part.toolUseId }
        if (part.isError) Object.assign(call, { isError: true, error: part.error })
        callHook(run.hooks, 'onToolResult', call)
      }
    } else if (part.type === 'finish-step') {
      for (const call of part.toolCalls) if (!call.isError && run.outputs.has(call.toolUseId)) call.output = run.outputs.get(call.toolUseId)
      if (run.hooks !== null) callHook(run.hooks, 'onStepFinish', { step: part.step, stopReason: part.stopReason, usage: part.usage, toolCalls: part.toolCalls })
    }
  }
  if (streaming !== null) streaming.push(parts)
}

// The options JS keeps (JS values the engine has no use for) and what each must be: Rust's list.
const JS_ONLY = binding.jsOnlyOptions()
const IS_KIND = { any: () => true, abort_signal: isAbortSignal, hook: (value) => typeof value === 'function' }

/**
 * Checks `options` and splits them: what JS keeps (`signal`, `context`, the hooks) and the
 * request for Rust, `{ prompt, options, env }` as JSON with the other options and the
 * environment read now. Returns the run's failure (`{ data: null, error }`, worded by Rust) when
 * a check fails, else `{ signal, context, hooks, request, timed }`: `hooks` is null when none is
 * given, `timed` says whether `toolTimeoutMs` is.
 */
function readOptions(prompt, options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    return binding.jsFailure('options_not_an_object', describe(options))
  }
  const given = options || {}
  const rest = { ...given }
  const kept = {}
  for (const { name } of JS_ONLY) {
    // Read as a destructuring would: an own value as copied, else one inherited.
    if (Object.hasOwn(rest, name)) {
      kept[name] = rest[name]
      delete rest[name]
    } else {
      kept[name] = given[name]
    }
  }
  const hooks = {}
  let hooked = false
  for (const { name, kind } of JS_ONLY) {
    const value = kept[name]
    if (value !== undefined && value !== null && !IS_KIND[kind](value)) return binding.jsFailure('bad_option', describe(value), name)
    if (kind === 'hook') {
      hooks[name] = value
      hooked = hooked || typeof value === 'function'
    }
  }
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
    return binding.jsFailure('not_json', String(e.message))
  }
  const timed = rest.toolTimeoutMs !== undefined && rest.toolTimeoutMs !== null
  return { signal: kept.signal, context: kept.context, hooks: hooked ? hooks : null, request, timed }
}

async function execute(prompt, options, streaming) {
  try {
    const read = readOptions(prompt, options)
    if (read.error) return read
    const { signal, context, hooks, request, timed } = read
    lastRunId = (lastRunId + 1) >>> 0
    const runId = lastRunId
    const control = new binding.RunControl()
    const run = { context, control, hooks, timed, calls: new Map(), causes: new Map(), pending: new Set(), outputs: new Map(), inputs: new Map() }
    runs.set(runId, run)
    const onAbort = () => control.abort()
    if (signal) {
      signal.addEventListener('abort', onAbort, { once: true })
      if (signal.aborted) control.abort()
    }
    try {
      let pending
      let lastBatch = null
      if (streaming === null && hooks === null) {
        pending = ended(runId)
        channel.start(request, runId, control)
      } else {
        if (streaming !== null) streaming.control = control
        // The run's promise and its last batch of parts come by different ways: the result is
        // handed on only once both are in, so no part ever follows the end.
        let sawLast
        lastBatch = new Promise((resolve) => (sawLast = resolve))
        const batch = (json, last) => {
          try {
            if (json.length > 2) onParts(JSON.parse(json), run, streaming)
          } finally {
            if (last) sawLast()
          }
        }
        pending = ended(runId)
        channel.start(request, runId, control, batch, streaming !== null)
      }
      const reply = await pending
      if (lastBatch !== null) await lastBatch
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
      notWaiting(runId)
      if (signal) signal.removeEventListener('abort', onAbort)
      for (const call of run.calls.values()) call[ABORT](new DOMException('The run ended.', 'AbortError'))
      runs.delete(runId)
    }
  } catch (e) {
    const failed = binding.jsFailure('internal', String(e && e.message))
    failed.error.cause = e
    return failed
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
