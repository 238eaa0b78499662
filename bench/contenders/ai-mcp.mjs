// Vercel AI SDK with its tools from an MCP server: `createMCPClient` of @ai-sdk/mcp with its
// Streamable HTTP transport (`{ type: 'http', url }`), created and its tools listed once, then
// generateText as ai.mjs runs it. Its tools are the server's own (JSON Schema inputs, no Zod), and
// each call's MCP content goes back to the model as text parts.
import { createMCPClient } from '@ai-sdk/mcp'
import { modelOf, runner } from './ai.mjs'

export async function setup(config) {
  const mcp = await createMCPClient({ transport: { type: 'http', url: config.mcpUrl } })
  const tools = await mcp.tools()
  return { info: {}, run: runner(modelOf(config), tools, config.workload), close: () => mcp.close() }
}
