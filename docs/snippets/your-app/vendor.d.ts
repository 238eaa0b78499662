// The one function of @vercel/otel that docs/snippets/instrumentation.ts calls, declared here because
// the repository does not install @vercel/otel (its tests use the OpenTelemetry SDK itself).
declare module "@vercel/otel" {
  export function registerOTel(options: { serviceName: string }): void;
}
