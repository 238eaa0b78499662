// Types of ui-messages.js: the UI messages that `useChat` posts, in the AI SDK's shapes (declared
// here, so users need not install `ai`), and fromUIMessages. index.d.ts re-exports them.

import type { ApprovalDecision, MessageParam } from '../index'

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
 * assistant files, empty text, and assistant messages before the first user message; and the
 * `citations` of text blocks in tool outputs (`toolResult` blocks), which API version 2026-10-21
 * refuses in the user message a tool result goes in (the text stays).
 * The array also carries (non-enumerable, so not in its JSON):
 * - `system`: the text of the `system` messages, joined by a blank line (undefined without any);
 * - `approvals`: the user's answers in the last message, for the `approvals` option.
 * Throws a `TypeError` naming the message and part for input that is not UI messages.
 */
export declare function fromUIMessages(
  uiMessages: ReadonlyArray<UIMessage | Omit<UIMessage, 'id'>>,
): MessageParam[] & { readonly system: string | undefined; readonly approvals: ApprovalDecision[] }
