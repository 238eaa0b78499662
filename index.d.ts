// The public API of anthropic-tool-calling (hand-written; binding.d.ts is generated). The types of
// the streamed parts and of the UI messages live beside their code in lib/ and are re-exported here.

/** A JSON Schema for a tool's input; its top-level `type` must be `"object"`. */
export interface InputSchema {
  type: 'object'
  properties?: Record<string, unknown>
  required?: readonly string[]
  [keyword: string]: unknown
}

/**
 * A Standard Schema (standardschema.dev): zod ≥ 4, valibot, arktype… `registerTool` needs one that
 * can give a JSON Schema (`~standard.jsonSchema`: zod ≥ 4.2, arktype, valibot's
 * `toStandardJsonSchema`; zod 4.0–4.1 through the installed zod's `toJSONSchema`).
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => StandardSchemaV1.Result<Output> | Promise<StandardSchemaV1.Result<Output>>
    readonly types?: { readonly input: Input; readonly output: Output } | undefined
  }
}
export declare namespace StandardSchemaV1 {
  type Result<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<Issue> }
  interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
  }
}

/** What `registerTool` takes as `input_schema`: a JSON Schema object, or a Standard Schema (zod…). */
export type ToolInputSchema = InputSchema | StandardSchemaV1

/** A tool as the Messages API sees it; sent exactly as given (a Standard Schema as its JSON Schema). */
export interface ToolDefinition<S = InputSchema> {
  /** `^[a-zA-Z0-9_-]{1,128}$` */
  name: string
  description?: string
  input_schema: S
  [field: string]: unknown
}

/**
 * The input `execute` receives for a schema: a Standard Schema's output type (after transforms
 * and defaults); for a JSON Schema literal, the type it describes where it can be read off
 * (`properties`, `required`, `type`, `enum`, `const`, `items`, `anyOf`/`oneOf`); else `any`.
 */
export type InferToolInput<S> = S extends StandardSchemaV1<any, infer O>
  ? O
  : S extends { properties: infer P }
    ? string extends keyof P
      ? any
      : FromJsonSchema<S>
    : any

/** The TypeScript type a JSON Schema literal describes (a small json-schema-to-ts). */
export type FromJsonSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { anyOf: readonly (infer A)[] }
      ? FromJsonSchema<A>
      : S extends { oneOf: readonly (infer A)[] }
        ? FromJsonSchema<A>
        : S extends { type: readonly (infer T)[] }
          ? FromJsonType<T, S>
          : S extends { type: infer T }
            ? FromJsonType<T, S>
            : unknown

type FromJsonType<T, S> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? S extends { items: infer I }
            ? FromJsonSchema<I>[]
            : unknown[]
          : T extends 'object'
            ? FromJsonObject<S>
            : unknown

type Flatten<T> = { [K in keyof T]: T[K] } & {}

type FromJsonObject<S> = S extends { properties: infer P }
  ? Flatten<
      {
        -readonly [K in keyof P as K extends RequiredOf<S> ? K : never]-?: FromJsonSchema<P[K]>
      } & {
        -readonly [K in keyof P as K extends RequiredOf<S> ? never : K]?: FromJsonSchema<P[K]>
      } & (S extends { additionalProperties: false } ? {} : { [key: string]: unknown })
    >
  : { [key: string]: unknown }

type RequiredOf<S> = S extends { required: readonly (infer R)[] } ? R : never

/**
 * What `output` takes: a JSON Schema object, or a Standard Schema that gives one (zod ≥ 4,
 * arktype, valibot's `toStandardJsonSchema`), read on its input side as tools' schemas are.
 */
export type OutputSchema = StandardSchemaV1 | { readonly [keyword: string]: unknown }

/**
 * The type of `data.output` for an `output` schema: a Standard Schema's output type (after
 * transforms and defaults); for a JSON Schema literal, the type it describes where it can be read
 * off (as `InferToolInput`); else `unknown`.
 */
export type InferOutput<S> = S extends StandardSchemaV1<any, infer O>
  ? O
  : S extends { properties: infer P }
    ? string extends keyof P
      ? unknown
      : FromJsonSchema<S>
    : FromJsonSchema<S>

/** What every `execute` receives besides the input. */
export interface ToolContext<C = unknown> {
  /** The id of the model's `tool_use` block. */
  toolUseId: string
  /**
   * Aborted when the call times out (`toolTimeoutMs`), the run is aborted, another call of the
   * round fails first in stop mode, or the run ends. A call cancelled before it started is never
   * started at all.
   */
  signal: AbortSignal
  /** The `context` option of the run, the very object passed. */
  context: C
  /**
   * 1, or 2, 3 … when a durable run taken over after its process stopped (`resumeRun`,
   * `recoverRuns`) runs again a call that had started there.
   */
  attempt: number
  /**
   * What to make the call's effect idempotent by (a payment's idempotency key): `<runId>:<toolUseId>`
   * in a run with a store, the same on every attempt; `toolUseId` otherwise.
   */
  idempotencyKey: string
}

/**
 * What a durable run taken over does with a call that had started in the process that stopped
 * and not finished: `"retry"` (the default) runs it again (`ctx.attempt` 2 …, the same
 * `ctx.idempotencyKey`); `"report"` does not, and tells the model it was interrupted and may or
 * may not have taken effect.
 */
export type OnInterrupted = 'retry' | 'report'

export interface Tool<I = any, O = unknown, C = any> {
  definition: ToolDefinition<ToolInputSchema>
  /** Sync or async. A string result is sent as it is, anything else as its JSON (`undefined` → `null`). */
  execute: (input: I, ctx: ToolContext<C>) => O | Promise<O>
  /**
   * The call waits for a person's yes before it runs: `true`, or a function per call (anything but
   * `false`, or a throw, means it waits). The run then stops with `stopReason: "approval_required"`
   * and `data.pendingApprovals`; resume with `runWithTools(data.messages, { approvals })`.
   * Needs `approvalSecret` or `ANTHROPIC_TOOL_CALLING_SECRET`.
   */
  needsApproval?: boolean | ((input: I, ctx: { toolUseId: string; context: C }) => boolean | Promise<boolean>)
  /** A call interrupted by a stopped process, when its run is taken over. Default `"retry"`. */
  onInterrupted?: OnInterrupted
}

/** A tool whose `execute` input is inferred from its `input_schema` (zod, or a JSON Schema literal). */
export interface ToolFromSchema<S extends ToolInputSchema, O = unknown, C = any> {
  definition: ToolDefinition<S>
  /**
   * Sync or async; gets the input as the schema parsed it (a Standard Schema's transforms and
   * defaults applied). A string result is sent as it is, anything else as its JSON.
   */
  execute: (input: InferToolInput<S>, ctx: ToolContext<C>) => O | Promise<O>
  /**
   * The call waits for a person's yes before it runs (see `Tool.needsApproval`). A function gets
   * the input as the model sent it, checked against the JSON Schema (before a Standard Schema's
   * transforms).
   */
  needsApproval?: boolean | ((input: ToolRawInput<S>, ctx: { toolUseId: string; context: C }) => boolean | Promise<boolean>)
  /** A call interrupted by a stopped process, when its run is taken over. Default `"retry"`. */
  onInterrupted?: OnInterrupted
}

/** The input as the model sends it: a Standard Schema's input type, else the parsed type. */
export type ToolRawInput<S> = S extends StandardSchemaV1<infer I, any> ? I : InferToolInput<S>

/** Throw it from `execute` to send `message` verbatim to the model (`is_error: true`). */
export declare class ToolError extends Error {
  constructor(message: string, options?: { cause?: unknown })
}

/**
 * Registers a tool, replacing one of the same name. Throws a `TypeError` (`registerTool: …`) for a
 * bad tool, or for a name an MCP server's tool holds (`registerMcpServer`). `execute`'s input is inferred from `input_schema` (a zod schema's output type; a JSON
 * Schema literal's described type), or given as `registerTool<Input>(…)`.
 */
export declare function registerTool<const S extends ToolInputSchema, O = unknown, C = any>(tool: ToolFromSchema<S, O, C>): void
export declare function registerTool<I = any, O = unknown, C = any>(tool: Tool<I, O, C> & { definition: ToolDefinition<InputSchema> }): void
/** Removes a tool; whether it was registered. */
export declare function unregisterTool(name: string): boolean
/** The registered definitions: `registerTool`'s in registration order, then each MCP server's. */
export declare function listTools(): ToolDefinition[]

/** What an MCP server's tools share, over either transport. */
interface McpServerCommon<C = any> {
  /** The server's name (1 to 64 letters, digits, `_` or `-`), unique among this thread's servers. */
  name: string
  /** Put before each of its tools' names (`docs_` + `search`). Default: the names as the server gives them. */
  prefix?: string
  /** Only these of its tools (the server's names). Default: every tool it lists. */
  tools?: string[]
  /**
   * Its calls wait for a person's yes first: `true` for every call, or asked per call with the
   * tool's name (as the model sees it) and the input. A throw or a rejection means "ask".
   * Default: no approval.
   */
  needsApproval?: boolean | ((toolName: string, input: unknown, ctx: { toolUseId: string; context: C }) => boolean | Promise<boolean>)
}

/** An MCP server over Streamable HTTP. Redirects are not followed. */
export interface McpHttpServerOptions<C = any> extends McpServerCommon<C> {
  /** Its endpoint, `http://` or `https://`. */
  url: string
  /**
   * Sent with every request (`authorization: Bearer …`). Secrets: in no error, log line or span,
   * nor the token after a scheme, a `Basic` password, or the URL's password and query values.
   */
  headers?: Record<string, string>
  command?: never
}

/** An MCP server as a child process speaking on its stdin and stdout. */
export interface McpStdioServerOptions<C = any> extends McpServerCommon<C> {
  /** The program (`npx`, `process.execPath`, a path). */
  command: string
  args?: string[]
  /**
   * Added to the child's environment, which holds only PATH, HOME, USER, SHELL, TERM and LANG of
   * this process's (no ANTHROPIC_* variable unless named here).
   */
  env?: Record<string, string>
  /** Its working directory. Default: this process's. */
  cwd?: string
  url?: never
}

/** What `registerMcpServer` takes. */
export type McpServerOptions<C = any> = McpHttpServerOptions<C> | McpStdioServerOptions<C>

/**
 * Connects to an MCP server, lists its tools (every page) and registers each as a tool the
 * engine calls itself (`tools/call`, validated against its `inputSchema` first); resolves with
 * the names registered. Rejects with a `TypeError` for bad options, and with an `Error` naming
 * the server and the cause when it cannot connect or authenticate, or naming every tool whose
 * name the Messages API would refuse or another tool or server already owns (nothing is
 * registered then). Its tools follow the server's `notifications/tools/list_changed`.
 *
 * A tool list has a byte budget, weighed as it arrives, before it is parsed: 2 MiB of JSON in all
 * (every page), 256 KiB for one tool's definition, 128 KiB for its input schema. A list past the
 * budget rejects naming the server and the limit; a tool past its own limit is named among those
 * that cannot be registered. A later list past the budget keeps the tools offered before, and
 * says why on stderr (or the log).
 */
export declare function registerMcpServer<C = any>(options: McpServerOptions<C>): Promise<string[]>
/** Closes an MCP server's session (a stdio child exits) and removes its tools; whether it was registered. */
export declare function unregisterMcpServer(name: string): Promise<boolean>

export declare const DEFAULT_MODEL: 'claude-sonnet-5-5'
export declare const DEFAULT_MAX_TOKENS: 4096
export declare const DEFAULT_MAX_TOOL_ITERATIONS: 5

/** A content block a tool may return through `toolResult`. */
export type ToolResultBlockParam =
  | TextBlockParam
  | { type: 'image'; source: { type: 'base64'; media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'; data: string } | { type: 'url'; url: string }; [field: string]: unknown }
  | { type: 'document'; source: { type: 'base64'; media_type: 'application/pdf'; data: string } | { type: 'text'; media_type: 'text/plain'; data: string } | { type: 'url'; url: string } | { type: 'content'; content: string | TextBlockParam[] }; title?: string; context?: string; citations?: { enabled: boolean }; [field: string]: unknown }
  | { type: 'search_result'; source: string; title: string; content: TextBlockParam[]; citations?: { enabled: boolean }; [field: string]: unknown }
  | { type: 'tool_reference'; tool_name: string; [field: string]: unknown }

/** What `toolResult` returns: send it from `execute`. */
export interface ToolResultValue {
  readonly blocks: ToolResultBlockParam[]
}

/**
 * Return it from `execute` to send content blocks (text, image, document, search_result,
 * tool_reference) as the `tool_result` content, as given. `output` in `toolCalls` is the array.
 * Throws a `TypeError` (`toolResult: …`) for a block of another type. Under API version
 * 2026-10-21 (the default) a text block with non-empty `citations` (also inside a search_result or
 * a document's content) is a `tool_execution_error`: the API refuses citations in a user message.
 */
export declare function toolResult(blocks: ToolResultBlockParam[]): ToolResultValue

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

/**
 * As in the Messages API. A forcing choice (`any`, `tool`) applies to the first request of a run
 * only; later requests send `{ type: "auto" }` (keeping `disable_parallel_tool_use`).
 */
export type ToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' }

/** Extended thinking. With it on, a forcing `toolChoice` is refused by the API. */
export type ThinkingConfig =
  | { type: 'enabled'; budget_tokens: number; display?: 'summarized' | 'omitted' }
  | { type: 'adaptive'; display?: 'summarized' | 'omitted' }
  | { type: 'disabled' }

/** A server tool: Anthropic runs it; its definition is sent as given after the client tools. */
export type ServerToolDefinition =
  | { type: 'web_search_20250305' | 'web_search_20260209'; name: 'web_search'; max_uses?: number; allowed_domains?: string[]; blocked_domains?: string[]; user_location?: { type: 'approximate'; city?: string; region?: string; country?: string; timezone?: string }; cache_control?: CacheControl; [field: string]: unknown }
  | { type: 'web_fetch_20250910' | (string & {}); name: string; [field: string]: unknown }

/** One server of the `mcpServers` option (the API's MCP connector). */
export interface McpConnectorServer {
  /** The server's name, unique among the run's servers (the model sees it with the server's tools). */
  name: string
  /** Where Anthropic connects to the server: an `https://` URL. */
  url: string
  /**
   * Sent as the server's `authorization_token` (an OAuth access token). A secret like the API key:
   * taken out of any API text passed on, never in a message, log line, span or stream part.
   */
  authorizationToken?: string
  /** The server's tools the model may call (the others are disabled). Default: every tool it lists. */
  tools?: string[]
}

export interface CacheControl {
  type: 'ephemeral'
  ttl?: '5m' | '1h'
}

/** An AWS access key pair, as `@aws-sdk/credential-providers` answers it. */
export interface AwsCredentialIdentity {
  accessKeyId: string
  secretAccessKey: string
  /** With temporary credentials. */
  sessionToken?: string
  /** When they stop working: they are asked for again shortly before (else after 15 minutes). */
  expiration?: Date | string | number
}

/**
 * AWS credentials for Signature Version 4: an object, or a function (sync or async) returning
 * one, such as `fromNodeProviderChain()` or Vercel's `awsCredentialsProvider()`. A function is
 * called when a request needs credentials the run does not hold.
 */
export type AwsCredentials = AwsCredentialIdentity | (() => AwsCredentialIdentity | Promise<AwsCredentialIdentity>)

/**
 * A function answering a bearer token (`provider.accessToken`): a string, or `{ token, expiresAt? }`
 * (google-auth-library's `client.getAccessToken()` answers `{ token }`; `expiresAt` or the
 * client's `expiry_date` is read when there). On Vertex AI and Claude on Google Cloud a token is
 * kept until 5 minutes before `expiresAt` (5 minutes without one) and asked for again once when
 * the platform answers 401; on Foundry it is asked for on every request.
 */
export type AccessTokenFunction = () =>
  | string
  | null
  | undefined
  | { token?: string | null; expiresAt?: Date | string | number; expiry_date?: number | null }
  | Promise<string | null | undefined | { token?: string | null; expiresAt?: Date | string | number; expiry_date?: number | null }>

/** The `stop_reason` of the final reply, or one of the run's own. */
/**
 * Where the Messages API is reached (the `provider` option): Anthropic's API, or a cloud platform
 * that serves the same models. Each setting not given is read from the platform's environment
 * variables (docs/platforms.md).
 */
export type Provider =
  | 'anthropic'
  | 'bedrock'
  | 'vertex'
  | 'foundry'
  | 'aws'
  | 'google-cloud'
  | { type: 'anthropic' }
  | {
      type: 'bedrock'
      /** Else `AWS_REGION` / `AWS_DEFAULT_REGION`, else the `AWS_PROFILE` profile's (not needed with `baseURL` and a key). */
      region?: string
      /** Signs requests with these AWS credentials (else `AWS_BEARER_TOKEN_BEDROCK`, else the AWS default chain); `apiKey` wins. */
      credentials?: AwsCredentials
    }
  | {
      type: 'vertex'
      /** Else `CLOUD_ML_REGION`. */
      region?: string
      /** Else `ANTHROPIC_VERTEX_PROJECT_ID`, else the project of the Application Default Credentials' file. */
      projectId?: string
      /** A function answering the access token (such as google-auth-library's); without it and `authToken`, Application Default Credentials. */
      accessToken?: AccessTokenFunction
    }
  | {
      type: 'foundry'
      /** `{resource}.services.ai.azure.com`; else `ANTHROPIC_FOUNDRY_RESOURCE` (not needed with `baseURL`). */
      resource?: string
      /** An Entra ID token provider, asked on every request and sent as a bearer (instead of a key). */
      accessToken?: AccessTokenFunction
    }
  | {
      type: 'aws'
      /** Else `AWS_REGION` / `AWS_DEFAULT_REGION`, else the `AWS_PROFILE` profile's (not needed with `baseURL` and a key). */
      region?: string
      /** Else `ANTHROPIC_AWS_WORKSPACE_ID`. */
      workspaceId?: string
      /** Signs requests with these AWS credentials (else an `AWS_PROFILE` profile, `ANTHROPIC_AWS_API_KEY`, the AWS default chain); `apiKey` wins. */
      credentials?: AwsCredentials
    }
  | {
      type: 'google-cloud'
      /** Else `ANTHROPIC_GOOGLE_CLOUD_PROJECT`, else `GOOGLE_CLOUD_PROJECT`, else the project of the Application Default Credentials' file. */
      projectId?: string
      /** Else `ANTHROPIC_GOOGLE_CLOUD_LOCATION`, else `"global"`. */
      location?: string
      /** Else `ANTHROPIC_GOOGLE_CLOUD_WORKSPACE_ID`. */
      workspaceId?: string
      /** A function answering the access token (such as google-auth-library's); without it and `authToken`, Application Default Credentials. */
      accessToken?: AccessTokenFunction
    }

export type StopReason =
  | 'end_turn'
  | 'stop_sequence'
  | 'max_tokens'
  | 'model_context_window_exceeded'
  | 'refusal'
  | 'tool_use'
  | 'pause_turn'
  | 'approval_required'
  | (string & {})

// Generated from src/binding/options/options.json by scripts/options-doc.mjs: edit the table, not this.
export interface RunOptions<C = unknown> {
  /** The model. Default: `ANTHROPIC_MODEL`, else `DEFAULT_MODEL`. */
  model?: string
  /** `max_tokens` of each request. Default: `4096`. */
  maxTokens?: number
  /** The system prompt: a string or text blocks, sent as given. Default: none. */
  system?: string | TextBlockParam[]
  /**
   * Sent as `temperature`, from 0 to 1. Only under an `apiVersion` before `2026-10-21` (pin
   * `"2023-06-01"`): API version 2026-10-21 removed it, so under it the run resolves with
   * `invalid_request` and nothing is sent. Default: the API's.
   */
  temperature?: number
  /**
   * Sent as `tool_choice`. A forcing choice (`any`, `tool`) applies to the first request of a run
   * only; later requests send `{ type: "auto" }` (keeping `disable_parallel_tool_use`). Default:
   * the API's (`auto`).
   */
  toolChoice?: ToolChoice
  /** Names of the registered tools to offer in this run. Default: all. */
  tools?: string[]
  /** Tool rounds allowed. Default: `5`. */
  maxToolIterations?: number
  /**
   * `"error"`: a tool request after `maxToolIterations` rounds is `max_iterations_exceeded`.
   * `"answer"`: those calls are not run (each gets an `is_error` result saying the limit was
   * reached) and one more request with `tool_choice: none` gets the answer (`data.limitReached`).
   * Default: `"error"`.
   */
  onMaxIterations?: 'error' | 'answer'
  /**
   * `"stop"`: end the run on the first tool failure. `"continue"`: tell the model. Default:
   * `"stop"`.
   */
  onToolError?: 'stop' | 'continue'
  /**
   * With `"continue"`: how often one identical call may fail before it is no longer run. Default:
   * `2`.
   */
  maxToolFailures?: number
  /**
   * Per tool call; a late tool is a failure and its `ctx.signal` is aborted. Counted from when JS
   * begins the call (one still waiting for a busy JS thread when its time is up never starts); a
   * call that finished in time is never late, however long its result waits. Default: none.
   */
  toolTimeoutMs?: number
  /**
   * Run the tool calls of one response concurrently. `false`: one by one, in order; the calls after
   * one that waits for approval are not run, and the model is told so. Default: `true`.
   */
  parallelToolCalls?: boolean
  /**
   * A token budget for the whole run: the input (`input_tokens` + cache read + cache creation) and
   * output tokens of every request, compaction and other `usage.iterations` included. Before each
   * request the input is estimated as the previous request's; the request is sent only if it fits,
   * with `max_tokens` lowered to what is left. Otherwise (and when a reply is cut by that lowered
   * cap) the run ends with `budget_exceeded`, whose `usage` says what was spent. Default: none.
   */
  maxTotalTokens?: number
  /**
   * How often one identical call (same tool, same input) may succeed in a run, counted when it is
   * dispatched. Past it the call is not run and the model is told it already has that result (not a
   * failure). Default: none (a polling tool repeats itself on purpose).
   */
  maxIdenticalCalls?: number
  /**
   * Sent as `x-api-key`. Default: `ANTHROPIC_API_KEY`, read at call time (only when neither
   * `apiKey` nor `authToken` is given).
   */
  apiKey?: string
  /** Sent as `Authorization: Bearer`. Default: `ANTHROPIC_AUTH_TOKEN`, read as for `apiKey`. */
  authToken?: string
  /**
   * Where requests go. No `/v1` suffix: `/v1/messages` is added to its path, before its query
   * (`https://gw/proxy?key=k` is requested at `https://gw/proxy/v1/messages?key=k`). Its password
   * and query values are secrets, and messages show it without its user, password and query.
   * Default: `ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`.
   */
  baseURL?: string
  /**
   * Where the Messages API is reached: `"anthropic"`, `"bedrock"`, `"vertex"`, `"foundry"`, `"aws"`
   * (Claude Platform on AWS), `"google-cloud"` (Claude on Google Cloud), or `{ type, ...settings }`
   * (`region`, `projectId`, `location`, `workspaceId`, `resource`; on Bedrock and Claude Platform
   * on AWS `credentials`; on Vertex, Claude on Google Cloud and Foundry `accessToken`), each
   * setting else read from the platform's environment variables. `baseURL` (else
   * `ANTHROPIC_BEDROCK_BASE_URL` / `ANTHROPIC_AWS_BASE_URL`) then replaces only the platform's
   * `https://{host}`; `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN` and `ANTHROPIC_BASE_URL` are not
   * read. Credentials: `apiKey` (Bedrock API key, Foundry key, workspace key) or `authToken` (an
   * Entra ID or Google access token), or `accessToken`, a function returning a token
   * (google-auth-library's, an Entra ID provider); on Vertex and Claude on Google Cloud without
   * them, Google's ADC (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's
   * `application_default_credentials.json`, the metadata server); on Bedrock and Claude Platform on
   * AWS, AWS Signature Version 4 with `credentials` (`{ accessKeyId, secretAccessKey, sessionToken?
   * }` or a function returning them, as `@aws-sdk/credential-providers` do), else the AWS
   * credential chain (environment, shared files with `AWS_PROFILE`, web identity, container,
   * instance metadata). What works so far: docs/platforms.md. Default: `"anthropic"`.
   */
  provider?: Provider
  /**
   * The `anthropic-version` header: a version date `YYYY-MM-DD`, sent as given (a version newer
   * than this package knows is not blocked). `"2023-06-01"` keeps `temperature`, `topP` and `topK`,
   * which 2026-10-21 (and, as far as this package knows, every later version) refuses. Anything
   * else is `invalid_request`. Default: `"2026-10-21"`, the version the official SDKs send since
   * their 1.0.
   */
  apiVersion?: string
  /** Retries of a failed API request. Default: `2`. */
  maxRetries?: number
  /** The time one API request may take. Default: `600000` (ten minutes). */
  timeoutMs?: number
  /**
   * Server tools (web search, web fetch, code execution, tool search…), appended to `tools`.
   * Default: none.
   */
  serverTools?: ServerToolDefinition[]
  /**
   * Remote MCP servers that Anthropic's API connects to for this run (the MCP connector): sent as
   * `mcp_servers`, each offered to the model by one `mcp_toolset` tool, with the beta
   * `mcp-client-2025-11-20` added to `anthropic-beta`. Anthropic runs those calls; their
   * `mcp_tool_use` / `mcp_tool_result` blocks are in `data.messages` like any server tool's. Each
   * `url` must be `https://`, each `name` unique. Default: none.
   */
  mcpServers?: McpConnectorServer[]
  /** Sent as the `anthropic-beta` header, comma-joined. Default: none. */
  betas?: string[]
  /**
   * Extra request headers. `x-api-key`, `authorization`, `anthropic-version` and `content-type` are
   * refused. Their values (of 8 characters or more) are taken out of any API text passed on, like
   * the key, and so is the token of a value with a scheme (`Bearer <token>`) and a `Basic`
   * password. Default: none.
   */
  headers?: Record<string, string>
  /**
   * Merged into the request body last. `model`, `messages`, `tools`, `stream` and `thread` are
   * refused. Default: none.
   */
  extraBody?: Record<string, unknown>
  /**
   * Send only the new turn: the run keeps its conversation on the API (its Threads, beta
   * `message-threads-2026-08-12`, as the official tool runner does). The first request sends the
   * whole history; each later one only the messages after the previous reply, without `system` and
   * `tools`. A thread the API lost or cannot continue is replayed whole, one it cannot hold is
   * given up for the rest of the run; none of it is an error or changes `data.messages`. Default:
   * `true`.
   */
  apiThreads?: boolean
  /**
   * A code-execution container to continue in (an earlier run's `data.container.id`). Default:
   * none.
   */
  container?: string
  /**
   * The person's answers to `data.pendingApprovals`, to resume a run that stopped with
   * `approval_required`. Default: none.
   */
  approvals?: ApprovalDecision[]
  /**
   * Signs approval ids (HMAC-SHA256). The same on every server; at least 32 characters (a shorter
   * one is `invalid_request`): make one with `openssl rand -hex 32`. Default:
   * `ANTHROPIC_TOOL_CALLING_SECRET`.
   */
  approvalSecret?: string
  /** How long an approval id stays valid. Default: `86400000` (24 hours). */
  approvalTtlMs?: number
  /**
   * The user's or the chat's id, bound into every approval id this run issues: a decision issued
   * under another scope (another user's chat), or without one, is refused. Pass the same value when
   * you resume. Default: none (`""` is bound).
   */
  approvalScope?: string
  /**
   * Sent as `thinking` (extended thinking). With it on, a forcing `toolChoice` is refused by the
   * API. Default: none.
   */
  thinking?: ThinkingConfig
  /** Sent as `stop_sequences`. Default: none. */
  stopSequences?: string[]
  /**
   * Sent as `top_p`. Only under an `apiVersion` before `2026-10-21` (see `temperature`). Default:
   * none.
   */
  topP?: number
  /**
   * Sent as `top_k`. Only under an `apiVersion` before `2026-10-21` (see `temperature`). Default:
   * none.
   */
  topK?: number
  /** Sent as `metadata`. Default: none. */
  metadata?: { user_id?: string; [field: string]: unknown }
  /** Sent as `service_tier`. Default: none. */
  serviceTier?: 'auto' | 'standard_only'
  /**
   * Sent as the top-level `cache_control`: automatic prompt caching of the growing history.
   * Default: none.
   */
  cacheControl?: CacheControl
  /**
   * Sent as `output_config`, e.g. `{ effort: "low" }`; with `output`, its `format` is added. A
   * `task_budget` adds its beta (`task-budgets-2026-03-13`). Default: none.
   */
  outputConfig?: { effort?: 'low' | 'medium' | 'high' | 'xhigh' | 'max'; task_budget?: { type: 'tokens'; total: number; remaining?: number }; [field: string]: unknown }
  /** Sent as `context_management` (beta). Default: none. */
  contextManagement?: Record<string, unknown>
  /**
   * The shape of the answer: a JSON Schema, or a Standard Schema such as a zod object. Every
   * request carries it as `output_config.format` (in the form the API takes: constraints it cannot
   * enforce are described to the model instead); the final answer is parsed and checked against the
   * full schema, then by the Standard Schema's own `validate`, and `data.output` is its value. An
   * answer that is not JSON or does not match is `output_validation_error`; one cut by `max_tokens`
   * is `output_truncated`; a refusal has no `output`. Default: none.
   */
  output?: OutputSchema
  /**
   * OpenTelemetry spans, made where `@opentelemetry/api` is installed and a tracer provider is
   * registered (Next.js `instrumentation.ts` with `@vercel/otel`, or the Node SDK): `invoke_agent`
   * for the run, under it `chat {model}` for each API request and `execute_tool {name}` for each
   * tool call, as the GenAI semantic conventions (v1.41) name them. `false`: no spans. `{
   * recordContent: true }`: the messages, tool inputs and outputs go in them too (opt-in: they are
   * your users' data). Default: spans without content; nothing at all without a provider.
   */
  telemetry?: boolean | TelemetryOptions
  /**
   * The store (`createStore`) that keeps the run: its thread (`thread`), or without one a thread of
   * the run's own that no owner can read. Every run with a store is durable: it has a `runId`, and
   * when its process dies another takes it over (`resumeRun`, `recoverRuns`). Default: none.
   */
  store?: Store
  /**
   * The stored thread the run goes on in: its id (1–200 characters), or `{ id, owner }` to bind it
   * to a user (another owner, or none, then finds no thread). The prompt is only what is new (a
   * string, user messages, or `{ approvals }` / `[]` with `approvals` to resume a pause); the
   * history is the store's, and `data.messages` is the whole thread. A run on a new id makes the
   * thread; a second run while one holds it ends with `thread_busy`. Approvals in a thread are the
   * store's (no `approvalSecret`) and run their call at most once. Needs `store`. Default: none
   * (the prompt is the whole history).
   */
  thread?: string | { id: string; owner?: string }
  /** Stops the run; it resolves with code `aborted`. Default: none. */
  signal?: AbortSignal
  /** Handed to every `execute` as `ctx.context`. Default: `undefined`. */
  context?: C
  /** Before each `execute` (an observer: a throw is logged and ignored). Default: none. */
  onToolCall?: (call: { toolName: string; input: unknown; toolUseId: string }) => void | Promise<void>
  /** After each call settles. Default: none. */
  onToolResult?: (call: ToolCall) => void | Promise<void>
  /** After each step: a reply and the tool calls it asked for. Default: none. */
  onStepFinish?: (step: { step: number; stopReason: string; usage: Usage; toolCalls: ToolCall[] }) => void | Promise<void>
}
// End of the generated RunOptions.

/** What the `telemetry` option takes besides `true` and `false`. */
export interface TelemetryOptions {
  /**
   * Record the messages sent (`gen_ai.input.messages`, `gen_ai.system_instructions`), each reply
   * (`gen_ai.output.messages`), and each tool call's input and output
   * (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Never the key, the token or the
   * approval secret. Default: false.
   */
  recordContent?: boolean
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

/**
 * Summed over all requests of the run, with the `usage.iterations` the API bills but leaves out
 * of a reply's top-level usage (a compaction's, an advisor's).
 */
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
  | 'output_truncated'
  | 'aborted'
  | 'budget_exceeded'
  | 'output_validation_error'
  | 'store_unavailable'
  | 'thread_busy'
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
  /**
   * The stable code an API refusal names its cause with (`error.details.error_code` of its body,
   * or of an `error` event in a stream after HTTP 200): `thread_not_found`,
   * `image_dimensions_too_large` …. Branch on it rather than on `message`; treat a code you do not
   * know as the bare `code`. Absent when the API gave none.
   */
  apiErrorCode?: string
  /**
   * What the tool threw (stop mode). With `output_validation_error`: the issues, as a Standard
   * Schema gives them (`{ message, path }[]`), or what its `validate` threw.
   */
  cause?: unknown
  toolCalls?: ToolCall[]
  /** With `budget_exceeded` and `output_validation_error`: the tokens the run spent. */
  usage?: Usage
  /** With `output_validation_error`: the answer that did not match, as the model wrote it. */
  text?: string
  /** A run with a store: its id. */
  runId?: string
}

export interface RunData {
  /** The text blocks of the final reply, joined. */
  text: string
  /** The thinking text of the run's replies, in order, joined by a blank line (`""` without thinking). */
  reasoning: string
  toolCalls: ToolCall[]
  /** The final reply's `stop_reason`: `refusal` and `max_tokens` answers are answers too. */
  stopReason: StopReason
  usage: Usage
  /**
   * The whole conversation, the final reply included, ready to send again plus a new user
   * message (an empty reply and a refused reply are left out of it).
   */
  messages: MessageParam[]
  /** Set when `onMaxIterations: "answer"` cut the tool rounds short. */
  limitReached?: true
  /** The last code-execution container a reply ran in. */
  container?: { id: string; expiresAt: string }
  /** With `stopReason: "approval_required"`: the calls waiting for a person's decision. */
  pendingApprovals?: PendingApproval[]
  /**
   * Every reply's `context_management.applied_edits` (what context editing cleared, e.g.
   * `{ type: 'clear_tool_uses_20250919', cleared_tool_uses, cleared_input_tokens }`), in order; set
   * once a reply had `context_management`.
   */
  appliedEdits?: unknown[]
  /** A run with a store: its id (`resumeRun`, `stopRun`). */
  runId?: string
  /** A run with a store: how many times it was taken over from a process that stopped. */
  resumed?: number
}

/** A call waiting for a person's decision (`needsApproval`): the run stopped with `approval_required`. */
export interface PendingApproval {
  /** `apr_<issued-at ms>_<64 lower-case hex>`: accepted back only in exactly this spelling. */
  approvalId: string
  toolUseId: string
  toolName: string
  input: unknown
}

/** The user's answer to an approval request, for the `approvals` option. */
export type ApprovalDecision = { approvalId: string; approved: true } | { approvalId: string; approved: false; reason?: string }

/**
 * What a run resolves with. `O` is the type of `data.output` (a run with `output`); without it
 * `data` has no `output`.
 */
export type RunResult<O = never> = { data: RunDataOf<O>; error: null } | { data: null; error: AIError }

/** `RunData`, with `output` when the run has a schema for it. */
export type RunDataOf<O> = [O] extends [never]
  ? RunData
  : RunData & {
      /**
       * The answer, parsed and checked against `output` (a Standard Schema's value, transforms
       * applied). Absent when the model refused (`stopReason: "refusal"`) or the run waits for
       * approval.
       */
      output?: O
    }

/**
 * Runs a conversation with the registered tools. Never rejects, never throws. With `output`,
 * `data.output` has the schema's type.
 */
/** What `createStore` takes besides the URL. */
export interface StoreOptions {
  /** The most connections a PostgreSQL pool opens. Default 10. */
  maxConnections?: number
  /** How long a run holds a thread without renewing it (renewed every third of it); a process that dies lets go after it. Default 30000. */
  leaseMs?: number
  /** How long a finished run's recorded UI message stream is kept for `resumeStream(runId)`, then dropped (its messages stay in the thread). Default 600000 (10 minutes). */
  streamRetentionMs?: number
}

/** A thread as `getThread` reads it. */
export interface StoredThread {
  id: string
  owner: string | null
  metadata: Record<string, unknown>
  /** The conversation, as the API takes it again. */
  messages: MessageParam[]
  /** The conversation as `useChat` takes its initial messages. */
  uiMessages: Array<{ id: string; role: 'user' | 'assistant'; parts: Array<Record<string, unknown> & { type: string }> }>
  /** The calls that wait for a person's decision. */
  pendingApprovals: PendingApproval[]
  status: 'idle' | 'running' | 'paused'
  /**
   * The id of the run that holds the thread, while one does; also of a run whose process stopped
   * while it held the thread (its lease ran out, `status` is no longer `running`) until it is
   * resumed (`resumeRun`, `recoverRuns`) or a new run takes the thread.
   */
  activeRunId: string | null
  /** ISO 8601. */
  createdAt: string
  /** ISO 8601. */
  updatedAt: string
}

/** A thread as `listThreads` shows it. */
export type ThreadSummary = Omit<StoredThread, 'messages' | 'uiMessages' | 'pendingApprovals' | 'activeRunId'>

/** A database the package keeps threads in; its failures reject with an Error whose `code` is `store_unavailable`. */
export interface Store {
  /** The URL, without its password or query. */
  readonly url: string
  /** Makes a thread with a random id (128 bits), bound to `owner` if given. */
  createThread(options?: { owner?: string; metadata?: Record<string, unknown> }): Promise<string>
  /** The thread, or `null` when there is none that `owner` may see. */
  getThread(id: string, options?: { owner?: string }): Promise<StoredThread | null>
  /** The owner's threads (without one: those bound to none), the most recently updated first; `before`: the last id of the previous page. */
  listThreads(options?: { owner?: string; limit?: number; before?: string }): Promise<ThreadSummary[]>
  /** Deletes a thread; whether there was one that `owner` may see. */
  deleteThread(id: string, options?: { owner?: string }): Promise<boolean>
  /** Ends the store's connections. */
  close(): Promise<void>
}

/**
 * A store: `"sqlite:<path>"` (embedded, nothing to install), `"sqlite::memory:"`, or
 * `"postgres://user:password@host:5432/db"` (`?sslmode=require` for TLS) for several instances.
 * Without a URL: `ANTHROPIC_TOOL_CALLING_STORE`, else `sqlite:.anthropic-tool-calling/store.db`
 * under the working directory. Returns at once and connects at first use; a malformed URL
 * throws a `createStore:` TypeError.
 */
export declare function createStore(url?: string, options?: StoreOptions): Store

/**
 * What `resumeRun` and `recoverRuns` are given again: the store, the secrets a run's log never
 * keeps (a `baseURL` with a password or a query is not logged, nor an MCP server's
 * `authorizationToken`, nor the `provider`'s AWS `credentials` or `accessToken`: give them again), and the options JS keeps. Everything else is the run's
 * own, read from its log.
 */
export type ResumeOptions<C = unknown> = Pick<
  RunOptions<C>,
  'apiKey' | 'authToken' | 'approvalSecret' | 'headers' | 'baseURL' | 'mcpServers' | 'provider' | 'signal' | 'context' | 'onToolCall' | 'onToolResult' | 'onStepFinish'
> & {
  store: Store
}

/**
 * Takes over a run with a store whose process stopped (its lease ran out) and goes on from its
 * last committed step, in this process (which must register the same tools): a committed reply
 * is never requested again, a finished call never runs again, a started one runs again
 * (`ctx.attempt` 2 …) unless its tool has `onInterrupted: "report"`. Resolves like
 * `runWithTools` (`data.resumed` counts take-overs); a run still held is `thread_busy`; a
 * finished run resolves with its stored result and runs nothing. A run that was streamed
 * (`streamWithTools` with a store) is recorded on into the same stream, so `resumeStream`'s
 * followers see it to its end; one that was not stays unrecorded. Options given again that do
 * not hold are `invalid_request` before the run is taken: it stays resumable. Never rejects.
 */
export declare function resumeRun<C = unknown>(runId: string, options: ResumeOptions<C>): Promise<RunResult>

/**
 * Takes over every run whose lease ran out (at most `limit`, default 10) and resumes each here:
 * for a cron route, or `instrumentation.ts` at boot. Two processes calling it together never
 * take the same run; resolves with the runs this one took. A streamed run is recorded on, as
 * with `resumeRun`.
 */
export declare function recoverRuns<C = unknown>(options: ResumeOptions<C> & { limit?: number }): Promise<Array<{ runId: string; result: RunResult }>>

/**
 * Stops a run wherever it runs: its holder sees it within a second and ends it as an abort does
 * (`aborted`, its tools' `ctx.signal` fired). A run nobody holds (its lease ran out: its process
 * died, or stalled, and nobody took it over yet) is ended at once as `aborted`, its stream's
 * followers ending with the abort; a process that died less than `leaseMs` ago still holds its
 * run, which is then only asked to stop and ends once its lease runs out and it is taken over or
 * stopped again. Resolves with whether it was going on; a paused or finished run is left as it
 * is. `owner`: a run whose thread has another owner is not found (`false`, nothing stopped), as
 * for threads — give it whenever the run id comes from a browser. The key given as `undefined` or
 * `null` (a visitor with no session) means the ownerless owner, as for threads; only without the
 * key is any owner's run stopped (server code that trusts the id).
 */
export declare function stopRun(runId: string, options: { store: Store; owner?: string }): Promise<boolean>

/**
 * A streamed run's UI message stream (`streamWithTools` with a store records it), as a
 * `Response` like `toUIMessageStreamResponse()`'s: the chunks sent so far, then the live ones to
 * the end — from any instance sharing the store (PostgreSQL's `LISTEN/NOTIFY` wakes it; a SQLite
 * file is looked at every 250 ms from another process). `204` with no body when the thread has no
 * run in progress, or the run's stream is not there (never recorded, or dropped
 * `streamRetentionMs` after the run ended); owners apply as for threads (another owner's thread
 * reads as none). A run id replays a finished run's stream whole within `streamRetentionMs`.
 * A run whose process stopped is still in progress: its stream is given, and followed, until
 * `resumeRun` / `recoverRuns` takes it over and records on (a cut step is taken back with
 * `reset-step` and asked for again) to its end, or a new run supersedes it.
 * Closing the Response never stops the run: `stopRun` does, and every follower's stream ends with
 * the `abort` chunk. Rejects with `store_unavailable` when the store cannot be read.
 */
export declare function resumeStream(
  target: string | { thread: string; owner?: string },
  options: { store: Store; owner?: string },
): Promise<Response>

export declare function runWithTools<const S extends OutputSchema, C = unknown>(
  prompt: string | MessageParam[] | { approvals: ApprovalDecision[] },
  options: RunOptions<C> & { output: S },
): Promise<RunResult<InferOutput<S>>>
export declare function runWithTools<C = unknown>(prompt: string | MessageParam[] | { approvals: ApprovalDecision[] }, options?: RunOptions<C>): Promise<RunResult>

/**
 * Runs a conversation as `runWithTools` does, with every reply streamed (SSE). Returns at once and
 * never throws: a single-consumer async iterable of `StreamPart`s (the last one is always
 * `{ type: "finish", result }`), with `result` and the `toUIMessageStreamResponse()` (for the AI
 * SDK's `useChat`) and `toTextStreamResponse()` Response makers. The run goes on whether or not
 * the parts are read.
 */
export declare function streamWithTools<const S extends OutputSchema, C = unknown>(
  prompt: string | MessageParam[] | { approvals: ApprovalDecision[] },
  options: RunOptions<C> & { output: S },
): ToolStream<InferOutput<S>>
export declare function streamWithTools<C = unknown>(prompt: string | MessageParam[] | { approvals: ApprovalDecision[] }, options?: RunOptions<C>): ToolStream

export type { StreamPart, ToolStream } from './lib/stream/part-stream'
export type { UIMessageStreamResponseInit } from './lib/stream/ui-chunker'
export type {
  UIMessage,
  UIMessagePart,
  TextUIPart,
  ReasoningUIPart,
  StepStartUIPart,
  FileUIPart,
  ToolUIPart,
  DynamicToolUIPart,
  UIToolInvocation,
  ToolApproval,
} from './lib/ui-messages'
export { fromUIMessages } from './lib/ui-messages'
import type { ToolStream } from './lib/stream/part-stream'
