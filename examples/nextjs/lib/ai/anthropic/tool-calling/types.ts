// What the server action hands to the page: plain, serialisable data, and only what a user may see.
import type { AIErrorCode } from 'anthropic-tool-calling'

export type OnToolError = 'stop' | 'continue'

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** One tool call as the page shows it. */
export interface ToolCallView {
  toolName: string
  input: JsonValue
  output: JsonValue
  isError: boolean
  /** The user declined it (an answer, not a failure): it never ran. */
  declined?: boolean
  /**
   * For a failed call: a line the user may read. Never the call's `error` (the developer's text:
   * what the tool threw, perhaps internal), which stays in the server log.
   */
  failure?: string
}

export interface AskError {
  code: AIErrorCode
  /** Written for the user of the app, not the developer (who gets the full error in the server log). */
  message: string
  /** Seconds, with `rate_limited`. */
  retryAfter?: number
}

/** A call waiting for the user's yes (a tool registered with `needsApproval`). */
export interface PendingApprovalView {
  /** Signed by the server (HMAC over the call and its conversation); posted back with the decision. */
  approvalId: string
  toolName: string
  input: JsonValue
  /** What the page asks, e.g. "Start a return for order 1234?" */
  question: string
}

export type AskResult =
  | { ok: true; answer: string; toolCalls: ToolCallView[] }
  | { ok: false; error: AskError; toolCalls: ToolCallView[] }
  | {
      ok: 'approval_required'
      /**
       * The conversation, a thread of the store (lib/store.ts). The answer posts this id back with
       * the approval ids and the decision; the paused history never leaves the server.
       */
      conversationId: string
      pendingApprovals: PendingApprovalView[]
      toolCalls: ToolCallView[]
    }

/** The state of the form: the last question asked and its result. */
export interface AskState {
  question: string
  onToolError: OnToolError
  result: AskResult
}
