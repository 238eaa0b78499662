'use strict'
// A run's OpenTelemetry spans, named and attributed as the GenAI semantic conventions v1.41
// say: `invoke_agent` for the run, under it `chat {model}` for each request to the API (its
// retries included) and `execute_tool {name}` for each tool call. `@opentelemetry/api` is an
// optional peer: without it, without a registered tracer provider (or with a sampler that drops
// the run), or with `telemetry: false`, nothing here runs beyond one check per run.
//
// The engine times each request on its own threads and sends the times with the run's other
// parts (`trace-request`, `trace-call`); the spans are made here, with those times. The
// engine's clock is tied to this thread's `performance.now()` once, at load; each run ties that
// to the wall clock as the SDK does for each span (`Date.now()` at its start, then the
// performance clock), so the spans of one run keep their exact order and sit with the app's.

const binding = require('../binding.js')
const { version } = require('../package.json')

/** `performance.now()` minus the engine's clock: the same monotonic clock, read from here. */
const ENGINE_TO_PERF = (() => {
  const before = performance.now()
  const engine = binding.traceClockMs()
  return (before + performance.now()) / 2 - engine
})()

/** Where this library names what a tool call came to (`ok`, `declined`, `not_run_limit` …). */
const OUTCOME = 'anthropic_tool_calling.tool.outcome'

/** A request's sampling settings in a trace part, and their attributes. */
const SETTINGS = [
  ['temperature', 'gen_ai.request.temperature'],
  ['topP', 'gen_ai.request.top_p'],
  ['topK', 'gen_ai.request.top_k'],
  ['stopSequences', 'gen_ai.request.stop_sequences'],
]

/** `@opentelemetry/api`, looked for once per thread; null when not installed. */
let otel
function api() {
  if (otel === undefined) {
    try {
      otel = require('@opentelemetry/api')
    } catch {
      otel = null
    }
  }
  return otel
}

/** The model a run asks for, as the engine picks it (a bad `model` fails the run anyway). */
function modelOf(model) {
  return typeof model === 'string' && model !== '' ? model.slice(0, 256) : process.env.ANTHROPIC_MODEL || binding.DEFAULT_MODEL
}

/**
 * `gen_ai.provider.name` of a run on `provider` (the option as given), as the official clients
 * report it: `aws.bedrock` on Bedrock, `gcp.vertex_ai` on Vertex AI, else `anthropic` (the
 * platforms that run Anthropic's own API included).
 */
function providerName(provider) {
  const type = typeof provider === 'string' ? provider : provider !== null && typeof provider === 'object' ? provider.type : undefined
  if (type === 'bedrock') return 'aws.bedrock'
  if (type === 'vertex') return 'gcp.vertex_ai'
  return 'anthropic'
}

/**
 * The trace of a run about to start, with its `invoke_agent` span a child of the span active
 * now; null when it is not traced (`telemetry: false`, no API, no provider). A run a sampler
 * drops gets a trace that only keeps the context, so the spans its tools make are dropped with
 * it rather than starting traces of their own. `recordContent` as the option says (the engine
 * checks the option; a bad one fails the run before anything is recorded). `model` is the option
 * as given.
 */
function traceRun(telemetry, model, provider) {
  if (telemetry === false) return null
  const otel = api()
  if (otel === null) return null
  try {
    // Asked for at each run, not kept: a tracer kept from the API's proxy stays with the first
    // provider it found, after that one is replaced or disabled.
    const parent = otel.context.active()
    const tracer = tracerFor(otel, parent)
    if (tracer === null) return null
    const clock = new RunClock()
    // The model at the span's start, for samplers (the engine's requests say it again).
    const providerNamed = providerName(provider)
    const attributes = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.provider.name': providerNamed, 'gen_ai.request.model': modelOf(model) }
    const span = tracer.startSpan('invoke_agent', { kind: otel.SpanKind.INTERNAL, startTime: clock.now(), attributes }, parent)
    if (!otel.trace.isSpanContextValid(span.spanContext())) return null
    const content = telemetry !== null && typeof telemetry === 'object' && telemetry.recordContent === true
    return new RunTrace(otel, tracer, span, otel.trace.setSpan(parent, span), clock, content, providerNamed)
  } catch (e) {
    report(e)
    return null
  }
}

/**
 * This package's tracer, or null when the run's span could only be an invalid one: no tracer
 * provider registered (the API's proxy has no delegate, so its no-op tracer would answer) and no
 * valid span context in `parent` for that no-op span to carry. Most apps install the API without
 * a provider; their runs then make no tracer, clock or span at all.
 */
function tracerFor(otel, parent) {
  const provider = otel.trace.getTracerProvider()
  if (typeof provider.getDelegateTracer !== 'function') return otel.trace.getTracer('anthropic-tool-calling', version)
  // What the proxy's getTracer returns when a provider is registered.
  const registered = provider.getDelegateTracer('anthropic-tool-calling', version)
  if (registered !== undefined) return registered
  const carried = otel.trace.getSpanContext(parent)
  if (carried === undefined || !otel.trace.isSpanContextValid(carried)) return null
  return otel.trace.getTracer('anthropic-tool-calling', version)
}

/** The wall-clock times of one run's spans: the engine's and this thread's, on one base. */
class RunClock {
  constructor() {
    this.base = Date.now() - performance.now()
  }
  now() {
    return performance.now() + this.base
  }
  /** An engine time (ms of the engine's clock) as a wall-clock time. */
  of(engineMs) {
    return engineMs + ENGINE_TO_PERF + this.base
  }
}

/** Tracing that throws (a broken span processor) is logged, and never fails a run. */
function report(e) {
  console.error('[anthropic-tool-calling] tracing failed; the run goes on:', e)
}

class RunTrace {
  constructor(api, tracer, span, ctx, clock, content, providerName = 'anthropic') {
    this.api = api
    /** `gen_ai.provider.name` of the run's `chat` spans. */
    this.providerName = providerName
    this.tracer = tracer
    this.span = span
    this.ctx = ctx
    this.clock = clock
    this.content = content
    /** Spans are made and sent to the exporter (false: sampled out, only the context is kept). */
    this.recording = span.isRecording()
    /** toolUseId → the span of a call running in JS, until the engine says how it settled. */
    this.tools = new Map()
    /** Calls the engine said settled, and whether the run is over: no span starts for them after. */
    this.settled = new Set()
    this.closed = false
    this.first = true
    /** The last reply's stop reason, as the engine gave it (its secrets taken out). */
    this.finish = null
    /** toolUseId → when the engine handed a call to a tool it runs itself (an MCP server's), engine ms. */
    this.remote = new Map()
  }

  /** Calls `fn(...args)` with the call's `execute_tool` span active (spans the tool makes are its children). */
  runTool(toolName, toolUseId, fn, ...args) {
    if (!this.recording) return this.api.context.with(this.ctx, fn, undefined, ...args)
    // A call the engine already gave up on (a timeout while an async input check ran) or whose
    // run ended: its span was made from the engine's word, and no second one starts.
    if (this.closed || this.settled.has(toolUseId)) return fn(...args)
    let active
    try {
      const span = this.tracer.startSpan(`execute_tool ${toolName}`, { kind: this.api.SpanKind.INTERNAL, startTime: this.clock.now(), attributes: toolAttributes(toolName, toolUseId) }, this.ctx)
      this.tools.set(toolUseId, span)
      active = this.api.trace.setSpan(this.ctx, span)
    } catch (e) {
      report(e)
      return fn(...args)
    }
    return this.api.context.with(active, fn, undefined, ...args)
  }

  /** Takes the trace parts out of a batch (they are this file's, never a stream's); the rest is returned. */
  take(parts) {
    let kept = null
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]
      const type = part.type
      if (type === 'tool-start') this.remote.set(part.toolUseId, part.startedAt)
      if (type === 'trace-request' || type === 'trace-call') {
        if (kept === null) kept = parts.slice(0, i)
        try {
          if (type === 'trace-request') this.request(part)
          else this.call(part)
        } catch (e) {
          report(e)
        }
      } else if (kept !== null) {
        kept.push(part)
      }
    }
    return kept === null ? parts : kept
  }

  /** A request to the API is over: its `chat` span, from when it began to when it ended. */
  request(part) {
    if (this.first) {
      this.first = false
      this.span.setAttributes({ 'gen_ai.request.model': part.model, 'gen_ai.request.max_tokens': part.maxTokens })
      if (part.jsonOutput) this.span.setAttribute('gen_ai.output.type', 'json')
    }
    const attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.providerName,
      'gen_ai.request.model': part.model,
      'gen_ai.request.max_tokens': part.maxTokens,
    }
    for (const [key, name] of SETTINGS) if (part[key] !== undefined) attributes[name] = part[key]
    if (part.server) Object.assign(attributes, { 'server.address': part.server.address, 'server.port': part.server.port })
    if (part.jsonOutput) attributes['gen_ai.output.type'] = 'json'
    if (part.stream) attributes['gen_ai.request.stream'] = true
    const response = part.response
    if (response) {
      if (response.id !== null) attributes['gen_ai.response.id'] = response.id
      if (response.model !== null) attributes['gen_ai.response.model'] = response.model
      if (response.stopReason !== null) attributes['gen_ai.response.finish_reasons'] = [(this.finish = response.stopReason)]
      Object.assign(attributes, usageAttributes(response.usage))
    }
    const content = part.content
    if (content) {
      if (content.system !== null) attributes['gen_ai.system_instructions'] = content.system
      attributes['gen_ai.input.messages'] = content.input
      if (content.output !== null) attributes['gen_ai.output.messages'] = content.output
    }
    const span = this.tracer.startSpan(`chat ${part.model}`, { kind: this.api.SpanKind.CLIENT, startTime: this.clock.of(part.startedAt), attributes }, this.ctx)
    if (part.error) {
      span.setAttribute('error.type', part.error.code)
      if (part.error.status !== undefined) span.setAttribute('http.response.status_code', part.error.status)
      span.setStatus(this.status(part.error.message))
    }
    span.end(this.clock.of(part.endedAt))
  }

  /**
   * A tool call settled: its span (the one made when JS began it, or one made now for a call
   * the engine answered itself: unknown tool, bad input, declined, not run) gets what it came to.
   */
  call(part) {
    this.settled.add(part.toolUseId)
    const endedAt = this.clock.of(part.endedAt)
    const remote = this.remote.get(part.toolUseId)
    let span = this.tools.get(part.toolUseId)
    if (span === undefined) {
      const attributes = toolAttributes(part.toolName, part.toolUseId)
      const startTime = remote === undefined ? endedAt - part.durationMs : this.clock.of(remote)
      span = this.tracer.startSpan(`execute_tool ${part.toolName}`, { kind: this.api.SpanKind.INTERNAL, startTime, attributes }, this.ctx)
    } else {
      this.tools.delete(part.toolUseId)
    }
    if (remote !== undefined) this.mcpCall(part, span, this.clock.of(remote), endedAt)
    span.setAttribute(OUTCOME, part.outcome)
    if (part.arguments !== undefined) span.setAttribute('gen_ai.tool.call.arguments', part.arguments)
    if (part.result !== undefined) span.setAttribute('gen_ai.tool.call.result', part.result)
    if (part.failed) {
      span.setAttribute('error.type', part.outcome)
      span.setStatus({ code: this.api.SpanStatusCode.ERROR })
    }
    span.end(endedAt)
  }

  /**
   * The `tools/call` request of a call the engine sent to an MCP server itself: a CLIENT span under
   * its `execute_tool` span, over the same time (the engine's executor is that one request, with a
   * reconnect first when the session had dropped).
   */
  mcpCall(part, parent, startTime, endedAt) {
    this.remote.delete(part.toolUseId)
    const attributes = { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': part.toolName, 'gen_ai.tool.call.id': part.toolUseId }
    const ctx = this.api.trace.setSpan(this.ctx, parent)
    const span = this.tracer.startSpan(`tools/call ${part.toolName}`, { kind: this.api.SpanKind.CLIENT, startTime, attributes }, ctx)
    if (part.failed) {
      span.setAttribute('error.type', part.outcome)
      span.setStatus({ code: this.api.SpanStatusCode.ERROR })
    }
    span.end(endedAt)
  }

  /** The run is over (every part handled): its span gets the result, and ends. Never throws. */
  end(result) {
    this.closed = true
    if (!this.recording) return
    try {
      this.close(result)
    } catch (e) {
      report(e)
    }
  }

  /**
   * An ERROR status. Its message (which may quote what a tool threw, or the model's answer)
   * only when content is recorded; `error.type` always says what kind of failure it was.
   */
  status(message) {
    return this.content ? { code: this.api.SpanStatusCode.ERROR, message: String(message) } : { code: this.api.SpanStatusCode.ERROR }
  }

  close(result) {
    // A call JS began whose settling was never told (only a bug could leave one): it ends here.
    for (const span of this.tools.values()) {
      span.setAttributes({ [OUTCOME]: 'interrupted', 'error.type': 'interrupted' })
      span.setStatus({ code: this.api.SpanStatusCode.ERROR })
      span.end(this.clock.now())
    }
    this.tools.clear()
    // No result: the JS layer itself failed (the run resolves with unknown_error).
    const data = result ? result.data : null
    const error = result ? result.error : { code: 'unknown_error', message: 'The run failed inside anthropic-tool-calling.' }
    const usage = data ? data.usage : error && error.usage
    if (usage) this.span.setAttributes(usageAttributes(usage))
    // Why the model stopped last (a pause for approval is the run's, not the model's).
    if (data && this.finish !== null) {
      this.span.setAttribute('gen_ai.response.finish_reasons', [this.finish])
    } else if (error) {
      this.span.setAttribute('error.type', String(error.code))
      this.span.setStatus(this.status(error.message))
    }
    this.span.end(this.clock.now())
  }
}

function toolAttributes(toolName, toolUseId) {
  return { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': toolName, 'gen_ai.tool.call.id': toolUseId, 'gen_ai.tool.type': 'function' }
}

/** Token counts as the conventions have them: the input counts the cache's tokens too. */
function usageAttributes(u) {
  return {
    'gen_ai.usage.input_tokens': u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens,
    'gen_ai.usage.output_tokens': u.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': u.cacheReadInputTokens,
    'gen_ai.usage.cache_creation.input_tokens': u.cacheCreationInputTokens,
  }
}

module.exports = { traceRun }
