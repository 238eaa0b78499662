// app/api/chat/route.ts, when the page posts the whole chat (useChat's default). Prefer the
// server-held route (route.ts): see "Two patterns" under Security.
import { fromUIMessages, streamWithTools } from "anthropic-tool-calling";
import "@/lib/tools"; // registers the tools
import { currentUserId } from "@/lib/session";

export async function POST(req: Request) {
  let prompt;
  try {
    const { messages } = await req.json();
    prompt = fromUIMessages(messages); // UI messages → Messages API params (tool calls become tool_use + tool_result)
  } catch (e) {
    return new Response((e as Error).message, { status: 400 });
  }
  return streamWithTools(prompt, {
    signal: req.signal, // the browser went away: the run is aborted
    system: "You are the support assistant of an online shop. Use the tools; never guess.",
    onToolError: "continue", // the model hears a ToolError and tells the user
    // The user's answers to approval requests (addToolApprovalResponse) in the posted messages.
    // A call the posted chat leaves waiting runs only with a decision this server signed for
    // exactly that call; without approvals (or with a forged one) the run is refused, nothing runs.
    approvals: prompt.approvals,
    approvalScope: await currentUserId(), // an approval issued to another user is refused
  }).toUIMessageStreamResponse(); // the AI SDK UI message stream protocol
}
