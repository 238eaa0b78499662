import { registerTool } from "anthropic-tool-calling";
import { z } from "zod";
import { isKnownOrder, startReturn } from "@/lib/orders";

registerTool({
  definition: {
    name: "start_return",
    description: "Start a return for a delivered order",
    input_schema: z.object({
      orderId: z.string().transform((id) => id.replace(/^#/, "")).refine(isKnownOrder, "No such order"),
      reason: z.enum(["damaged", "wrong_item", "other"]).default("other"),
    }),
  },
  // input: { orderId: string; reason: "damaged" | "wrong_item" | "other" }
  execute: async ({ orderId, reason }) => startReturn(orderId, reason),
});
