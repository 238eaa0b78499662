// Types of ui-chunker.js: the options of the UI message stream Response and what it tells the
// browser. index.d.ts re-exports UIMessageStreamResponseInit.

import type { AIError } from '../../index'

/** `init` of `toUIMessageStreamResponse`. */
export interface UIMessageStreamResponseInit extends ResponseInit {
  /** The text of the `error` chunk the browser gets. Default: a fixed user-safe sentence per error code. */
  onError?: (error: AIError) => string
  /** Sent in the `start` chunk; `useChat` gives the assistant message this id. */
  messageId?: string
  /** Send the model's reasoning. Default `true`. */
  sendReasoning?: boolean
}

/** The headers of a UI message stream Response (as the AI SDK sends them). */
export declare const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>>
/** The `errorText` sent to the browser per error code when there is no `onError`. */
export declare const USER_ERROR_TEXT: Readonly<Record<AIError['code'] | 'output_truncated', string>>
