'use strict'
// Where a tool runs: the functions the engine calls for a tool's `needsApproval` and `execute`.
// Each call of `execute` is settled exactly once, with a ToolReply `{ kind, content }`
// (`control.settle`), handed over in slices of the event loop (hand-over.js). A failure is
// settled with facts only, a kind and its raw detail: the words the developer and the model
// read are written in Rust (src/engine/run/feedback.rs).

const { describe, describeThrown } = require('./describe.js')
const { isToolError } = require('./tool-error.js')
const { isToolResult } = require('./tool-result.js')
const { CallContext, wasAborted } = require('./call-context.js')
const { runs } = require('./runs.js')
const { handOver } = require('./hand-over.js')

// Loaded by the first call that needs them: a hook to call, a Standard Schema's issues to word.
let hooks, schemas
const callHook = (...args) => (hooks ??= require('./hooks.js')).callHook(...args)
const describeIssues = (issues) => (schemas ??= require('./standard-schema.js')).describeIssues(issues)

/**
 * A tool's `needsApproval(input, ctx)` as the engine asks it. Anything but a clear `false`
 * (a throw, a rejection) means the call waits for a person: a failed check never lets a risky
 * call through.
 */
function asker(needsApproval, { named = false } = {}) {
  return async (inputJson, toolUseId, runId, toolName) => {
    const run = runs.get(runId)
    try {
      const input = JSON.parse(inputJson)
      const ctx = { toolUseId, context: run ? run.context : undefined }
      // An MCP server's one function is asked about each of its tools: it gets the tool's name first.
      const args = named ? [toolName, input, ctx] : [input, ctx]
      return (await (run ? run.scope.runInAsyncScope(needsApproval, undefined, ...args) : needsApproval(...args))) !== false
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
  return (inputJson, toolUseId, runId, attempt, idempotencyKey) => {
    const run = runs.get(runId)
    // A run no longer in `runs` has ended: nobody waits for this call.
    if (run === undefined) return
    const control = run.control
    if (!control.begin(toolUseId)) {
      control.settle(toolUseId, 'not_started', '')
      return
    }
    run.scope.runInAsyncScope(callTool, undefined, run, name, execute, standard, inputJson, toolUseId, attempt, idempotencyKey).then(
      (reply) => handOver(run, toolUseId, () => settle(run, toolUseId, reply)),
      (e) => handOver(run, toolUseId, () => settle(run, toolUseId, { kind: 'wrapper_failed', content: describeThrown(e) })),
    )
  }
}

/** The run's map of what each failed call threw (made by its first failure). */
function causeOf(run) {
  return (run.causes ??= new Map())
}

/** Settles a call with its reply (an output turned into one here). Never throws. */
function settle(run, toolUseId, reply) {
  try {
    if (reply.kind === null) {
      try {
        reply = replyOf(run, toolUseId, reply.content)
      } catch (e) {
        // An output that throws when looked at (a Proxy, a getter).
        causeOf(run).set(toolUseId, e)
        reply = { kind: 'wrapper_failed', content: describeThrown(e) }
      }
    }
    run.control.settle(toolUseId, reply.kind, reply.content)
  } catch {
    // Only something thrown while describing a throw gets here: the call still settles.
    try {
      run.control.settle(toolUseId, 'wrapper_undescribed', '')
    } catch (e) {
      console.error('[anthropic-tool-calling] a tool call could not be settled:', e)
    }
  }
}

/**
 * One started call: resolves with its ToolReply `{ kind, content }`, or, when `execute`
 * returned, `{ kind: null, content: output }` for `replyOf` to turn into one.
 */
async function callTool(run, name, execute, standard, inputJson, toolUseId, attempt, idempotencyKey) {
  const ctx = new CallContext(toolUseId, run.context, attempt, idempotencyKey)
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
        causeOf(run).set(toolUseId, checked.issues)
        return { kind: 'invalid_input', content: describeIssues(checked.issues) }
      }
      value = checked.value
      // An input check slow enough that the engine gave up on the call meanwhile (a timeout,
      // the run's end): `execute` never starts for a call nobody waits for.
      if (wasAborted(ctx)) return { kind: 'cancelled_in_check', content: '' }
    }
    pending = run.trace === null ? execute(value, ctx) : run.trace.runTool(name, toolUseId, execute, value, ctx)
    // Held until it settles: a Promise nothing else references would otherwise be collected
    // while pending, and the call would fail at random instead of timing out (toolTimeoutMs).
    run.pending.add(pending)
    output = await pending
  } catch (thrown) {
    causeOf(run).set(toolUseId, thrown)
    if (isToolError(thrown)) {
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
  if (isToolResult(output)) {
    try {
      const json = JSON.stringify(output.blocks)
      run.outputs.set(toolUseId, output.blocks)
      return { kind: 'blocks', content: json }
    } catch (e) {
      causeOf(run).set(toolUseId, e)
      return { kind: 'unserializable_blocks', content: `${e.message}` }
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
    causeOf(run).set(toolUseId, e)
    return { kind: 'unserializable_value', content: `${e.message}` }
  }
}

module.exports = { bridge, asker }
