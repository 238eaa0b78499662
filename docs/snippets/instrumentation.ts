// instrumentation.ts (Next.js ≥ 15: no config flag needed)
import { registerOTel } from "@vercel/otel";

export function register() {
  // OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (and on Vercel). With no endpoint set,
  // @vercel/otel still posts to localhost:4318.
  registerOTel({ serviceName: "my-app" });
}
