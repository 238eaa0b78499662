import { registerTool, runWithTools } from "anthropic-tool-calling";
import { db } from "@/lib/db";

registerTool({
  definition: {
    name: "get_order_status",
    description: "Look up the status of an order by its ID",
    input_schema: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] },
  },
  // ctx = { toolUseId, signal, context }
  execute: async ({ orderId }, ctx) => db.orders.find(orderId),
});

const { data, error } = await runWithTools("What's the status of order #4821?");
if (error) console.error(error.code, error.message);
else console.log(data.text, data.toolCalls);
