// Next.js calls register() once when a server starts. It takes over the runs a server that died
// left behind (lib/recover-runs.ts), and registers OpenTelemetry with
// @vercel/otel: Next.js then traces each request, and anthropic-tool-calling (which finds the same
// @opentelemetry/api in node_modules) adds its invoke_agent, chat and execute_tool spans under it.
//
// Where spans go, each only when asked for:
//   OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)   to a collector, over OTLP
//   OTEL_TRACES_CONSOLE=1                                                 printed to the server log
//   OTEL_SPANS_FILE=/path                                                 one JSON line each (for the tests)
// With none of them set, tracing is not registered at all: no spans are made, nothing is printed.
import { ConsoleSpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { registerOTel } from '@vercel/otel'

export async function register() {
  const env = process.env
  // Runs a crash or a deploy left behind are finished here (lib/recover-runs.ts). Node.js only:
  // the package is a native addon.
  if (env.NEXT_RUNTIME === 'nodejs') {
    const { recoverExpiredRuns } = await import('./lib/recover-runs')
    recoverExpiredRuns()
  }
  const processors: ('auto' | SpanProcessor)[] = []
  // @vercel/otel's own export: OTLP from the standard variables, or Vercel's collector when
  // deployed there. Not by default: without an endpoint it would post to localhost:4318.
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.VERCEL) processors.push('auto')
  if (env.OTEL_TRACES_CONSOLE === '1') processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()))
  // Node.js only: the file exporter writes with node:fs.
  if (env.OTEL_SPANS_FILE && env.NEXT_RUNTIME === 'nodejs') {
    const { FileSpanExporter } = await import('./lib/otel-file-exporter')
    processors.push(new SimpleSpanProcessor(new FileSpanExporter(env.OTEL_SPANS_FILE)))
  }
  if (processors.length === 0) return
  registerOTel({ serviceName: 'anthropic-tool-calling-nextjs-example', spanProcessors: processors })
}
