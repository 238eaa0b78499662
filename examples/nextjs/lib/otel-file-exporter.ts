// FOR TESTS: the browser tests (e2e/nextjs.test.mjs) set OTEL_SPANS_FILE and read back the spans
// of the requests they make. Each finished span is appended to that file as one line of JSON.
// A real app exports to a collector instead (OTEL_EXPORTER_OTLP_ENDPOINT): see instrumentation.ts.
import { appendFileSync } from 'node:fs'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base'

/** What `export` reports back (the type lives in @opentelemetry/core, not a dependency here). */
type Done = Parameters<SpanExporter['export']>[1]

/** Milliseconds since the epoch, from the SDK's [seconds, nanoseconds]. */
const ms = ([s, ns]: [number, number]) => s * 1e3 + ns / 1e6

export class FileSpanExporter implements SpanExporter {
  constructor(private readonly file: string) {}

  export(spans: ReadableSpan[], done: Done): void {
    try {
      const lines = spans.map((span) =>
        JSON.stringify({
          name: span.name,
          scope: span.instrumentationScope.name,
          traceId: span.spanContext().traceId,
          spanId: span.spanContext().spanId,
          parentSpanId: span.parentSpanContext?.spanId ?? null,
          kind: span.kind,
          attributes: span.attributes,
          status: span.status,
          startTime: ms(span.startTime),
          endTime: ms(span.endTime),
        }),
      )
      // One write per batch: the test reads the file while the server is still writing to it.
      appendFileSync(this.file, lines.map((line) => line + '\n').join(''))
      done({ code: 0 }) // ExportResultCode.SUCCESS
    } catch (error) {
      done({ code: 1, error: error as Error }) // ExportResultCode.FAILED
    }
  }

  async shutdown(): Promise<void> {}
}
