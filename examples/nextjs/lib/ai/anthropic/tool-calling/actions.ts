'use server'
// The server action the form posts to. It runs on the server only, where the API key lives.
import { revalidatePath } from 'next/cache'
import { askAssistant } from './service'
import type { AskState, OnToolError } from './types'

export async function ask(_previous: AskState | null, form: FormData): Promise<AskState> {
  const question = String(form.get('question') ?? '').trim().slice(0, 2000)
  const onToolError: OnToolError = form.get('onToolError') === 'continue' ? 'continue' : 'stop'
  if (!question) {
    return { question, onToolError, result: { ok: false, error: { code: 'invalid_request', message: 'Type a question first.' }, toolCalls: [] } }
  }
  const result = await askAssistant(question, { onToolError })
  // A return changed the database: re-render the orders table with the rest of this response.
  if (result.toolCalls.some((c) => c.toolName === 'solicitar_devolucion' && !c.isError)) revalidatePath('/')
  return { question, onToolError, result }
}
