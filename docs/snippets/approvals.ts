import { registerTool, runWithTools, type ApprovalDecision } from "anthropic-tool-calling";
import { z } from "zod";
import { store } from "@/lib/store";
import { createReturn } from "@/lib/orders";

registerTool({
  definition: { name: "start_return", description: "Start a return", input_schema: z.object({ orderId: z.string() }) },
  needsApproval: true, // or (input, ctx) => <true when this call needs a yes>
  execute: async ({ orderId }, ctx) => createReturn(orderId, { idempotencyKey: ctx.toolUseId }),
});

/** A new message: the run may stop and wait for a person's yes. */
export async function ask(threadId: string, userId: string, question: string) {
  // The store keeps the thread, paused or not; show the page
  // first.data.pendingApprovals ({ approvalId, toolUseId, toolName, input }) with Approve / Decline.
  return runWithTools(question, { store, thread: { id: threadId, owner: userId } });
}

/** A later request carries only the person's answer: the approval id and which button. */
export async function answer(threadId: string, userId: string, approvalId: string, approved: boolean) {
  const decision: ApprovalDecision = approved ? { approvalId, approved: true } : { approvalId, approved: false, reason: "Not this one" };
  // The history is the store's; the decision is used up before its call runs, so posting it twice runs nothing twice.
  return runWithTools({ approvals: [decision] }, { store, thread: { id: threadId, owner: userId } });
}
