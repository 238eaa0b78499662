import { registerMcpServer, runWithTools } from "anthropic-tool-calling";

const token = process.env.DOCS_MCP_TOKEN;
await registerMcpServer({ name: "docs", url: "https://mcp.example.com/mcp", headers: { authorization: `Bearer ${token}` } });
await registerMcpServer({ name: "files", command: "npx", args: ["-y", "some-mcp-server"], env: { ROOT: "/data" }, prefix: "files_" });

const { data } = await runWithTools("What does the refund policy say?"); // the servers' tools are offered
console.log(data?.text);
