// GET /api/chat/<id>/stream: what useChat({ resume: true }) asks for when the chat page loads
// (app/chat/chat.tsx). The answer in progress in this browser's chat, replayed from its start and
// followed to its end, from the store (resumeStream): a reload, or a second tab, sees the answer go
// on. 204 when nothing is in progress, or when the chat is not this browser's (it reads as none).
import { resumeStream } from 'anthropic-tool-calling'
import { CHAT_ID } from '@/lib/ai/anthropic/tool-calling/chat-request'
import { sessionOwner } from '@/lib/session'
import { getStore } from '@/lib/store'

export async function GET(_req: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params
  const owner = await sessionOwner()
  if (!owner || !CHAT_ID.test(id)) return new Response(null, { status: 204 })
  try {
    // Closing this response (a reload, a closed tab) does not stop the run; the Stop button does.
    return await resumeStream({ thread: id, owner }, { store: getStore() })
  } catch (err) {
    console.error(`[tool-calling] store_unavailable: ${(err as Error).message} (resume)`)
    return new Response(null, { status: 204 })
  }
}
