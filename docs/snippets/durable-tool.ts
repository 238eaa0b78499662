// lib/tools.ts: a tool with an effect, safe to run again after a crash. A durable run (one with
// a store) that is taken over runs a call that had started again, with ctx.attempt 2 and the
// same ctx.idempotencyKey: your payment or email API drops the repeat.
import { registerTool } from "anthropic-tool-calling";
import { createReturn } from "@/lib/orders";

registerTool({
  definition: {
    name: "create_return",
    description: "Opens a return for a delivered order.",
    input_schema: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] },
  },
  execute: async ({ orderId }, ctx) => {
    if (ctx.attempt > 1) console.info(`create_return for ${orderId}: attempt ${ctx.attempt}`);
    return createReturn(orderId, { idempotencyKey: ctx.idempotencyKey });
  },
  // Or onInterrupted: "report": not run again; the model is told the call was interrupted.
  onInterrupted: "retry",
});
