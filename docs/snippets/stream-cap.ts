import { streamWithTools, type MessageParam } from "anthropic-tool-calling";

// For a host that neither fires req.signal nor cancels the body when the client goes away.
export function cappedStream(req: Request, prompt: MessageParam[]) {
  return streamWithTools(prompt, {
    signal: AbortSignal.any([req.signal, AbortSignal.timeout(60_000)]),
    maxToolIterations: 5,
  });
}
