// Types of anthropic-tool-calling/testing: the strict stand-in of the Messages API for your own
// tests, and the helpers that script what its model says.

import type { ContentBlockParam, MessageParam, StopReason, ToolChoice } from '../../index'

/** A content block of a scripted reply (the stand-in sends it as the model's). */
export type ReplyBlock =
  | { type: 'text'; text: string; [field: string]: unknown }
  | { type: 'tool_use'; id?: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: string; [field: string]: unknown }

/** What the stand-in answers one request with; built by the helpers of this module. */
export interface Reply {
  readonly kind: 'message' | 'error' | 'cut' | 'slow'
}

/** A reply, or content for a message reply: a string (one text block), a block, a list of blocks. */
export type ReplyLike = Reply | string | ReplyBlock | ReadonlyArray<ReplyBlock | string>

/** A request as the stand-in received it: its parsed JSON body. */
export interface StandInRequest {
  model: string
  max_tokens: number
  messages: MessageParam[]
  system?: string | ContentBlockParam[]
  tools?: Array<{ name: string; description?: string; input_schema?: Record<string, unknown>; type?: string; [field: string]: unknown }>
  tool_choice?: ToolChoice
  stream?: boolean
  [field: string]: unknown
}

export interface StandInOptions {
  /**
   * What the model says: a list (one reply a request, in order; a request the stand-in refuses
   * uses none, a retry uses the next) or a function called with each valid request as the model
   * reads it (over Threads, with the conversation the thread holds). Without it, a
   * default model calls the offered tools the latest prompt names (as a word of its own; with the
   * first JSON object in the prompt as input when it fits the tool's schema), honouring
   * `tool_choice`, then says what each returned.
   */
  replies?: ReadonlyArray<ReplyLike> | ((request: StandInRequest) => ReplyLike | Promise<ReplyLike>)
  /** The key it accepts (8 characters or more). Default: a random `sk-ant-test-…`. */
  apiKey?: string
  /** Default 0: any free port. */
  port?: number
  /** Default `127.0.0.1`. */
  host?: string
}

export interface StandIn {
  /** Pass it as `baseURL`. */
  readonly url: string
  /** Pass it as `apiKey`; any other key gets the API's 401. */
  readonly apiKey: string
  /**
   * The parsed body of every request received so far, in order, as sent (null for one that was not
   * JSON). Over the API's Threads (`apiThreads`, on by default) a request after a run's first
   * carries only the messages after the previous reply.
   */
  readonly requests: ReadonlyArray<StandInRequest | null>
  /** Stops the server and drops its connections (a hanging or slow reply included). */
  close(): Promise<void>
}

/**
 * Starts the strict stand-in of the Messages API on 127.0.0.1 (the server the package's own tests
 * use): a request the real API would refuse gets the API's own 4xx. Sets nothing global: pass
 * `url` and `apiKey` to the run. Rejects with a `TypeError` for bad options or replies.
 */
export declare function startStandIn(options?: StandInOptions): Promise<StandIn>

/** A text block (non-empty, as the API sends them). */
export declare function text(s: string): { type: 'text'; text: string }
/** A tool_use block; without `id`, a fresh `toolu_…` each time it is sent. */
export declare function toolUse(name: string, input?: Record<string, unknown>, id?: string): { type: 'tool_use'; id?: string; name: string; input: Record<string, unknown> }
/** A thinking block, signed by the stand-in when sent so it comes back valid. */
export declare function thinking(s: string): { type: 'thinking'; thinking: string }
/** A message reply; `stopReason` defaults to `tool_use` when it calls a tool, else `end_turn`. */
export declare function message(blocks: string | ReplyBlock | ReadonlyArray<ReplyBlock | string>, stopReason?: StopReason): Reply
/** A turn the API paused (`pause_turn`): the run sends it back and the next reply continues it. */
export declare function pauseTurn(blocks?: ReadonlyArray<ReplyBlock | string>): Reply
/** HTTP 429 with `retry-after` (seconds): the run retries after it, or ends `rate_limited` with `retryAfter`. */
export declare function rateLimited(retryAfterSeconds: number): Reply
/** HTTP 529 overloaded_error: retried, then `overloaded`. */
export declare function overloaded(): Reply
/** HTTP 500 api_error: retried, then `unknown_error`. */
export declare function serverError(): Reply
/** The reply with its connection cut mid-way (a stream before its end, a JSON body half sent): retried, then `network_error`. */
export declare function cutStream(reply: ReplyLike): Reply
/** The reply after `ms` of silence: with a smaller `timeoutMs` the attempt times out (`network_error`). */
export declare function slow(ms: number, reply: ReplyLike): Reply
