// Runs one question through the tool-calling loop and turns the outcome into what the page shows.
// Each question is a thread of the package's store (lib/store.ts), owned by the browser's session
// (lib/session.ts): a run paused for approval is resumed in its thread, so the page never holds,
// and cannot edit, the calls it approves.
import { runWithTools, ToolError, type AIError, type ApprovalDecision, type MessageParam, type PendingApproval, type RunOptions, type RunResult, type ToolCall } from 'anthropic-tool-calling'
import { z } from 'zod'
import { getStore } from '@/lib/store'
import { CHAT_ID } from './chat-request'
import './tools' // registers the tools (again, on a dev reload: a name registered again is replaced)
import { ensureMcpServers } from './mcp-servers'
import type { AskResult, AskState, JsonValue, OnToolError, PendingApprovalView, ToolCallView } from './types'

export const SYSTEM =
  'You are the customer support assistant of an online shop. Use the tools to look up orders and to ' +
  'start returns; never guess an order status. Answer in the language of the customer, briefly.'

/**
 * The options every run of a stored conversation gets. `maxTotalTokens` caps what one run may
 * cost (each request re-sends the stored thread, so size it for the longest chat you keep), and
 * `maxIdenticalCalls` stops the model from looking the same order up again and again. Approval
 * ids need no secret here: in a thread, the store signs them with the thread's own.
 */
export function runOptions(onToolError: OnToolError): RunOptions {
  return {
    system: SYSTEM,
    onToolError,
    maxToolIterations: 5,
    maxTotalTokens: 200_000,
    maxIdenticalCalls: 2,
    toolTimeoutMs: 10_000,
  }
}

/** A question from the form on /: a new thread owned by `owner`, run until it answers or waits for approval. */
export async function askAssistant(owner: string, question: string, { onToolError = 'stop' }: { onToolError?: OnToolError } = {}): Promise<AskResult> {
  const store = getStore()
  let id: string
  try {
    id = await store.createThread({ owner, metadata: { kind: 'ask', onToolError } })
  } catch (err) {
    console.error(`[tool-calling] store_unavailable: ${(err as Error).message}`)
    return { ok: false, error: { code: 'store_unavailable', message: STORE_DOWN }, toolCalls: [] }
  }
  await ensureMcpServers() // the shipping MCP server's tool, from the first run of this process on
  // The key, base URL and model come from the environment (.env.local), read at every call.
  const result = await runWithTools(question, { ...runOptions(onToolError), store, thread: { id, owner } })
  return outcome(result, id)
}

/**
 * The person's answer to the calls a conversation waits for: resumes its thread with
 * `approvals`. Only the approval ids and the decision come from the page; the calls, their input
 * and the rest of the conversation are the store's. The package checks each approval id against
 * the stored call and consumes it before the call runs: a made-up one, one from another
 * conversation, or one already used is refused (invalid_request) and nothing runs. `owner`: the
 * browser's session (null without one): another browser's conversation is not found.
 */
export async function resumeAssistant(owner: string | null, conversationId: string, approvals: ApprovalDecision[]): Promise<AskState> {
  const store = getStore()
  let thread
  try {
    thread = owner && CHAT_ID.test(conversationId) ? await store.getThread(conversationId, { owner }) : null
  } catch (err) {
    console.error(`[tool-calling] store_unavailable: ${(err as Error).message}`)
    return { question: '', onToolError: 'stop', result: { ok: false, error: { code: 'store_unavailable', message: STORE_DOWN }, toolCalls: [] } }
  }
  if (!owner || !thread || thread.metadata.kind !== 'ask') {
    console.error('[tool-calling] invalid_request: an answer was posted for a conversation this browser does not have')
    return { question: '', onToolError: 'stop', result: refusal(APPROVAL_REFUSED) }
  }
  const question = questionOf(thread.messages)
  const onToolError: OnToolError = thread.metadata.onToolError === 'continue' ? 'continue' : 'stop'
  if (thread.status === 'running') return { question, onToolError, result: refusal(BUSY) }
  if (thread.pendingApprovals.length === 0) {
    console.error('[tool-calling] invalid_request: an answer was posted for a conversation that waits for none')
    return { question, onToolError, result: refusal(APPROVAL_REFUSED) }
  }
  await ensureMcpServers()
  const result = await runWithTools([], { ...runOptions(onToolError), store, thread: { id: thread.id, owner }, approvals })
  return { question, onToolError, result: outcome(result, thread.id, { resuming: true }) }
}

/** The question a conversation of / began with. */
function questionOf(messages: MessageParam[]): string {
  const first = messages[0]
  if (!first) return ''
  return typeof first.content === 'string' ? first.content : first.content.map((b) => (b.type === 'text' ? String(b.text) : '')).join('')
}

const refusal = (message: string): AskResult => ({ ok: false, error: { code: 'invalid_request', message }, toolCalls: [] })

/** Two answers at once for the same conversation (a double click, two tabs): the second is refused. */
export const BUSY = 'This conversation is still being answered. Wait a moment, then try again.'

/** A post to a chat while a run of it is going (a second tab, a double click), as the chat shows it. */
export const CHAT_BUSY = 'This chat is still answering. Wait for the reply, then send again.'

/** The store cannot be reached. */
const STORE_DOWN = 'The conversation cannot be reached right now. Please try again in a moment.'

/** A refused resume (forged, edited, used or expired approval), as the user reads it. */
export const APPROVAL_REFUSED = 'This approval is not valid: the request was changed or has expired. Nothing was done. Please ask again.'

function outcome({ data, error }: RunResult, conversationId: string, { resuming = false } = {}): AskResult {
  const declined = declinedCalls(data?.messages ?? [])
  // The developer's view (which tool, what it threw, what to fix) goes to the server log only.
  logFailedCalls(error ? (error.toolCalls ?? []) : data.toolCalls, declined)
  const view = viewOf(declined)
  if (error) {
    console.error(`[tool-calling] ${error.code}: ${error.message}`)
    const message = resuming && error.code === 'invalid_request' ? APPROVAL_REFUSED : error.code === 'thread_busy' ? BUSY : userMessage(error)
    return { ok: false, error: { code: error.code, message, retryAfter: error.retryAfter }, toolCalls: (error.toolCalls ?? []).map(view) }
  }
  if (data.stopReason === 'approval_required') {
    return { ok: 'approval_required', conversationId, pendingApprovals: (data.pendingApprovals ?? []).map(pendingView), toolCalls: data.toolCalls.map(view) }
  }
  return { ok: true, answer: data.text, toolCalls: data.toolCalls.map(view) }
}

function pendingView({ approvalId, toolName, input }: PendingApproval): PendingApprovalView {
  const args = (input ?? {}) as { orderId?: unknown }
  const question =
    toolName === 'solicitar_devolucion' && args.orderId !== undefined
      ? `Start a return for order ${String(args.orderId).replace(/^#/, '')}?`
      : `Run ${toolName}?`
  return { approvalId, toolName, input: input as JsonValue, question }
}

/** What a failed call shows in the browser; the words for the user are in the answer or the error message. */
const FAILED_CALL = 'This step did not work.'

/** A tool call as the browser may see it: `call.error` is the developer's text and is left out. */
const viewOf =
  (declined: Set<string>) =>
  (call: ToolCall): ToolCallView => {
    if (declined.has(call.toolUseId)) {
      return { toolName: call.toolName, input: call.input as JsonValue, output: null, isError: true, declined: true, failure: 'You declined this call.' }
    }
    return {
      toolName: call.toolName,
      input: call.input as JsonValue,
      output: (call.output ?? null) as JsonValue,
      isError: call.isError === true,
      ...(call.isError ? { failure: FAILED_CALL } : {}),
    }
  }

/**
 * The calls the user declined: their tool_result says "The user declined this call…" (`is_error`,
 * as the package answers a denial). A denial is an answer, not a failure: it is not logged as one.
 */
function declinedCalls(messages: MessageParam[]): Set<string> {
  const ids = new Set<string>()
  for (const m of messages) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue
    for (const b of m.content as Array<{ type: string; tool_use_id?: string; is_error?: boolean; content?: unknown }>) {
      if (b.type !== 'tool_result' || b.is_error !== true || !b.tool_use_id) continue
      const text = typeof b.content === 'string' ? b.content : Array.isArray(b.content) ? b.content.map((c: { text?: string }) => c.text ?? '').join('') : ''
      if (text.startsWith('The user declined this call')) ids.add(b.tool_use_id)
    }
  }
  return ids
}

/** The developer's view of a finished run (failed calls, the run's error), for the server log only. */
export function logRun({ data, error }: RunResult, where = 'run') {
  logFailedCalls(error ? (error.toolCalls ?? []) : data.toolCalls, declinedCalls(data?.messages ?? []))
  if (error) console.error(`[tool-calling] ${error.code}: ${error.message} (${where})`)
}

function logFailedCalls(calls: ToolCall[], declined: Set<string>) {
  for (const call of calls) {
    if (declined.has(call.toolUseId)) console.log(`[tool-calling] ${call.toolName} (${call.toolUseId}) declined by the user`)
    else if (call.isError) console.error(`[tool-calling] ${call.toolName} (${call.toolUseId}) failed: ${call.error}`)
  }
}

/**
 * The summary /orders/[id] renders, as the model must write it (`output`): the API constrains the
 * answer to this shape, the package checks it (the length too, which the API is only told in
 * words) and `data.output` is typed from it.
 */
export const OrderSummary = z.object({
  status: z.enum(['processing', 'shipped', 'delivered', 'return_requested']).describe('The status the order tool reported'),
  eta: z.string().nullable().describe('The expected delivery date (YYYY-MM-DD) the tool reported, or null'),
  carrier: z.string().nullable(),
  summary: z.string().min(1).describe('One or two sentences for the customer, in their language'),
})
export type OrderSummary = z.infer<typeof OrderSummary>

/**
 * The summary of one order for its page (app/orders/[id]/page.tsx, a server component): the model
 * looks the order up with get_order_status and answers with an `OrderSummary`, typed.
 */
export async function summariseOrder(id: string): Promise<{ ok: true; summary: OrderSummary } | { ok: false; code: AIError['code'] | 'refusal'; message: string }> {
  const result = await runWithTools(`Summarise order #${id} for the customer`, {
    system: SYSTEM,
    output: OrderSummary,
    // Reading is all a summary needs: the tool that changes orders (and asks for approval) is not offered.
    tools: ['get_order_status'],
    maxToolIterations: 3,
    toolTimeoutMs: 10_000,
    // A server component has no request signal: give the run a deadline of its own.
    signal: AbortSignal.timeout(60_000),
  })
  logRun(result, `summary of order ${id}`)
  const { data, error } = result
  if (error) return { ok: false, code: error.code, message: userMessage(error) }
  // No output: the model declined (stopReason "refusal"), the one answer without one here.
  if (!data.output) return { ok: false, code: 'refusal', message: 'The assistant could not summarise this order.' }
  return { ok: true, summary: data.output }
}

/** What the user of the app should read for each error code. */
export function userMessage(error: AIError): string {
  switch (error.code) {
    case 'tool_execution_error':
      // A ToolError's message is written for people; anything else a tool throws is internal.
      return error.cause instanceof ToolError ? error.cause.message : `Something went wrong while running ${error.toolName ?? 'a tool'}. Please try again later.`
    case 'tool_validation_error':
      return 'The assistant asked for something it cannot do. Please rephrase your question.'
    case 'max_iterations_exceeded':
      return 'That needed too many steps. Please ask a more specific question.'
    case 'budget_exceeded':
      return 'That needed more work than one question may take. Please ask a more specific question.'
    case 'output_validation_error':
      return 'The assistant\'s answer did not come out in the expected form. Please reload the page.'
    case 'rate_limited':
      return `Too many requests right now. Please try again${error.retryAfter ? ` in ${Math.ceil(error.retryAfter)} seconds` : ' in a moment'}.`
    case 'overloaded':
      return 'The assistant is overloaded right now. Please try again in a minute.'
    case 'network_error':
      return 'The assistant could not be reached. Please try again.'
    case 'authentication_error':
      return 'The assistant is not configured correctly (API key). Please tell the site owner.'
    case 'aborted':
      return 'The request was cancelled.'
    case 'invalid_request':
      return 'The assistant could not process this request. Please try a shorter or simpler question.'
    case 'thread_busy':
      return CHAT_BUSY
    case 'store_unavailable':
      return STORE_DOWN
    default:
      return 'Something went wrong. Please try again.'
  }
}
