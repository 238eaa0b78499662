import type { Metadata } from 'next'
import Link from 'next/link'
import { Chat } from './chat'

export const metadata: Metadata = { title: 'Chat · Order assistant · anthropic-tool-calling' }

export default function ChatPage() {
  return (
    <main>
      <header>
        <nav className="nav">
          <Link href="/">Ask (server action)</Link> · <strong>Chat (streaming)</strong>
        </nav>
        <h1>Order assistant chat</h1>
        <p className="lead">
          <code>useChat</code> posts to <code>app/api/chat/route.ts</code>, which runs <code>streamWithTools</code>: the answer
          and every tool call appear as the model writes them. Each message continues the same conversation.
        </p>
      </header>
      <Chat />
    </main>
  )
}
