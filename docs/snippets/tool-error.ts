import { registerTool, ToolError } from "anthropic-tool-calling";
import { z } from "zod";
import { db } from "@/lib/db";
import { daysSince, startReturn } from "@/lib/orders";

registerTool({
  definition: {
    name: "start_return",
    description: "Start a return for an order delivered in the last 30 days",
    input_schema: z.object({ orderId: z.string() }),
  },
  execute: async ({ orderId }) => {
    const order = await db.orders.find(orderId);
    if (!order) throw new ToolError(`Order ${orderId} does not exist. Ask the user to check the order number; do not retry with the same number.`);
    if (!order.deliveredAt) throw new ToolError(`Order ${orderId} has not been delivered yet, so it cannot be returned yet. Tell the user.`);
    if (daysSince(order.deliveredAt) > 30) throw new ToolError(`Order ${orderId} was delivered more than 30 days ago and can no longer be returned. Tell the user; retrying will not help.`);
    return startReturn(order.id, "other");
  },
});
