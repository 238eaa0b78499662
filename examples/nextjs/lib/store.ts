// The store that keeps every conversation of this app: the package's own (createStore), one per
// server process. Next.js bundles the route handlers and the server actions apart, and `next dev`
// reloads modules on every edit, so the store is kept on globalThis: one pool of connections for
// the whole process.
//
// Where: ANTHROPIC_TOOL_CALLING_STORE (`sqlite:/path/threads.db`, or `postgres://…` for several
// servers), else data/threads.db next to the orders. Every run in a thread is durable: a server
// killed mid-answer loses nothing, and lib/recover-runs.ts finishes the run after a restart.
import { createStore, type Store } from 'anthropic-tool-calling'
import { mkdirSync } from 'node:fs'
import path from 'node:path'

const kept = globalThis as typeof globalThis & { __orderAssistantStore?: Store }

export function getStore(): Store {
  if (kept.__orderAssistantStore) return kept.__orderAssistantStore
  let url = process.env.ANTHROPIC_TOOL_CALLING_STORE
  if (!url) {
    const dir = path.join(/* turbopackIgnore: true */ process.cwd(), 'data')
    mkdirSync(dir, { recursive: true })
    url = `sqlite:${path.join(dir, 'threads.db')}`
  }
  kept.__orderAssistantStore = createStore(url, { leaseMs: leaseMs() })
  return kept.__orderAssistantStore
}

/**
 * How long a run holds its chat without renewing: the package's 30 s by default. A server that
 * dies lets go of its runs after it, and another (or the same one, restarted) takes them over
 * (lib/recover-runs.ts). ORDER_ASSISTANT_LEASE_MS shortens it (the tests kill the server).
 */
export function leaseMs(): number {
  const given = Number(process.env.ORDER_ASSISTANT_LEASE_MS)
  return Number.isInteger(given) && given >= 100 ? given : 30_000
}

/** What this app keeps in a thread's metadata: which page it belongs to, and (on /) its tool-error mode. */
export type ThreadKind = 'chat' | 'ask'
