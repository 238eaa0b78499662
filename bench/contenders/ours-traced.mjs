// This package with tracing on: the `ours` contender's runs, in a process that has registered an
// OpenTelemetry SDK as a Next.js app with @vercel/otel has one: a BasicTracerProvider whose
// BatchSpanProcessor (its defaults: batches of 512, a queue of 2048, a 5 s timer) hands the spans
// to an exporter, and the AsyncLocalStorage context manager. So every run makes its spans
// (`invoke_agent`, a `chat {model}` per request, an `execute_tool {name}` per call), and the
// figures are what that costs beside `ours`.
//
// The exporter sends nothing anywhere: it checks each span and forgets it. What a real exporter
// costs (OTLP: encoding, a request per batch) is the app's choice, the same whatever made the
// spans, and is not measured here; this one costs about what the SDK's InMemorySpanExporter does
// (a loop over the batch), without keeping every span of the measurement.
//
// Every run must have made its spans: at the end (`finish`, after the measured window) each
// completed run must have exactly one trace of 1 invoke_agent, (rounds + 1) chat and
// (rounds × calls per round) execute_tool spans, the others children of its invoke_agent. A
// package that made no spans (it did not find the API the provider is registered on, or did not
// see the provider) fails the measurement there.
import { createRequire } from 'node:module'
import { realpathSync } from 'node:fs'
import path from 'node:path'
import { MODEL } from '../workloads.mjs'
import { setup as setupOurs } from './ours.mjs'

// Loaded with require, as the package loads `@opentelemetry/api`: one module instance for both.
const require = createRequire(import.meta.url)
const { trace, context } = require('@opentelemetry/api')
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base')
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks')

/** SUCCESS in @opentelemetry/core's ExportResultCode. */
const SUCCESS = 0

/** The spans of one run, as they are exported (children end, and are exported, before their parent). */
class Tally {
  constructor(workload) {
    this.chats = workload.rounds + 1
    this.calls = workload.rounds * workload.callsPerRound
    this.toolNames = new Set(workload.tools.map((t) => `execute_tool ${t.name}`))
    /** traceId → { agent: spanId | null, chats, calls, parents: the children's parent span ids }, until complete. */
    this.open = new Map()
    this.complete = 0
    this.spans = 0
    this.firstProblem = null
  }

  add(span) {
    this.spans++
    const traceId = span.spanContext().traceId
    let t = this.open.get(traceId)
    if (t === undefined) {
      t = { agent: null, chats: 0, calls: 0, parents: [] }
      this.open.set(traceId, t)
    }
    if (span.name === 'invoke_agent') {
      if (t.agent !== null) this.problem('a trace with two invoke_agent spans')
      t.agent = span.spanContext().spanId
    } else {
      if (span.name === `chat ${MODEL}`) t.chats++
      else if (this.toolNames.has(span.name)) t.calls++
      else this.problem(`an unexpected span: ${span.name}`)
      t.parents.push(span.parentSpanContext?.spanId)
    }
    if (t.agent !== null && t.chats === this.chats && t.calls === this.calls) {
      if (t.parents.some((p) => p !== t.agent)) this.problem('a chat or execute_tool span that is not a child of its run\'s invoke_agent')
      this.open.delete(traceId)
      this.complete++
    }
  }

  problem(why) {
    this.firstProblem ??= why
  }
}

export async function setup(config) {
  const { workload } = config
  const tally = new Tally(workload)
  const exporter = {
    export(spans, done) {
      for (let i = 0; i < spans.length; i++) tally.add(spans[i])
      done({ code: SUCCESS })
    },
    shutdown: async () => {},
    forceFlush: async () => {},
  }
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] })
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(provider)

  // The same runs as `ours`: only the process around them differs.
  const ours = await setupOurs(config)
  const { info } = ours
  // Which copy of the API the package finds, beside the one registered on here: the same file
  // when the package is the bench's copy (bench/preconditions.mjs links it to bench/node_modules).
  const registered = realpathSync(require.resolve('@opentelemetry/api'))
  let found = null
  try {
    found = realpathSync(createRequire(path.join(info.dir, 'lib', 'telemetry.js')).resolve('@opentelemetry/api'))
  } catch {}
  info.tracing = { api: registered, packageApi: found, sameApi: found === registered, spansPerRun: 1 + tally.chats + tally.calls }

  return {
    info,
    run: ours.run,
    async finish({ runs }) {
      await provider.forceFlush()
      Object.assign(info.tracing, { spans: tally.spans, traces: tally.complete, incomplete: tally.open.size })
      if (found === null) return 'the package finds no @opentelemetry/api: it made no spans'
      if (tally.firstProblem) return `spans: ${tally.firstProblem}`
      if (tally.complete !== runs || tally.open.size > 0) {
        return `spans: ${tally.complete} complete traces for ${runs} runs (${tally.spans} spans, ${info.tracing.spansPerRun} a run expected; ${tally.open.size} traces incomplete)`
      }
      return null
    },
  }
}
