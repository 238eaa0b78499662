// The store that keeps every conversation of this app: the package's own (createStore), one per
// server process. Next.js bundles the route handlers and the server actions apart, and `next dev`
// reloads modules on every edit, so the store is kept on globalThis: one pool of connections for
// the whole process.
//
// Where: ANTHROPIC_TOOL_CALLING_STORE (`sqlite:/path/threads.db`, or `postgres://…` for several
// servers), else data/threads.db next to the orders.
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
  kept.__orderAssistantStore = createStore(url)
  return kept.__orderAssistantStore
}

/** What this app keeps in a thread's metadata: which page it belongs to, and (on /) its tool-error mode. */
export type ThreadKind = 'chat' | 'ask'
