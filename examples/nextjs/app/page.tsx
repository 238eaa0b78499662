// A server component: it reads the orders straight from the database at request time and renders
// the form (a client component) that posts to the server action.
import Link from 'next/link'
import { connection } from 'next/server'
import { listOrders, type Order } from '@/lib/orders'
import { AskForm } from './ask-form'

function loadOrders(): { orders: Order[]; problem: string | null } {
  try {
    return { orders: listOrders(), problem: null }
  } catch (err) {
    return { orders: [], problem: (err as Error).message }
  }
}

export default async function Page() {
  await connection() // better-sqlite3 is synchronous: keep the query out of the build-time prerender
  const { orders, problem } = loadOrders()
  return (
    <main>
      <header>
        <nav className="nav">
          <strong>Ask (server action)</strong> ·{' '}
          {/* A plain link: /chat/new makes a chat for this browser, so it must not be prefetched. */}
          <a href="/chat/new">Chat (streaming)</a>
        </nav>
        <h1>Order assistant</h1>
        <p className="lead">
          Ask about an order. A server action runs <code>runWithTools</code>: the model calls{' '}
          <code>get_order_status</code> and <code>solicitar_devolucion</code>, which read and write the SQLite database below,
          and <code>get_shipping_estimate</code>, the tool of a shipping partner&apos;s MCP server.
        </p>
      </header>

      <AskForm />

      <section className="orders" aria-labelledby="orders-title">
        <h2 id="orders-title">Orders in the database</h2>
        {problem ? (
          <p className="problem">{problem}</p>
        ) : (
          <table data-testid="orders">
            <thead>
              <tr>
                <th>Order</th>
                <th>Customer</th>
                <th>Item</th>
                <th>Status</th>
                <th>Delivered</th>
              </tr>
            </thead>
            <tbody>
              {orders.map((o) => (
                <tr key={o.id} data-order={o.id}>
                  <td>
                    <Link className="order-link" href={`/orders/${o.id}`} title="The order's page, with a summary written by the model">
                      #{o.id}
                    </Link>
                  </td>
                  <td>{o.customer}</td>
                  <td>{o.item}</td>
                  <td>
                    <span className={`status status-${o.status}`}>{o.status.replace('_', ' ')}</span>
                  </td>
                  <td>{o.deliveredAt ?? (o.eta ? `expected ${o.eta}` : '—')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p className="hint">Returns are accepted within 30 days of delivery.</p>
      </section>
    </main>
  )
}
