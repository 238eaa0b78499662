'use server'
// The server actions the form posts to. They run on the server only, where the API key lives.
import type { ApprovalDecision } from 'anthropic-tool-calling'
import { revalidatePath } from 'next/cache'
import { ensureSession, sessionOwner } from '@/lib/session'
import { askAssistant, resumeAssistant } from './service'
import type { AskResult, AskState, OnToolError } from './types'

function readForm(form: FormData): { question: string; onToolError: OnToolError } {
  return {
    question: String(form.get('question') ?? '').trim().slice(0, 2000),
    onToolError: form.get('onToolError') === 'continue' ? 'continue' : 'stop',
  }
}

/** A question: runs the loop; it may stop with `approval_required` (see `answerApproval`). */
export async function ask(_previous: AskState | null, form: FormData): Promise<AskState> {
  const { question, onToolError } = readForm(form)
  if (!question) {
    return { question, onToolError, result: { ok: false, error: { code: 'invalid_request', message: 'Type a question first.' }, toolCalls: [] } }
  }
  // The conversation is a thread owned by this browser (a server action may set the session cookie).
  const owner = await ensureSession()
  const result = await askAssistant(owner, question, { onToolError })
  refreshOrders(result)
  return { question, onToolError, result }
}

/**
 * The user's answer to a pending call. The form posts only the conversation's id, the
 * `approvalId`s the server issued, and which button was pressed (`decision`: approve | decline,
 * with an optional `reason`). The paused conversation is the store's, owned by this browser's
 * session (another browser's id finds nothing): nothing
 * else of the form is read, so there is no call, input or history on the page to edit. The
 * package checks every approvalId against the stored call and this conversation: a made-up id,
 * one from another conversation, or one already used is refused (invalid_request) and nothing runs.
 */
export async function answerApproval(_previous: AskState | null, form: FormData): Promise<AskState> {
  const conversationId = String(form.get('conversationId') ?? '').slice(0, 100)
  const approved = form.get('decision') === 'approve'
  const reason = String(form.get('reason') ?? '').trim().slice(0, 500)
  const approvals: ApprovalDecision[] = form.getAll('approvalId').map((id) =>
    approved ? { approvalId: String(id).slice(0, 200), approved: true } : { approvalId: String(id).slice(0, 200), approved: false, ...(reason ? { reason } : {}) },
  )
  const state = await resumeAssistant(await sessionOwner(), conversationId, approvals)
  refreshOrders(state.result)
  return state
}

/** A return changed the database: re-render the orders table with the rest of this response. */
function refreshOrders(result: AskResult) {
  if (result.toolCalls.some((c) => c.toolName === 'solicitar_devolucion' && !c.isError)) revalidatePath('/')
}
