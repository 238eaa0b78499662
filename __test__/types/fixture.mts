// Type fixture for index.d.ts, checked by `tsc -p __test__/types` (types.test.mjs, in npm test).
// Each `Expect<Equal<…>>` must hold; each `@ts-expect-error` line must be an error.
import { z } from 'zod'
import { registerTool, listTools, runWithTools, streamWithTools, registerMcpServer, unregisterMcpServer, ToolError, createStore, resumeRun, recoverRuns, stopRun, type StoredThread, type Store, type InferToolInput, type McpConnectorServer, type McpServerOptions, type RunResult, type Tool, type ToolDefinition } from 'anthropic-tool-calling'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function expect<T extends true>(): void {}

// zod: execute's input is the schema's output type.
registerTool({
  definition: { name: 'get_order_status', description: 'Look up an order', input_schema: z.object({ orderId: z.string() }) },
  execute: async (input, ctx) => {
    expect<Equal<typeof input, { orderId: string }>>()
    expect<Equal<typeof ctx.toolUseId, string>>()
    // @ts-expect-error orderId is a string, not a number
    input.orderId.toFixed()
    // @ts-expect-error no such field
    input.orderNumber
    return { status: 'shipped' }
  },
})

// After transforms and defaults: the output side.
registerTool({
  definition: {
    name: 'start_return',
    input_schema: z.object({
      orderId: z.string().transform((s) => Number(s.replace('#', ''))),
      reason: z.enum(['damaged', 'wrong_item']).default('damaged'),
      note: z.string().optional(),
    }),
  },
  execute: ({ orderId, reason, note }) => {
    expect<Equal<typeof orderId, number>>()
    expect<Equal<typeof reason, 'damaged' | 'wrong_item'>>()
    expect<Equal<typeof note, string | undefined>>()
    if (orderId < 0) throw new ToolError('bad order')
    return `Return for ${orderId}`
  },
})

// A JSON Schema literal infers where it can (json-schema-to-ts style), `as const` or not.
registerTool({
  definition: {
    name: 'search',
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string' },
        limit: { type: 'integer' },
        sort: { enum: ['asc', 'desc'] },
        tags: { type: 'array', items: { type: 'string' } },
        filter: { type: 'object', properties: { since: { type: ['string', 'null'] } }, required: ['since'], additionalProperties: false },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  execute: (input) => {
    expect<Equal<typeof input.query, string>>()
    expect<Equal<typeof input.limit, number | undefined>>()
    expect<Equal<typeof input.sort, 'asc' | 'desc' | undefined>>()
    expect<Equal<typeof input.tags, string[] | undefined>>()
    expect<Equal<typeof input.filter, { since: string | null } | undefined>>()
    // @ts-expect-error additionalProperties: false
    input.other
    return null
  },
})
const orderSchema = { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } as const
registerTool({
  definition: { name: 'as_const', input_schema: orderSchema },
  execute: (input) => {
    expect<Equal<typeof input.orderId, string>>()
    // Without additionalProperties: false other keys may come, as unknown.
    expect<Equal<typeof input.extra, unknown>>()
    return input.orderId.toUpperCase()
  },
})

// Today's code still compiles: an explicit input type…
registerTool<{ orderId: string }>({
  definition: { name: 'explicit', input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
  execute: async ({ orderId }) => orderId.length,
})
// …an untyped execute over a schema typed as the wide InputSchema (input is `any`)…
const wide: ToolDefinition = { name: 'wide', input_schema: { type: 'object', properties: { a: { type: 'number' } } } }
registerTool({
  definition: wide,
  execute: (input) => {
    expect<Equal<typeof input, any>>()
    return input.whatever.goes
  },
})
// …a schema without properties (input is `any`)…
registerTool({ definition: { name: 'bare', input_schema: { type: 'object' } }, execute: (input) => input.anything })
// …and a Tool<I> value built elsewhere.
const tool: Tool<{ id: string }> = { definition: { name: 'prebuilt', input_schema: { type: 'object' } }, execute: ({ id }) => id }
registerTool(tool)

// listTools gives JSON Schema definitions.
expect<Equal<ReturnType<typeof listTools>, ToolDefinition[]>>()
expect<Equal<InferToolInput<z.ZodObject<{ n: z.ZodNumber }>>, { n: number }>>()

// Wrong things are refused.
// @ts-expect-error execute's input is { a: string }, not { b: number }
registerTool({ definition: { name: 'wrong_input', input_schema: z.object({ a: z.string() }) }, execute: (input: { b: number }) => input.b })
// @ts-expect-error top-level type must be "object"
registerTool({ definition: { name: 'arr', input_schema: { type: 'array' } }, execute: () => null })
// @ts-expect-error execute must be a function
registerTool({ definition: { name: 'x', input_schema: z.object({}) }, execute: 42 })

// needsApproval: on both forms; a function gets the input as the model sends it (before transforms).
registerTool({
  definition: { name: 'refund', input_schema: z.object({ orderId: z.string(), amount: z.number().default(1) }) },
  needsApproval: (input, ctx) => {
    expect<Equal<typeof input, { orderId: string; amount?: number | undefined }>>()
    expect<Equal<typeof ctx.toolUseId, string>>()
    return (input.amount ?? 1) > 100
  },
  execute: async (input) => input.amount.toFixed(),
})
registerTool({ definition: { name: 'delete_all', input_schema: { type: 'object' } }, needsApproval: true, execute: () => 'gone' })
// @ts-expect-error needsApproval is a boolean or a function
registerTool({ definition: { name: 'bad_approval', input_schema: z.object({}) }, needsApproval: 'yes', execute: () => null })

// approvalScope binds approval ids to a user or a chat: a string.
void runWithTools('refund', { approvalScope: 'chat_7f3a', approvals: [{ approvalId: 'apr_1_ab', approved: true }] })
// @ts-expect-error approvalScope is a string
void runWithTools('refund', { approvalScope: 42 })

// output: data.output has the schema's output type (zod: after transforms and defaults).
async function typedAnswers() {
  const summary = z.object({
    status: z.enum(['shipped', 'lost']),
    eta: z.string().nullable(),
    items: z.number().int().default(1),
    total: z.string().transform((s) => Number(s)),
  })
  const zodRun = await runWithTools('Summarise order #4821', { output: summary, maxTokens: 512 })
  if (zodRun.data) {
    expect<Equal<typeof zodRun.data.output, { status: 'shipped' | 'lost'; eta: string | null; items: number; total: number } | undefined>>()
    expect<Equal<typeof zodRun.data.text, string>>()
  } else {
    expect<Equal<typeof zodRun.error.text, string | undefined>>()
    expect<Equal<typeof zodRun.error.apiErrorCode, string | undefined>>()
    if (zodRun.error.code === 'output_validation_error') void zodRun.error.cause
  }
  // A JSON Schema literal is read like input_schema.
  const literal = await runWithTools('Summarise', {
    output: { type: 'object', properties: { status: { type: 'string' }, count: { type: 'integer' } }, required: ['status'], additionalProperties: false },
  })
  if (literal.data) expect<Equal<typeof literal.data.output, { status: string; count?: number } | undefined>>()
  // Without output, data.output is not there.
  const plain = await runWithTools('hi')
  // @ts-expect-error no output without the option
  if (plain.data) void plain.data.output
  expect<Equal<typeof plain, RunResult>>()
  // Streaming: the same type in result and in the finish part.
  const stream = streamWithTools('Summarise', { output: summary })
  const streamed = await stream.result
  if (streamed.data) expect<Equal<typeof streamed.data.output, { status: 'shipped' | 'lost'; eta: string | null; items: number; total: number } | undefined>>()
  for await (const part of stream) {
    if (part.type === 'finish' && part.result.data) expect<Equal<typeof part.result.data.output, { status: 'shipped' | 'lost'; eta: string | null; items: number; total: number } | undefined>>()
  }
  // @ts-expect-error output must be a schema object
  void runWithTools('hi', { output: 'json' })
}
void typedAnswers

// Tracing: on by default where a provider is registered; false, true or { recordContent }.
// Threads: on by default, `false` sends the whole history every request.
void runWithTools('hi', { apiThreads: false })
// @ts-expect-error a boolean
void runWithTools('hi', { apiThreads: 'off' })

void runWithTools('hi', { telemetry: false })
void runWithTools('hi', { telemetry: { recordContent: true } })
// The sampling options go with the API version that keeps them.
void runWithTools('hi', { apiVersion: '2023-06-01', temperature: 0.2, topP: 0.9, topK: 5 })
void streamWithTools('hi', { telemetry: true })
// @ts-expect-error recordContent is a boolean
void runWithTools('hi', { telemetry: { recordContent: 'yes' } })
// @ts-expect-error not a telemetry setting
void runWithTools('hi', { telemetry: { recordContents: true } })

// The API's MCP connector: servers by name and https URL, with a token and the tools to offer.
const docs: McpConnectorServer = { name: 'docs', url: 'https://mcp.example.com/mcp', authorizationToken: 'tok', tools: ['search'] }
void runWithTools('hi', { mcpServers: [docs, { name: 'files', url: 'https://files.example.com/mcp' }] })
void streamWithTools('hi', { mcpServers: [docs] })
// @ts-expect-error a server needs its url
void runWithTools('hi', { mcpServers: [{ name: 'docs' }] })
// @ts-expect-error the token is authorizationToken, not authorization_token
void runWithTools('hi', { mcpServers: [{ name: 'docs', url: 'https://mcp.example.com/mcp', authorization_token: 'tok' }] })
// @ts-expect-error tools are names
void runWithTools('hi', { mcpServers: [{ ...docs, tools: [{ name: 'search' }] }] })

// MCP servers run by the engine: an HTTP one with headers, a stdio one with env; the approval
// function gets the tool's name first.
const names: Promise<string[]> = registerMcpServer({ name: 'docs', url: 'http://127.0.0.1:3001/mcp', headers: { authorization: 'Bearer t' }, prefix: 'docs_' })
void names
void registerMcpServer({ name: 'files', command: 'npx', args: ['-y', 'srv'], env: { ROOT: '/data' }, tools: ['read'], needsApproval: (toolName: string, input: unknown) => toolName === 'delete' && input !== null })
const stdio: McpServerOptions = { name: 'f', command: 'node', needsApproval: true }
void stdio
const removed: Promise<boolean> = unregisterMcpServer('docs')
void removed
// @ts-expect-error a server has a url or a command, not both
void registerMcpServer({ name: 'x', url: 'http://127.0.0.1/mcp', command: 'node' })
// @ts-expect-error headers are for HTTP servers
void registerMcpServer({ name: 'x', command: 'node', headers: {} })
// @ts-expect-error needsApproval's function gets the tool name first
void registerMcpServer({ name: 'x', command: 'node', needsApproval: (input: { a: number }) => input.a > 1 })

// A store and a run in a stored thread.
async function storeUse() {
  const store: Store = createStore('postgres://app@127.0.0.1:5432/agents', { maxConnections: 5 })
  const id = await store.createThread({ owner: 'u1', metadata: { title: 'Orders' } })
  const r = await runWithTools('Where is order 4821?', { store, thread: { id, owner: 'u1' } })
  if (r.error) expect<Equal<Extract<typeof r.error.code, 'thread_busy' | 'store_unavailable'>, 'thread_busy' | 'store_unavailable'>>()
  await runWithTools({ approvals: [{ approvalId: 'apr_1_x', approved: true }] }, { store, thread: id })
  const t = await store.getThread(id, { owner: 'u1' })
  if (t) expect<Equal<typeof t.status, StoredThread['status']>>()
  // @ts-expect-error a thread is a string or { id, owner }
  await runWithTools('x', { store, thread: 5 })
  // @ts-expect-error store options are named
  createStore('sqlite::memory:', { pool: 3 })
}
void storeUse

// Durable runs.
async function durableUse() {
  const store = createStore()
  registerTool({
    definition: { name: 'charge', description: 'Charges', input_schema: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] } },
    onInterrupted: 'report',
    execute: async (input, ctx) => {
      expect<Equal<typeof ctx.attempt, number>>()
      expect<Equal<typeof ctx.idempotencyKey, string>>()
      return { charged: input.cents }
    },
  })
  // @ts-expect-error onInterrupted is "retry" or "report"
  registerTool({ definition: { name: 'x', description: 'x', input_schema: { type: 'object' } }, execute: () => 1, onInterrupted: 'skip' })
  const r = await runWithTools('hi', { store, thread: 't1' })
  if (r.data) {
    const id: string | undefined = r.data.runId
    const again = await resumeRun(id ?? '', { store, apiKey: 'k', context: { user: 1 } })
    if (again.data) expect<Equal<typeof again.data.resumed, number | undefined>>()
    // @ts-expect-error the run's own options come from its log
    await resumeRun('run_x', { store, model: 'claude' })
  }
  const recovered = await recoverRuns({ store, limit: 5 })
  expect<Equal<typeof recovered[number]['runId'], string>>()
  const stopped: boolean = await stopRun('run_x', { store })
  void stopped
}
void durableUse

// AWS credentials for Bedrock and Claude Platform on AWS: an object, or a sync or async function.
void runWithTools('hi', { provider: { type: 'bedrock', region: 'eu-west-1', credentials: { accessKeyId: 'AKIA…', secretAccessKey: 's' } } })
void runWithTools('hi', { provider: { type: 'aws', workspaceId: 'wrkspc_1', credentials: async () => ({ accessKeyId: 'ASIA…', secretAccessKey: 's', sessionToken: 't', expiration: new Date() }) } })
// @ts-expect-error secretAccessKey is needed
void runWithTools('hi', { provider: { type: 'bedrock', credentials: { accessKeyId: 'AKIA…' } } })
// An access token function on Vertex, Claude on Google Cloud (google-auth-library's answer) and Foundry.
void runWithTools('hi', { provider: { type: 'vertex', projectId: 'p', region: 'global', accessToken: async () => 'ya29.…' } })
void runWithTools('hi', { provider: { type: 'google-cloud', workspaceId: 'w', accessToken: async () => ({ token: 'ya29.…', expiresAt: new Date() }) } })
void runWithTools('hi', { provider: { type: 'foundry', resource: 'acme', accessToken: () => 'eyJ…' } })
// GoogleAuth's getAccessToken() answers string | null | undefined.
declare const googleAuth: { getAccessToken(): Promise<string | null | undefined> }
void runWithTools('hi', { provider: { type: 'vertex', accessToken: () => googleAuth.getAccessToken() } })
// @ts-expect-error an access token is a function, not a string (a fixed token is authToken)
void runWithTools('hi', { provider: { type: 'vertex', accessToken: 'ya29.…' } })
// @ts-expect-error Bedrock takes AWS credentials, not an access token
void runWithTools('hi', { provider: { type: 'bedrock', accessToken: async () => 't' } })
// @ts-expect-error Vertex takes no AWS credentials
void runWithTools('hi', { provider: { type: 'vertex', credentials: { accessKeyId: 'AKIA…', secretAccessKey: 's' } } })
