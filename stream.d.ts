// Types of stream.js: the streamed parts, ToolStream and its Responses, and the UI messages that
// `useChat` posts (declared here, so users need not install `ai`). To be merged into index.d.ts.

import type { AIError, MessageParam, RunResult, ToolCall, Usage } from './index'

/** One event of a streamed run (contract §8). */
export type StreamPart =
  | { type: 'start-step'; step: number }
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
  | { type: 'finish'; result: RunResult }

/** A call waiting for the user's decision (contract §9). */
export interface PendingApproval {
  approvalId: string
  toolUseId: string
  toolName: string
  input: unknown
}

/** The user's answer to an approval request, for the `approvals` option. */
export type ApprovalDecision = { approvalId: string; approved: true } | { approvalId: string; approved: false; reason?: string }

/** `init` of `toUIMessageStreamResponse`. */
export interface UIMessageStreamResponseInit extends ResponseInit {
  /** The text of the `error` chunk the browser gets. Default: a fixed user-safe sentence per error code. */
  onError?: (error: AIError) => string
  /** Sent in the `start` chunk; `useChat` gives the assistant message this id. */
  messageId?: string
  /** Send the model's reasoning. Default `true`. */
  sendReasoning?: boolean
}

/**
 * The parts of a streamed run. Read once: by iterating, or by one `to…Response()`; a second
 * reader gets a `TypeError`. Unread parts are buffered; the run goes on either way.
 */
export declare class ToolStream implements AsyncIterable<StreamPart> {
  /** Made by `streamWithTools`. `onCancel` is called when a Response body from it is cancelled. */
  constructor(
    executor: (push: (parts: StreamPart[]) => void, end: (result: RunResult) => void) => void,
    options?: { onCancel?: (reason: unknown) => void },
  )
  /** The RunResult `runWithTools` would have resolved with. Never rejects. */
  readonly result: Promise<RunResult>
  /** Never throws once started; the last part is `{ type: "finish", result }`. A `break` stops buffering, not the run. */
  [Symbol.asyncIterator](): AsyncIterator<StreamPart>
  /**
   * SSE in the AI SDK UI message stream protocol (`x-vercel-ai-ui-message-stream: v1`), for `useChat`.
   * `init.headers` are merged over the protocol's headers.
   */
  toUIMessageStreamResponse(init?: UIMessageStreamResponseInit): Response
  /** `text/plain; charset=utf-8`: the reply text as it comes. */
  toTextStreamResponse(init?: ResponseInit): Response
}

/** The producer's side of a new ToolStream (for the binding; not part of the user API). */
export declare function createPartStream(options?: { onCancel?: (reason: unknown) => void }): {
  stream: ToolStream
  /** Adds a batch of parts. */
  push(parts: StreamPart[]): void
  /** Adds `{ type: "finish", result }` and resolves `stream.result`. */
  end(result: RunResult): void
}

/** The headers of a UI message stream Response (as the AI SDK sends them). */
export declare const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>>
/** The `errorText` sent to the browser per error code when there is no `onError`. */
export declare const USER_ERROR_TEXT: Readonly<Record<AIError['code'] | 'output_truncated', string>>

// --- UI messages (the AI SDK's shapes, as `useChat` posts them) ----------------------------------

export interface UIMessage {
  id: string
  role: 'system' | 'user' | 'assistant'
  metadata?: unknown
  parts: UIMessagePart[]
}

export type UIMessagePart =
  | TextUIPart
  | ReasoningUIPart
  | StepStartUIPart
  | ToolUIPart
  | DynamicToolUIPart
  | FileUIPart
  | SourceUrlUIPart
  | SourceDocumentUIPart
  | DataUIPart
  | { type: 'custom'; kind: string; [field: string]: unknown }
  | { type: 'reasoning-file'; mediaType: string; url: string; [field: string]: unknown }
  | { type: 'steering-message'; id: string; parts: Array<TextUIPart | FileUIPart> }

export interface TextUIPart {
  type: 'text'
  text: string
  state?: 'streaming' | 'done'
  [field: string]: unknown
}
export interface ReasoningUIPart {
  type: 'reasoning'
  id?: string
  text: string
  state?: 'streaming' | 'done'
  [field: string]: unknown
}
export interface StepStartUIPart {
  type: 'step-start'
}
export interface FileUIPart {
  type: 'file'
  mediaType: string
  filename?: string
  /** A `data:` URL or an http(s) URL. */
  url: string
  [field: string]: unknown
}
export interface SourceUrlUIPart {
  type: 'source-url'
  sourceId: string
  url: string
  title?: string
  [field: string]: unknown
}
export interface SourceDocumentUIPart {
  type: 'source-document'
  sourceId: string
  mediaType: string
  title: string
  filename?: string
  [field: string]: unknown
}
export interface DataUIPart {
  type: `data-${string}`
  id?: string
  data: unknown
}

export interface ToolApproval {
  id: string
  approved?: boolean
  reason?: string
  [field: string]: unknown
}

/** The state of a tool call in a UI message. */
export type UIToolInvocation = {
  toolCallId: string
  title?: string
  providerExecuted?: boolean
  [field: string]: unknown
} & (
  | { state: 'input-streaming'; input?: unknown; rawInput?: string }
  | { state: 'input-available'; input: unknown }
  | { state: 'approval-requested'; input: unknown; approval: ToolApproval }
  | { state: 'approval-responded'; input: unknown; approval: ToolApproval & { approved: boolean } }
  | { state: 'output-available'; input: unknown; output: unknown; preliminary?: boolean; approval?: ToolApproval }
  | { state: 'output-error'; input: unknown; errorText: string; approval?: ToolApproval }
  | { state: 'output-denied'; input: unknown; approval: ToolApproval & { approved: false } }
)

/** A call of a tool known by name: `type` is `tool-<name>`. */
export type ToolUIPart<NAME extends string = string> = { type: `tool-${NAME}` } & UIToolInvocation
/** A call of a tool the page does not know by type. */
export type DynamicToolUIPart = { type: 'dynamic-tool'; toolName: string } & UIToolInvocation

/**
 * The `messages` that `useChat` posts, as Messages API params (pass them as the `prompt`).
 * Each step of an assistant message becomes an assistant turn with its text and `tool_use`
 * blocks, followed by a user message with their `tool_result`s. Left out: reasoning (no
 * signature to send back), calls without a result, display-only parts (sources, data, custom),
 * assistant files, empty text, and assistant messages before the first user message.
 * The array also carries (non-enumerable, so not in its JSON):
 * - `system`: the text of the `system` messages, joined by a blank line (undefined without any);
 * - `approvals`: the user's answers in the last message, for the `approvals` option.
 * Throws a `TypeError` naming the message and part for input that is not UI messages.
 */
export declare function fromUIMessages(
  uiMessages: ReadonlyArray<UIMessage | Omit<UIMessage, 'id'>>,
): MessageParam[] & { readonly system: string | undefined; readonly approvals: ApprovalDecision[] }
