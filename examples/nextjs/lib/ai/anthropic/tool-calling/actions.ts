'use server'
// The server actions the form posts to. They run on the server only, where the API key lives.
import type { ApprovalDecision, MessageParam } from 'anthropic-tool-calling'
import { revalidatePath } from 'next/cache'
import { APPROVAL_REFUSED, askAssistant, resumeAssistant } from './service'
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
  const result = await askAssistant(question, { onToolError })
  refreshOrders(result)
  return { question, onToolError, result }
}

/**
 * The user's answer to a pending call: the form posts back the paused conversation (`messages`,
 * the JSON of `data.messages`), the `approvalId`s the server issued, and which button was pressed
 * (`decision`: approve | decline, with an optional `reason`). The package checks every approvalId
 * against its call: an edited call or a made-up id is refused (invalid_request) and nothing runs.
 */
export async function answerApproval(_previous: AskState | null, form: FormData): Promise<AskState> {
  const { question, onToolError } = readForm(form)
  const refused = (): AskState => ({ question, onToolError, result: { ok: false, error: { code: 'invalid_request', message: APPROVAL_REFUSED }, toolCalls: [] } })
  let messages: MessageParam[]
  try {
    messages = JSON.parse(String(form.get('messages') ?? ''))
    if (!Array.isArray(messages)) throw new TypeError('messages is not an array')
  } catch (err) {
    console.error(`[tool-calling] invalid_request: the posted messages are not a conversation: ${(err as Error).message}`)
    return refused()
  }
  const approved = form.get('decision') === 'approve'
  const reason = String(form.get('reason') ?? '').trim().slice(0, 500)
  const approvals: ApprovalDecision[] = form.getAll('approvalId').map((id) =>
    approved ? { approvalId: String(id), approved: true } : { approvalId: String(id), approved: false, ...(reason ? { reason } : {}) },
  )
  const result = await resumeAssistant(messages, approvals, { onToolError })
  refreshOrders(result)
  return { question, onToolError, result }
}

/** A return changed the database: re-render the orders table with the rest of this response. */
function refreshOrders(result: AskResult) {
  if (result.toolCalls.some((c) => c.toolName === 'solicitar_devolucion' && !c.isError)) revalidatePath('/')
}
