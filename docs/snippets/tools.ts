// lib/tools.ts: registers the tools once, when it is first imported.
import { registerTool, ToolError } from "anthropic-tool-calling";
import { z } from "zod";
import { db } from "@/lib/db";

registerTool({
  definition: {
    name: "get_order_status",
    description: "Look up the status of an order by its number",
    input_schema: z.object({ orderId: z.string().transform((id) => id.replace(/^#/, "").trim()) }),
  },
  execute: async ({ orderId }) => {
    const order = await db.orders.find(orderId);
    // A ToolError's words reach the model (and through it the user); any other throw stays on the server.
    if (!order) throw new ToolError(`Order ${orderId} does not exist. Ask the user to check the number.`);
    return { orderId: order.id, status: order.status };
  },
});
