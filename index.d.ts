// The public API of anthropic-tool-calling (hand-written; binding.d.ts is generated).

/** A JSON Schema for a tool's input; its top-level `type` must be `"object"`. */
export interface InputSchema {
  type: 'object'
  properties?: Record<string, unknown>
  required?: string[]
  [keyword: string]: unknown
}

/** A tool as the Messages API sees it; sent exactly as given. */
export interface ToolDefinition {
  /** `^[a-zA-Z0-9_-]{1,128}$` */
  name: string
  description?: string
  input_schema: InputSchema
  [field: string]: unknown
}

/** What every `execute` receives besides the input. */
export interface ToolContext<C = unknown> {
  /** The id of the model's `tool_use` block. */
  toolUseId: string
  /** Aborted when the call times out (`toolTimeoutMs`), the run is aborted, or the run ends. */
  signal: AbortSignal
  /** The `context` option of the run, the very object passed. */
  context: C
}

export interface Tool<I = any, O = unknown, C = any> {
  definition: ToolDefinition
  /** Sync or async. A string result is sent as it is, anything else as its JSON (`undefined` → `null`). */
  execute: (input: I, ctx: ToolContext<C>) => O | Promise<O>
}

/** Throw it from `execute` to send `message` verbatim to the model (`is_error: true`). */
export declare class ToolError extends Error {
  constructor(message: string, options?: { cause?: unknown })
}

/** Registers a tool, replacing one of the same name. Throws a `TypeError` (`registerTool: …`) for a bad tool. */
export declare function registerTool<I = any, O = unknown, C = any>(tool: Tool<I, O, C>): void
/** Removes a tool; whether it was registered. */
export declare function unregisterTool(name: string): boolean
/** The registered definitions, in registration order. */
export declare function listTools(): ToolDefinition[]

export declare const DEFAULT_MODEL: 'claude-sonnet-5-5'
export declare const DEFAULT_MAX_TOKENS: 4096
export declare const DEFAULT_MAX_TOOL_ITERATIONS: 5

export type TextBlockParam = { type: 'text'; text: string; [field: string]: unknown }
export type ContentBlockParam =
  | TextBlockParam
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content?: string | TextBlockParam[]; is_error?: boolean }
  | { type: string; [field: string]: unknown }

/** A Messages API message param. */
export interface MessageParam {
  role: 'user' | 'assistant'
  content: string | ContentBlockParam[]
}

export type ToolChoice =
  | { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }

export interface RunOptions<C = unknown> {
  /** Default: `ANTHROPIC_MODEL`, else `DEFAULT_MODEL`. */
  model?: string
  /** Per request. Default 4096. */
  maxTokens?: number
  system?: string | TextBlockParam[]
  temperature?: number
  toolChoice?: ToolChoice
  /** Names of the registered tools to offer in this run. Default: all. */
  tools?: string[]
  /** Tool rounds allowed. Default 5. */
  maxToolIterations?: number
  /** `"stop"` (default): end the run on the first tool failure. `"continue"`: tell the model. */
  onToolError?: 'stop' | 'continue'
  /** With `"continue"`: how often one identical call may fail before it is no longer run. Default 2. */
  maxToolFailures?: number
  /** Per tool call; a late tool is a failure and its `ctx.signal` is aborted. Default: none. */
  toolTimeoutMs?: number
  /** Run the tool calls of one response concurrently. Default true. */
  parallelToolCalls?: boolean
  /** Handed to every `execute` as `ctx.context`. */
  context?: C
  /** Stops the run; it resolves with code `aborted`. */
  signal?: AbortSignal
  /** Default: `ANTHROPIC_API_KEY`, read at call time. */
  apiKey?: string
  /** Sent as `Authorization: Bearer`. Default: `ANTHROPIC_AUTH_TOKEN`. */
  authToken?: string
  /** Default: `ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`. No `/v1` suffix. */
  baseURL?: string
  /** The `anthropic-version` header. Default `2023-06-01`. */
  apiVersion?: string
  /** API retries. Default 2. */
  maxRetries?: number
  /** Per API request. Default 600000. */
  timeoutMs?: number
}

export interface ToolCall {
  toolName: string
  input: unknown
  output: unknown
  isError?: boolean
  /** The developer's view of a failure (never sent to the model). */
  error?: string
  durationMs: number
  toolUseId: string
}

/** Summed over all requests of the run. */
export interface Usage {
  inputTokens: number
  outputTokens: number
  cacheReadInputTokens: number
  cacheCreationInputTokens: number
}

export type AIErrorCode =
  | 'invalid_request'
  | 'authentication_error'
  | 'rate_limited'
  | 'overloaded'
  | 'network_error'
  | 'tool_validation_error'
  | 'tool_execution_error'
  | 'max_iterations_exceeded'
  | 'aborted'
  | 'unknown_error'

export interface AIError {
  code: AIErrorCode
  message: string
  /** Seconds; with `rate_limited` when the API said. */
  retryAfter?: number
  /** With `tool_validation_error` / `tool_execution_error`. */
  toolName?: string
  status?: number
  requestId?: string
  /** What the tool threw (stop mode). */
  cause?: unknown
  toolCalls?: ToolCall[]
}

export interface RunData {
  /** The text blocks of the final reply, joined. */
  text: string
  toolCalls: ToolCall[]
  stopReason: string
  usage: Usage
  /** The whole conversation, the final reply included, ready to send again. */
  messages: MessageParam[]
}

export type RunResult = { data: RunData; error: null } | { data: null; error: AIError }

/** Runs a conversation with the registered tools. Never rejects, never throws. */
export declare function runWithTools<C = unknown>(prompt: string | MessageParam[], options?: RunOptions<C>): Promise<RunResult>
