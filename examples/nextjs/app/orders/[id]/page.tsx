// A server component, the third way to use the loop (after the server action on / and the route
// handler of /chat): the order's row comes from SQLite at once; the model's summary, which takes a
// run of the loop, streams into the same response later, inside <Suspense>.
import type { Metadata } from 'next'
import Link from 'next/link'
import { notFound } from 'next/navigation'
import { connection } from 'next/server'
import { Suspense } from 'react'
import { summariseOrder } from '@/lib/ai/anthropic/tool-calling/service'
import { findOrder } from '@/lib/orders'

type Props = { params: Promise<{ id: string }> }

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { id } = await params
  return { title: `Order #${id} · Order assistant · anthropic-tool-calling` }
}

export default async function OrderPage({ params }: Props) {
  await connection() // read at request time, never at build time
  const { id } = await params
  if (!/^\d{1,12}$/.test(id)) notFound()
  const order = findOrder(id)
  if (!order) notFound()
  return (
    <main>
      <header>
        <nav className="nav">
          <Link href="/">Ask (server action)</Link> · <Link href="/chat">Chat (streaming)</Link>
        </nav>
        <h1>Order #{order.id}</h1>
      </header>
      <section className="orders">
        <table data-testid="order">
          <tbody>
            <tr>
              <th>Customer</th>
              <td>{order.customer}</td>
            </tr>
            <tr>
              <th>Item</th>
              <td>{order.item}</td>
            </tr>
            <tr>
              <th>Status</th>
              <td>
                <span className={`status status-${order.status}`}>{order.status.replace('_', ' ')}</span>
              </td>
            </tr>
            <tr>
              <th>Carrier</th>
              <td>{order.carrier ?? '—'}</td>
            </tr>
            <tr>
              <th>Delivered</th>
              <td>{order.deliveredAt ?? (order.eta ? `expected ${order.eta}` : '—')}</td>
            </tr>
          </tbody>
        </table>
      </section>
      <section className="result" aria-live="polite">
        <h2>Summary for the customer</h2>
        <Suspense
          fallback={
            <p className="pending" data-testid="summary-pending">
              The assistant is writing a summary…
            </p>
          }
        >
          <Summary id={order.id} />
        </Suspense>
      </section>
    </main>
  )
}

/**
 * Awaits a whole run of the loop (runWithTools with `output`); React streams its HTML in when it
 * resolves. The model's answer is an object typed from the schema, rendered field by field.
 */
async function Summary({ id }: { id: string }) {
  const result = await summariseOrder(id)
  if (!result.ok) {
    return (
      <div className="error" role="alert" data-testid="summary-error" data-code={result.code}>
        <p>{result.message}</p>
      </div>
    )
  }
  const { status, eta, carrier, summary } = result.summary
  return (
    <div className="answer">
      <p data-testid="summary">{summary}</p>
      <p className="summary-facts" data-testid="summary-facts">
        <span className={`status status-${status}`} data-testid="summary-status">
          {status.replace('_', ' ')}
        </span>
        {carrier ? <> · {carrier}</> : null}
        {eta ? <> · expected {eta}</> : null}
      </p>
    </div>
  )
}
