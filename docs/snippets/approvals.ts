import { registerTool, runWithTools, type ApprovalDecision } from "anthropic-tool-calling";
import { z } from "zod";
import { loadChat, saveChat } from "@/lib/chats";
import { createReturn } from "@/lib/orders";

// .env: ANTHROPIC_TOOL_CALLING_SECRET=<at least 32 characters: openssl rand -hex 32; the same on every server>
registerTool({
  definition: { name: "start_return", description: "Start a return", input_schema: z.object({ orderId: z.string() }) },
  needsApproval: true, // or (input, ctx) => <true when this call needs a yes>
  execute: async ({ orderId }, ctx) => createReturn(orderId, { idempotencyKey: ctx.toolUseId }),
});

/** A new message: the run may stop and wait for a person's yes. */
export async function ask(chatId: string, userId: string, question: string) {
  const history = (await loadChat(chatId, userId)) ?? [];
  const first = await runWithTools([...history, { role: "user", content: question }], { approvalScope: chatId });
  if (first.data?.stopReason === "approval_required") {
    // Keep the paused history on the server, and show the page
    // first.data.pendingApprovals ({ approvalId, toolUseId, toolName, input }) with Approve / Decline.
    await saveChat(chatId, first.data.messages);
  }
  return first;
}

/** A later request carries only the person's answer: the approval id and which button. */
export async function answer(chatId: string, userId: string, approvalId: string, approved: boolean) {
  const messages = await loadChat(chatId, userId); // the server's copy, not one the page posted
  if (!messages) throw new Error("No such chat");
  const decision: ApprovalDecision = approved ? { approvalId, approved: true } : { approvalId, approved: false, reason: "Not this one" };
  return runWithTools(messages, { approvalScope: chatId, approvals: [decision] });
}
