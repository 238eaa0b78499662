// POST /api/chat/stop { id }: the Stop button (app/chat/chat.tsx). Stops the run in progress in
// this browser's chat wherever it runs (stopRun): its tools get their abort signal, nothing more
// is asked of the model, and every tab that follows the answer sees it end with the stop. Closing
// a response does not do this: the run goes on, and a reload follows it.
import { stopRun } from 'anthropic-tool-calling'
import { CHAT_ID } from '@/lib/ai/anthropic/tool-calling/chat-request'
import { sessionOwner } from '@/lib/session'
import { getStore } from '@/lib/store'

export async function POST(req: Request) {
  let id: unknown
  try {
    ;({ id } = (await req.json()) as { id?: unknown })
  } catch {
    return new Response('The request is not JSON.', { status: 400 })
  }
  const owner = await sessionOwner()
  if (!owner || typeof id !== 'string' || !CHAT_ID.test(id)) return new Response(null, { status: 204 })
  const store = getStore()
  try {
    const thread = await store.getThread(id, { owner })
    if (thread && thread.status === 'running' && thread.activeRunId) await stopRun(thread.activeRunId, { store })
  } catch (err) {
    console.error(`[tool-calling] store_unavailable: ${(err as Error).message} (stop)`)
    return new Response('The chat cannot be reached right now. Please try again.', { status: 503 })
  }
  return new Response(null, { status: 204 })
}
