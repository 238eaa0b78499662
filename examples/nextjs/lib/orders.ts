// The shop's data access: plain functions over the SQLite database, knowing nothing of the model.
import { getDb } from './db'

export type OrderStatus = 'processing' | 'shipped' | 'delivered' | 'return_requested'

export interface Order {
  id: string
  customer: string
  item: string
  status: OrderStatus
  carrier: string | null
  eta: string | null
  deliveredAt: string | null
  returnId: string | null
}

export interface ReturnRequest {
  returnId: string
  orderId: string
  reason: string | null
  requestedAt: string
}

/** Returns are accepted up to this many days after delivery. */
export const RETURN_WINDOW_DAYS = 30

const SELECT = `
  SELECT o.id, o.customer, o.item, o.status, o.carrier, o.eta, o.delivered_at AS deliveredAt, r.id AS returnId
  FROM orders o LEFT JOIN returns r ON r.order_id = o.id`

export function listOrders(): Order[] {
  return getDb().prepare(`${SELECT} ORDER BY o.id`).all() as Order[]
}

export function findOrder(id: string): Order | undefined {
  return getDb().prepare(`${SELECT} WHERE o.id = ?`).get(id) as Order | undefined
}

/** Whole days from `date` (`YYYY-MM-DD`) to today, UTC. */
export function daysSince(date: string, now = new Date()): number {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  return Math.floor((today - Date.parse(`${date}T00:00:00Z`)) / 86_400_000)
}

/** Records a return and marks the order; the caller has checked that it may be returned. */
export function createReturn(orderId: string, reason: string | null): ReturnRequest {
  const db = getDb()
  const request: ReturnRequest = { returnId: `RET-${orderId}`, orderId, reason, requestedAt: new Date().toISOString() }
  db.transaction(() => {
    db.prepare('INSERT INTO returns (id, order_id, reason, requested_at) VALUES (?, ?, ?, ?)').run(request.returnId, orderId, reason, request.requestedAt)
    db.prepare("UPDATE orders SET status = 'return_requested' WHERE id = ?").run(orderId)
  })()
  return request
}
