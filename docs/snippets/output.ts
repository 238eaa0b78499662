import { runWithTools } from "anthropic-tool-calling";
import { z } from "zod";
import { render } from "@/lib/ui";

const { data, error } = await runWithTools("Summarise order #4821 for the customer", {
  output: z.object({
    status: z.enum(["processing", "shipped", "delivered"]),
    eta: z.string().nullable(),
    summary: z.string().min(1),
  }),
});
// data.output: { status: "processing" | "shipped" | "delivered"; eta: string | null; summary: string }
if (data?.output) render(data.output.status, data.output.summary);
else if (error?.code === "output_validation_error") console.error(error.message, error.text);
