// The chat page. Each chat lives on the server (lib/chats.ts) under an id the server makes, and
// its address carries that id: /chat?id=<id>. Reloading it, or coming back to it later, shows the
// stored conversation again, a pending approval included; /chat alone starts a new chat.
import type { Metadata } from 'next'
import Link from 'next/link'
import { redirect } from 'next/navigation'
import { createChat, findChat } from '@/lib/chats'
import { toUIMessages } from '@/lib/ai/anthropic/tool-calling/ui-history'
import { Chat } from './chat'

export const metadata: Metadata = { title: 'Chat · Order assistant · anthropic-tool-calling' }

export default async function ChatPage({ searchParams }: { searchParams: Promise<{ id?: string | string[]; missing?: string }> }) {
  const { id, missing } = await searchParams
  const chat = typeof id === 'string' ? findChat(id, 'chat') : undefined
  // No chat, or one this server does not have (a mistyped or old link): a new one, at its own address.
  if (!chat) redirect(`/chat?id=${createChat('chat', 'continue').id}${id !== undefined ? '&missing=1' : ''}`)
  const messages = toUIMessages(chat.messages, { pendingApprovals: chat.pendingApprovals ?? [], decisions: chat.decisions })
  return (
    <main>
      <header>
        <nav className="nav">
          <Link href="/">Ask (server action)</Link> · <strong>Chat (streaming)</strong> ·{' '}
          <Link href="/chat" prefetch={false} data-testid="new-chat">
            New chat
          </Link>
        </nav>
        <h1>Order assistant chat</h1>
        <p className="lead">
          <code>useChat</code> posts to <code>app/api/chat/route.ts</code>, which runs <code>streamWithTools</code>: the answer
          and every tool call appear as the model writes them. The conversation is kept on the server; this page&apos;s address
          brings it back.
        </p>
        {missing && messages.length === 0 && (
          <p className="notice" data-testid="chat-missing">
            That chat was not found, so this is a new one.
          </p>
        )}
      </header>
      <Chat key={chat.id} chatId={chat.id} initialMessages={messages} />
    </main>
  )
}
