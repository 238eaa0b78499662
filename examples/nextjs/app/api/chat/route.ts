// The route handler `useChat` posts to (app/chat/chat.tsx). Each chat is a thread of the
// package's store (lib/store.ts), owned by the browser's session (lib/session.ts): the page posts
// only the chat's id and what is new, the person's next message or their answers to approval
// requests (lib/ai/anthropic/tool-calling/chat-request.ts). The store holds the history, lets one
// run at a time go on in a thread, keeps every step as it happens, and consumes an approval
// before its call runs, so the same answer posted twice runs nothing the second time.
import { streamWithTools } from 'anthropic-tool-calling'
import '@/lib/ai/anthropic/tool-calling/tools' // registers get_order_status and solicitar_devolucion
import { ensureMcpServers } from '@/lib/ai/anthropic/tool-calling/mcp-servers'
import { ChatRequestError, readChatPost, type ChatPost } from '@/lib/ai/anthropic/tool-calling/chat-request'
import { APPROVAL_REFUSED, CHAT_BUSY, logRun, runOptions, userMessage } from '@/lib/ai/anthropic/tool-calling/service'
import { sessionOwner } from '@/lib/session'
import { getStore } from '@/lib/store'

const refuse = (status: number, text: string) => new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } })

export async function POST(req: Request) {
  let post: ChatPost
  try {
    post = readChatPost(await req.json())
  } catch (e) {
    // A history, a tool call, an input, a field this route does not take: refused, nothing runs.
    return refuse(400, e instanceof ChatRequestError ? e.message : 'The request is not JSON.')
  }
  // The thread, if this browser owns it: another browser's chat (or none) is not found.
  const owner = await sessionOwner()
  const store = getStore()
  let thread
  try {
    thread = owner ? await store.getThread(post.chatId, { owner }) : null
  } catch (err) {
    console.error(`[tool-calling] store_unavailable: ${(err as Error).message} (chat)`)
    return refuse(503, 'The chat cannot be reached right now. Please try again.')
  }
  if (!owner || !thread || thread.metadata.kind !== 'chat') return refuse(400, 'This chat does not exist. Reload the page to start a new one.')
  // One run at a time per thread (the store enforces it too: a post that slips past this check
  // ends with thread_busy, shown as the same sentence).
  if (thread.status === 'running') return refuse(409, CHAT_BUSY)
  const waiting = thread.pendingApprovals.length > 0
  if (post.kind === 'message' && waiting) return refuse(409, 'Answer the approval request first (Approve or Decline).')
  if (post.kind === 'approvals' && !waiting) return refuse(400, 'Nothing in this chat waits for an approval.')

  // The shipping MCP server's tool, registered on the first run of this process (or without it, if that failed).
  await ensureMcpServers()
  const approvals = post.kind === 'approvals' ? post.approvals : undefined
  // Only what is new: the text, or (to resume the pause) nothing but the answers. The history is the store's.
  const stream = streamWithTools(post.kind === 'message' ? post.text : [], {
    ...runOptions('continue'),
    store,
    thread: { id: thread.id, owner },
    // No `signal: req.signal`: a browser that goes away (a reload, a closed tab) leaves the run
    // going, and the page follows it again (app/api/chat/[id]/stream). The Stop button stops it
    // (app/api/chat/stop).
    ...(approvals ? { approvals } : {}),
  })
  // The developer's view of failures goes to the server log; the browser gets user-safe text only.
  stream.result.then((result) => logRun(result, 'chat'))
  return stream.toUIMessageStreamResponse({
    onError: (error) => (approvals && error.code === 'invalid_request' ? APPROVAL_REFUSED : userMessage(error)),
  })
}
