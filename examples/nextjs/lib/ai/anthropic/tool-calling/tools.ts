// The tools the model may call. Each `execute` is a plain function over the database; a
// `ToolError` carries words meant for the model (and the user), any other throw is a bug.
// Input schemas are zod: the model sees their JSON Schema, and `execute` gets the parsed input,
// typed from the schema (here the order number with its "#" and spaces already stripped).
import { z } from 'zod'
import { registerTool, ToolError } from 'anthropic-tool-calling'
import { createReturn, daysSince, findOrder, RETURN_WINDOW_DAYS, type Order } from '@/lib/orders'

const orderId = z
  .string()
  .describe('The order number, digits only, e.g. "4821"')
  .transform((id) => id.replace(/^#/, '').trim())

/** The order, or a ToolError the model can act on. */
function mustFind(id: string): Order {
  const order = findOrder(id)
  if (!order) throw new ToolError(`Order ${id} does not exist. Ask the user to check the order number.`)
  return order
}

/** The order without the empty fields, as the model sees it. */
function describe(order: Order) {
  return Object.fromEntries(
    Object.entries({ orderId: order.id, status: order.status, item: order.item, carrier: order.carrier, eta: order.eta, deliveredAt: order.deliveredAt, returnId: order.returnId })
      .filter(([, v]) => v !== null),
  )
}

registerTool({
  definition: {
    name: 'get_order_status',
    description: 'Look up the status of an order by its ID: status, item, carrier, expected delivery (eta) or delivery date.',
    input_schema: z.strictObject({ orderId }),
  },
  execute: async ({ orderId }) => describe(mustFind(orderId)),
})

registerTool({
  definition: {
    name: 'solicitar_devolucion',
    description: `Solicita la devolución de un pedido: start a return for a delivered order. Returns are accepted within ${RETURN_WINDOW_DAYS} days of delivery.`,
    input_schema: z.strictObject({
      orderId,
      reason: z.string().describe('Why the customer returns it, in their words').optional(),
    }),
  },
  // A return changes the database: a person says yes first. The run stops with
  // stopReason "approval_required" (the page shows Approve / Decline) and resumes with the answer.
  // The runs are in threads of the store, which signs each approval id with the thread's own secret.
  needsApproval: true,
  execute: async ({ orderId, reason }) => {
    const order = mustFind(orderId)
    if (order.returnId) throw new ToolError(`A return for order ${order.id} was already requested (${order.returnId}).`)
    if (order.status !== 'delivered' || !order.deliveredAt) {
      throw new ToolError(`Order ${order.id} has not been delivered yet (status: ${order.status}), so it cannot be returned yet. It can be returned within ${RETURN_WINDOW_DAYS} days of delivery.`)
    }
    const days = daysSince(order.deliveredAt)
    if (days > RETURN_WINDOW_DAYS) {
      throw new ToolError(`Order ${order.id} was delivered on ${order.deliveredAt}, ${days} days ago. Returns are accepted only within ${RETURN_WINDOW_DAYS} days of delivery.`)
    }
    const { returnId } = createReturn(order.id, reason?.trim() || null)
    return `Return ${returnId} started for order ${order.id} (${order.item}), delivered ${days} days ago. The refund is issued when the item reaches our warehouse.`
  },
})
