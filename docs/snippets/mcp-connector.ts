import { runWithTools } from "anthropic-tool-calling";

const token = process.env.DOCS_MCP_TOKEN;
const { data } = await runWithTools("What does the refund policy say?", {
  mcpServers: [{ name: "docs", url: "https://mcp.example.com/mcp", authorizationToken: token, tools: ["search"] }],
});
console.log(data?.text);
