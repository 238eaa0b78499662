// The route handler `useChat` posts to (app/chat/chat.tsx). It turns the UI messages back into
// Messages API params, runs the tool-calling loop with every reply streamed, and answers in the
// AI SDK UI message stream protocol, which `useChat` renders as the text and tool calls arrive.
import { fromUIMessages, streamWithTools } from 'anthropic-tool-calling'
import '@/lib/ai/anthropic/tool-calling/tools' // registers get_order_status and solicitar_devolucion
import { logRun, SYSTEM } from '@/lib/ai/anthropic/tool-calling/service'

export async function POST(req: Request) {
  let prompt
  try {
    const { messages } = await req.json()
    // Throws a TypeError naming the message and part when the body is not UI messages. The
    // user's answers to approval requests (addToolApprovalResponse) come out as `prompt.approvals`.
    prompt = fromUIMessages(messages)
  } catch (e) {
    return new Response((e as Error).message, { status: 400 })
  }
  // The system prompt is the server's own: `prompt.system` (system messages sent by the browser) is ignored.
  const stream = streamWithTools(prompt, {
    // The browser went away (closed tab, stop button): the run is aborted, no further request is made.
    signal: req.signal,
    system: SYSTEM,
    // A ToolError's words go to the model, which tells the user; the chat goes on.
    onToolError: 'continue',
    maxToolIterations: 5,
    toolTimeoutMs: 10_000,
    // Resumes a run paused for approval (solicitar_devolucion): approved calls run, declined ones
    // are told to the model. An edited call or a made-up approval id is refused (invalid_request).
    approvals: prompt.approvals,
  })
  // The developer's view of failures goes to the server log; the browser gets user-safe text only.
  stream.result.then((result) => logRun(result, 'chat'))
  return stream.toUIMessageStreamResponse()
}
