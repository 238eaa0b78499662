// The route handler `useChat` posts to (app/chat/chat.tsx). The chat's history is kept on the
// server (lib/chats.ts): the page posts only the chat's id and what is new, the person's next
// message or their answers to approval requests (lib/ai/anthropic/tool-calling/chat-request.ts).
// The route runs the tool-calling loop on the stored history, streams every reply in the AI SDK
// UI message stream protocol, which `useChat` renders as the text and tool calls arrive, and
// stores the conversation once the run has succeeded.
import { streamWithTools, type ApprovalDecision, type MessageParam } from 'anthropic-tool-calling'
import '@/lib/ai/anthropic/tool-calling/tools' // registers get_order_status and solicitar_devolucion
import { ensureMcpServers } from '@/lib/ai/anthropic/tool-calling/mcp-servers'
import { claimChat, findChat, releaseChat, saveRun } from '@/lib/chats'
import { ChatRequestError, readChatPost, type ChatPost } from '@/lib/ai/anthropic/tool-calling/chat-request'
import { APPROVAL_REFUSED, logRun, runOptions, userMessage } from '@/lib/ai/anthropic/tool-calling/service'

const refuse = (status: number, text: string) => new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } })

export async function POST(req: Request) {
  let post: ChatPost
  try {
    post = readChatPost(await req.json())
  } catch (e) {
    // A history, a tool call, an input, a field this route does not take: refused, nothing runs.
    return refuse(400, e instanceof ChatRequestError ? e.message : 'The request is not JSON.')
  }
  if (!findChat(post.chatId, 'chat')) return refuse(400, 'This chat does not exist. Reload the page to start a new one.')
  // One run at a time per chat: each starts from the history the one before it stored.
  const lease = await claimChat(post.chatId)
  if (!lease) return refuse(409, 'This chat is still answering. Wait for the reply, then send again.')
  const chat = findChat(post.chatId, 'chat')!

  let prompt: MessageParam[]
  let approvals: ApprovalDecision[] | undefined
  if (post.kind === 'message') {
    if (chat.pendingApprovals) {
      releaseChat(lease)
      return refuse(409, 'Answer the approval request first (Approve or Decline).')
    }
    prompt = [...chat.messages, { role: 'user', content: post.text }]
  } else {
    if (!chat.pendingApprovals) {
      releaseChat(lease)
      return refuse(400, 'Nothing in this chat waits for an approval.')
    }
    // The stored paused history and the person's decisions. The package runs an approved call
    // only when its approval id verifies against the stored call and this chat's scope.
    prompt = chat.messages
    approvals = post.approvals
  }

  // The shipping MCP server's tool, registered on the first run of this process (or without it, if that failed).
  await ensureMcpServers()
  const stream = streamWithTools(prompt, {
    ...runOptions(chat), // the server's system prompt; approvalScope: the chat's id
    // The browser went away (closed tab, stop button): the run is aborted, no further request is made.
    signal: req.signal,
    ...(approvals ? { approvals } : {}),
  })
  stream.result.then((result) => {
    // The developer's view of failures goes to the server log; the browser gets user-safe text only.
    logRun(result, 'chat')
    try {
      saveRun(lease, chat, result, approvals)
    } catch (err) {
      console.error(`[tool-calling] the chat could not be stored: ${(err as Error).message}`)
      try {
        releaseChat(lease)
      } catch {
        // The lease runs out by itself.
      }
    }
  })
  return stream.toUIMessageStreamResponse({
    onError: (error) => (approvals && error.code === 'invalid_request' ? APPROVAL_REFUSED : userMessage(error)),
  })
}
