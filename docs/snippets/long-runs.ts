import { runWithTools, type MessageParam } from "anthropic-tool-calling";

export async function longRun(history: MessageParam[]) {
  const { data, error } = await runWithTools(history, {
    contextManagement: {
      edits: [
        { type: "compact_20260112", trigger: { type: "input_tokens", value: 100_000 }, pause_after_compaction: true },
        { type: "clear_tool_uses_20250919", keep: { type: "tool_uses", value: 3 } },
      ],
    }, // the betas compact-2026-01-12 and context-management-2025-06-27 are added
    maxTotalTokens: 200_000, // a hard budget for the whole run
    maxIdenticalCalls: 2, // the same search with the same input runs twice at most
  });
  if (error?.code === "budget_exceeded") console.log("spent", error.usage);
  if (!data) return;
  data.messages; // holds the compaction block: send it back as it is, and the API reads the summary, not what precedes it
  data.usage; // includes the compaction's own tokens (usage.iterations), which a reply's top-level usage leaves out
  data.appliedEdits; // what context editing cleared, reply by reply: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 3, … }]
}
