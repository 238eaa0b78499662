// A small MCP server over stdio, standing for a shipping partner's service the app does not own: its tool
// reaches the model through MCP instead of being written in the app.
//
//   node mcp/shipping-server.mjs        (the app starts it as a child process and talks on stdin/stdout)
//
// The estimate is made up but deterministic, so a conversation about an order reads the same every time.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { z } from 'zod'

const WAREHOUSES = ['Madrid', 'Milan', 'Lyon', 'Rotterdam']

/** The same order id always gets the same warehouse and delivery time (order 4821: Rotterdam, 2 days). */
function shippingEstimate(orderId) {
  const seed = [...orderId].reduce((sum, ch) => sum + ch.charCodeAt(0), 0)
  const warehouse = WAREHOUSES[seed % WAREHOUSES.length]
  const days = 2 + (seed % 3)
  return `Order ${orderId} ships from ${warehouse}; estimated delivery ${days} business days.`
}

const server = new McpServer({ name: 'shipping', version: '1.0.0' })

server.registerTool(
  'get_shipping_estimate',
  {
    description: 'Estimate where an order ships from and how many business days delivery takes.',
    inputSchema: { order_id: z.string().regex(/^[0-9]+$/).describe('The order number, digits only, e.g. "4821"') },
  },
  async ({ order_id }) => ({ content: [{ type: 'text', text: shippingEstimate(order_id) }] }),
)

await server.connect(new StdioServerTransport())
