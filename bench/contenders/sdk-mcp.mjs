// @anthropic-ai/sdk with its tools from an MCP server: an MCP `Client` of @modelcontextprotocol/sdk
// over `StreamableHTTPClientTransport`, connected and its tools listed once, turned into runnable
// tools by the SDK's own helper (`mcpTools` of @anthropic-ai/sdk/helpers/beta/mcp), then the tool
// runner as sdk.mjs runs it. The helper hands each call's MCP content back as text blocks.
import Anthropic from '@anthropic-ai/sdk'
import { mcpTools } from '@anthropic-ai/sdk/helpers/beta/mcp'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { toolRunnerRun } from '../peer-tools.mjs'

export async function setup({ url, mcpUrl, apiKey, workload }) {
  const client = new Anthropic({ apiKey, baseURL: url })
  const mcp = new Client({ name: 'bench-sdk-mcp', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl))
  await mcp.connect(transport)
  const tools = mcpTools((await mcp.listTools()).tools, mcp)
  return {
    info: { version: Anthropic.VERSION ?? null },
    run: toolRunnerRun(client, tools, workload),
    // The session ends (DELETE) before the client closes, so the server lets go of it.
    async close() {
      await transport.terminateSession()
      await mcp.close()
    },
  }
}
