// Plain Node.js: the OpenTelemetry SDK itself, printing each span to the console.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { runWithTools } from "anthropic-tool-calling";

// Once, at start-up, before the first run.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
trace.setGlobalTracerProvider(provider);

const { data } = await runWithTools("What's the status of order #4821?"); // invoke_agent, chat …, execute_tool …
console.log(data?.text);
await provider.shutdown(); // flushes the spans
