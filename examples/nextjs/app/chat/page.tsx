// The chat page. Each chat is a thread of the package's store (lib/store.ts), owned by the
// browser's session (lib/session.ts), and its address carries the thread's id: /chat?id=<id>.
// Reloading it, or coming back to it later, shows the stored conversation again, a pending
// approval included. /chat alone, an id this browser does not own (another browser's chat, a
// mistyped or old link) or no session yet: a new chat, made by /chat/new (a route handler, which
// may set the session cookie).
import type { Metadata } from 'next'
import Link from 'next/link'
import { redirect } from 'next/navigation'
import type { UIMessage } from 'ai'
import { CHAT_ID } from '@/lib/ai/anthropic/tool-calling/chat-request'
import { sessionOwner } from '@/lib/session'
import { getStore } from '@/lib/store'
import { Chat } from './chat'

export const metadata: Metadata = { title: 'Chat · Order assistant · anthropic-tool-calling' }

export default async function ChatPage({ searchParams }: { searchParams: Promise<{ id?: string | string[]; missing?: string }> }) {
  const { id, missing } = await searchParams
  const owner = await sessionOwner()
  const thread = owner && typeof id === 'string' && CHAT_ID.test(id) ? await getStore().getThread(id, { owner }) : null
  if (!thread || thread.metadata.kind !== 'chat') {
    // Sent here from /chat/new, still without a session: the browser does not keep cookies.
    if (!owner && missing) return <p className="error">This chat needs a cookie to know which chats are yours. Allow cookies for this site and reload.</p>
    redirect(id !== undefined ? '/chat/new?missing=1' : '/chat/new')
  }
  // The stored conversation as useChat starts from it: tool calls in the state their result
  // left them, a call that waits for approval as approval-requested. (The package types its parts
  // loosely, without depending on the AI SDK: they are the SDK's UI message parts.)
  let messages = thread.uiMessages as unknown as UIMessage[]
  // An answer in progress is not shown from the store: useChat({ resume: true }) gets all of it
  // from the run's stream (app/api/chat/[id]/stream), the steps already kept included.
  if (thread.status === 'running') messages = messages.slice(0, messages.findLastIndex((m) => m.role === 'user') + 1)
  return (
    <main>
      <header>
        <nav className="nav">
          <Link href="/">Ask (server action)</Link> · <strong>Chat (streaming)</strong> ·{' '}
          {/* A plain link: /chat/new makes a chat, so it must not be prefetched. */}
          <a href="/chat/new" data-testid="new-chat">
            New chat
          </a>
        </nav>
        <h1>Order assistant chat</h1>
        <p className="lead">
          <code>useChat</code> posts to <code>app/api/chat/route.ts</code>, which runs <code>streamWithTools</code>: the answer
          and every tool call appear as the model writes them. The conversation is kept in the store, for this browser only;
          this page&apos;s address brings it back.
        </p>
        {missing && messages.length === 0 && (
          <p className="notice" data-testid="chat-missing">
            That chat was not found, so this is a new one.
          </p>
        )}
      </header>
      <Chat key={thread.id} chatId={thread.id} initialMessages={messages} />
    </main>
  )
}
