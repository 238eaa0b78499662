'use strict'
// One run from start to end: its options read, its record kept while it runs, the engine started
// on the run channel, each batch of parts handled, and the result completed with what stayed in
// JS (the values tools returned, what they threw, the lazy history).

const { AsyncResource } = require('node:async_hooks')
const binding = require('../binding.js')
const { readOptions, internalFailure } = require('./options.js')
const { runs, nextRunId } = require('./runs.js')
const { abortCall } = require('./call-context.js')
const { channel, ended, notWaiting, lazyJson } = require('./run-channel.js')

// Loaded by the first run that needs them: a structured `output`, tracing (whose first run
// looks for `@opentelemetry/api`).
let outputs, tracing
const checkOutput = (...args) => (outputs ??= require('./output.js')).checkOutput(...args)
const traceRun = (...args) => (tracing ??= require('./telemetry.js')).traceRun(...args)
// And by the first run with a hook.
let hooks
const callHook = (...args) => (hooks ??= require('./hooks.js')).callHook(...args)

/**
 * Successful calls come back from the engine with output null: put back the very value each
 * tool returned.
 */
function putBackOutputs(run, calls) {
  for (const call of calls) if (!call.isError && run.outputs.has(call.toolUseId)) call.output = run.outputs.get(call.toolUseId)
}

/**
 * A batch of parts from the engine: a traced run's trace parts become spans, successful
 * outputs are put back (they cross as null), the hooks are told, and a stream gets them.
 */
function onParts(parts, run, streaming) {
  if (run.trace !== null && run.trace.recording) parts = run.trace.take(parts)
  let told = false
  for (const part of parts) {
    if (part.type === 'tool-call') {
      if (run.inputs === null) run.inputs = new Map()
      run.inputs.set(part.toolUseId, part.input)
    } else if (part.type === 'tool-start') {
      // A call the engine runs itself (an MCP server's tool) is about to start: what a JS tool's
      // wrapper tells right before execute. Not a StreamPart.
      told = true
      if (run.hooks !== null) callHook(run.hooks, 'onToolCall', { toolName: part.toolName, input: run.inputs?.get(part.toolUseId), toolUseId: part.toolUseId })
    } else if (part.type === 'tool-result') {
      // null for a JS tool's success (put back here); an MCP tool's output comes as it is.
      if (!part.isError && run.outputs.has(part.toolUseId)) part.output = run.outputs.get(part.toolUseId)
      if (run.hooks !== null) {
        const call = { toolName: part.toolName, input: run.inputs?.get(part.toolUseId), output: part.isError ? null : part.output, durationMs: part.durationMs, toolUseId: part.toolUseId }
        if (part.isError) Object.assign(call, { isError: true, error: part.error })
        callHook(run.hooks, 'onToolResult', call)
      }
    } else if (part.type === 'finish-step') {
      putBackOutputs(run, part.toolCalls)
      if (run.hooks !== null) callHook(run.hooks, 'onStepFinish', { step: part.step, stopReason: part.stopReason, usage: part.usage, toolCalls: part.toolCalls })
    }
  }
  if (told) parts = parts.filter((part) => part.type !== 'tool-start')
  if (streaming !== null && parts.length > 0) streaming.push(parts)
}

/**
 * Starts a run and resolves with its RunResult; never rejects. `streaming` is null for
 * `runWithTools`; for `streamWithTools` it is `{ push, control }`: `push(parts)` gets each batch
 * of parts, and `control` is set here to the run's RunControl (a cancelled Response aborts it).
 */
async function startRun(prompt, options, streaming, resume) {
  try {
    const read = readOptions(prompt, options, resume !== undefined)
    if (read.error) return read
    const { signal, context, hooks, timed, output, telemetry } = read
    let request = read.request
    if (resume !== undefined) {
      // resumeRun: the engine takes the run over from its log; only the store and the secrets go.
      const { options: given, env } = JSON.parse(request)
      request = JSON.stringify({ resume: resume.runId, recovering: resume.recovering, options: given, env })
    }
    const runId = nextRunId()
    const control = new binding.RunControl()
    const trace = traceRun(telemetry, read.model, read.provider)
    // Trace parts only for a trace that records (a sampled-out run keeps just its context).
    const traced = trace !== null && trace.recording
    // The engine calls a tool from where the tool was registered (the first request that
    // imported it, in Next.js): its calls run in this run's async context instead — the span,
    // and every AsyncLocalStorage of the request that started the run (a request's cookies).
    // What `AsyncLocalStorage.snapshot()` makes, without the bound function it wraps the
    // resource in (with its deprecated `asyncResource` accessors: ~15% of an untraced run's
    // main-thread time); its calls go through `scope.runInAsyncScope`.
    const scope = new AsyncResource('bound-anonymous-fn')
    const run = { context, control, hooks, timed, trace, scope, calls: new Map(), causes: null, pending: new Set(), outputs: new Map(), inputs: null }
    runs.set(runId, run)
    const onAbort = () => control.abort()
    if (signal) {
      signal.addEventListener('abort', onAbort, { once: true })
      if (signal.aborted) control.abort()
    }
    let final
    try {
      let pending
      let lastBatch = null
      if (streaming === null && hooks === null && !traced) {
        pending = ended(runId)
        channel.start(request, runId, control, read.credentials)
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
        channel.startWithParts({ requestJson: request, runId, control, onParts: batch, stream: streaming !== null, traced, traceOnly: streaming === null && hooks === null, credentials: read.credentials ?? undefined })
      }
      const reply = await pending
      if (lastBatch !== null) await lastBatch
      // Everything of the run is in: the event loop need not stay open for it any more.
      notWaiting(runId)
      const result = JSON.parse(reply.result)
      const calls = result.data ? result.data.toolCalls : result.error.toolCalls
      if (calls) putBackOutputs(run, calls)
      if (result.data) lazyJson(result.data, 'messages', reply.messages)
      const error = result.error
      if (error && error.toolUseId !== undefined) {
        if (run.causes?.has(error.toolUseId)) error.cause = run.causes.get(error.toolUseId)
        delete error.toolUseId
      }
      final = output === null ? result : await checkOutput(result, output, signal)
      return final
    } finally {
      if (trace !== null) trace.end(final)
      notWaiting(runId)
      if (signal) signal.removeEventListener('abort', onAbort)
      for (const call of run.calls.values()) abortCall(call, new DOMException('The run ended.', 'AbortError'))
      runs.delete(runId)
    }
  } catch (e) {
    return internalFailure(e)
  }
}

module.exports = { startRun }
