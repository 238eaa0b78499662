// Types of part-stream.js: the streamed parts and ToolStream with its Responses. index.d.ts
// re-exports the public ones.

import type { RunResult, ToolCall, Usage } from '../../index'
import type { UIMessageStreamResponseInit } from './ui-chunker'

/** One event of a streamed run; `O` is the type of the final result's `data.output`. */
export type StreamPart<O = never> =
  | { type: 'start-step'; step: number; /** A run with a store: its id (`data.runId`), from the first part on. */ runId?: string }
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-input-start'; toolUseId: string; toolName: string }
  /** Partial JSON, as the model writes it. */
  | { type: 'tool-input-delta'; toolUseId: string; delta: string }
  /** Before `execute`. */
  | { type: 'tool-call'; toolUseId: string; toolName: string; input: unknown }
  /** `output` is what the model was sent (for a failure, the text written for the model); `error` is the developer's. */
  | { type: 'tool-result'; toolUseId: string; toolName: string; output: unknown; isError?: boolean; error?: string; durationMs: number; /** The person declined it (`needsApproval`). */ declined?: true }
  | { type: 'finish-step'; step: number; stopReason: string; usage: Usage; toolCalls: ToolCall[] }
  /** Always the last part. */
  | { type: 'finish'; result: RunResult<O> }

/**
 * The parts of a streamed run. Read once: by iterating, or by one `to…Response()`; a second
 * reader gets a `TypeError`. Unread parts are buffered; the run goes on either way.
 */
export declare class ToolStream<O = never> implements AsyncIterable<StreamPart<O>> {
  /** Made by `streamWithTools`. `onCancel` is called when a Response body from it is cancelled. */
  constructor(
    executor: (push: (parts: StreamPart<O>[]) => void, end: (result: RunResult<O>) => void) => void,
    options?: { onCancel?: (reason: unknown) => void },
  )
  /** The RunResult `runWithTools` would have resolved with. Never rejects. */
  readonly result: Promise<RunResult<O>>
  /** Never throws once started; the last part is `{ type: "finish", result }`. A `break` stops buffering, not the run. */
  [Symbol.asyncIterator](): AsyncIterator<StreamPart<O>>
  /**
   * SSE in the AI SDK UI message stream protocol (`x-vercel-ai-ui-message-stream: v1`), for `useChat`.
   * `init.headers` are merged over the protocol's headers.
   */
  toUIMessageStreamResponse(init?: UIMessageStreamResponseInit): Response
  /** `text/plain; charset=utf-8`: the reply text as it comes. */
  toTextStreamResponse(init?: ResponseInit): Response
}

/** The producer's side of a new ToolStream (what `streamWithTools` uses; not part of the user API). */
export declare function createPartStream(options?: { onCancel?: (reason: unknown) => void }): {
  stream: ToolStream
  /** Adds a batch of parts. */
  push(parts: StreamPart[]): void
  /** Adds `{ type: "finish", result }` and resolves `stream.result`. */
  end(result: RunResult): void
}
