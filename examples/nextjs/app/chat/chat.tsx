'use client'
// The chat: useChat (from @ai-sdk/react) posts the conversation to /api/chat and renders the UI
// message stream as it comes: text parts grow, tool parts go input-streaming → input-available →
// output-available (or output-error).
import { useChat } from '@ai-sdk/react'
import type { DynamicToolUIPart, ToolUIPart, UIMessage } from 'ai'
import { useState, type FormEvent } from 'react'

const EXAMPLES = ["What's the status of order #4821?", 'And order #1234?', 'I want to return order #1234']

export function Chat() {
  const { messages, sendMessage, status, stop, error } = useChat() // POST /api/chat by default
  const [input, setInput] = useState('')
  const busy = status === 'submitted' || status === 'streaming'

  function onSubmit(e: FormEvent) {
    e.preventDefault()
    const text = input.trim()
    if (!text || busy) return
    sendMessage({ text })
    setInput('')
  }

  return (
    <section className="chat" data-testid="chat" data-status={status}>
      <ol className="messages">
        {messages.map((m) => (
          <Message key={m.id} message={m} />
        ))}
      </ol>
      {status === 'submitted' && <p className="pending">Thinking…</p>}
      {error && (
        <p className="error" role="alert" data-testid="chat-error">
          {error.message}
        </p>
      )}
      <form onSubmit={onSubmit} className="ask">
        <label htmlFor="message">Message</label>
        <div className="row">
          <input id="message" value={input} onChange={(e) => setInput(e.target.value)} placeholder={EXAMPLES[0]} autoComplete="off" />
          <button type="submit" disabled={busy || input.trim() === ''}>
            Send
          </button>
          <button type="button" onClick={() => stop()} disabled={!busy}>
            Stop
          </button>
        </div>
        <p className="examples">Try: {EXAMPLES.map((q) => <q key={q}>{q}</q>)}</p>
      </form>
    </section>
  )
}

function Message({ message }: { message: UIMessage }) {
  return (
    <li className={`message ${message.role}`} data-testid={`message-${message.role}`}>
      <span className="who">{message.role === 'user' ? 'You' : 'Assistant'}</span>
      {message.parts.map((part, i) => {
        if (part.type === 'text') {
          return (
            <p key={i} className="text" data-testid="text" data-state={part.state}>
              {part.text}
            </p>
          )
        }
        if (part.type.startsWith('tool-') || part.type === 'dynamic-tool') {
          return <ToolCall key={i} part={part as ToolUIPart | DynamicToolUIPart} />
        }
        return null // step-start, reasoning, …
      })}
    </li>
  )
}

function ToolCall({ part }: { part: ToolUIPart | DynamicToolUIPart }) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length)
  return (
    <div className={`tool-call ${part.state === 'output-error' ? 'failed' : 'ok'}`} data-testid="tool-call" data-tool={name} data-state={part.state}>
      <div className="name">
        <code data-testid="tool-name">{name}</code>
        <span className="badge">{STATE[part.state] ?? part.state}</span>
      </div>
      <dl>
        <dt>input</dt>
        <dd>
          <pre data-testid="tool-input">{part.state === 'input-streaming' ? '…' : JSON.stringify(part.input, null, 2)}</pre>
        </dd>
        {part.state === 'output-available' && (
          <>
            <dt>output</dt>
            <dd>
              <pre data-testid="tool-output">{JSON.stringify(part.output, null, 2)}</pre>
            </dd>
          </>
        )}
        {part.state === 'output-error' && (
          <>
            <dt>error</dt>
            <dd>
              <pre data-testid="tool-error">{part.errorText}</pre>
            </dd>
          </>
        )}
      </dl>
    </div>
  )
}

const STATE: Record<string, string> = {
  'input-streaming': 'writing input…',
  'input-available': 'running…',
  'output-available': 'ok',
  'output-error': 'failed',
}
