import { runWithTools } from "anthropic-tool-calling";

const { data } = await runWithTools("Which of my orders can still be returned?", {
  thinking: { type: "enabled", budget_tokens: 4096 }, // or { type: "adaptive" }
  maxTokens: 16000,
  outputConfig: { effort: "medium" },
  cacheControl: { type: "ephemeral" }, // automatic prompt caching of the growing history
  betas: ["context-management-2025-06-27"], // the anthropic-beta header
  serverTools: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }],
});
if (data) {
  console.log(data.reasoning); // the thinking text of the run's replies, joined by a blank line
  console.log(data.usage); // { inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens }, summed
}
