import { registerTool, toolResult } from "anthropic-tool-calling";
import { z } from "zod";
import { labelPng } from "@/lib/orders";

registerTool({
  definition: { name: "return_label", description: "The return label of an order, as an image", input_schema: z.object({ orderId: z.string() }) },
  execute: async ({ orderId }) =>
    toolResult([
      { type: "text", text: `Label for ${orderId}:` },
      { type: "image", source: { type: "base64", media_type: "image/png", data: await labelPng(orderId) } },
    ]),
});
