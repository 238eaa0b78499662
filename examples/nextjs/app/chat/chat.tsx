'use client'
// The chat: useChat (from @ai-sdk/react) posts to /api/chat and renders the UI message stream as
// it comes: text parts grow, tool parts go input-streaming → input-available → output-available
// (or output-error). A call of a tool that needs approval stops at approval-requested: Approve /
// Decline call addToolApprovalResponse, and useChat posts the answer (sendAutomaticallyWhen), so
// the run goes on.
//
// The conversation is the server's: the page starts from the messages the server rebuilt from
// it, and each post carries only the chat's id and what is new (see `newPart` below), never the
// history, so nothing the page holds can change what the model said or which calls run.
//
// An answer survives the page: with `resume: true`, useChat asks GET /api/chat/<id>/stream when
// the page loads, which replays the answer in progress and follows it (a reload, a second tab).
// Stop posts to /api/chat/stop, which stops the run on the server (stopRun): every tab that shows
// the answer sees it end with the stop.
import { useChat } from '@ai-sdk/react'
import {
  DefaultChatTransport,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type DynamicToolUIPart,
  type ToolUIPart,
  type UIMessage,
} from 'ai'
import { useEffect, useState, type FormEvent } from 'react'

const EXAMPLES = ["What's the status of order #4821?", 'And order #1234?', 'When will order 4821 arrive?', 'I want to return order #6060']

type Answer = (response: { id: string; approved: boolean; reason?: string }) => void | PromiseLike<void>

/**
 * What a post sends: the chat's id (`id`: useChat's id, which is the server's chat id) and the
 * last message only. A new message is its text; the assistant message the person answered is
 * cut down to the answers (each approval id, yes or no, the reason): the route takes nothing else.
 */
const transport = new DefaultChatTransport<UIMessage>({
  api: '/api/chat',
  prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, message: newPart(messages[messages.length - 1]) } }),
  fetch: watchingForStop,
})

/** Told when a stream (posted or resumed) ends with the run's stop (the `abort` chunk). */
const onStopped = new Set<() => void>()

/** fetch, with each UI message stream watched for the `abort` chunk useChat does not show. */
async function watchingForStop(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const res = await fetch(input, init)
  if (!res.body || !res.headers.get('x-vercel-ai-ui-message-stream')) return res
  const [mine, watched] = res.body.tee()
  void (async () => {
    const decoder = new TextDecoder()
    let tail = ''
    try {
      for await (const bytes of watched as unknown as AsyncIterable<Uint8Array>) {
        tail = (tail + decoder.decode(bytes, { stream: true })).slice(-4096)
        if (tail.includes('data: {"type":"abort"')) {
          for (const tell of onStopped) tell()
          return
        }
      }
    } catch {
      // The page went away: nothing to tell.
    }
  })()
  return new Response(mine, { status: res.status, statusText: res.statusText, headers: res.headers })
}

function newPart(message: UIMessage | undefined) {
  if (!message) return null
  if (message.role === 'user') {
    return { id: message.id, role: 'user', parts: message.parts.flatMap((p) => (p.type === 'text' ? [{ type: 'text', text: p.text }] : [])) }
  }
  const answers = message.parts.flatMap((p) =>
    isToolUIPart(p) && p.state === 'approval-responded' ? [{ type: p.type, state: p.state, approval: { id: p.approval.id, approved: p.approval.approved, ...(p.approval.reason ? { reason: p.approval.reason } : {}) } }] : [],
  )
  return { id: message.id, role: message.role, parts: answers }
}

/** A call in the last message that waits for the person's answer: the next message waits too. */
const waitingForApproval = (messages: UIMessage[]) => messages[messages.length - 1]?.parts.some((p) => isToolUIPart(p) && p.state === 'approval-requested') ?? false

export function Chat({ chatId, initialMessages }: { chatId: string; initialMessages: UIMessage[] }) {
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id: chatId,
    messages: initialMessages,
    transport,
    // Once every pending call of the last step has an answer, post the answers: the route
    // resumes the stored run with them.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    // An answer in progress (after a reload, in another tab) is followed from the server.
    resume: true,
  })
  const [input, setInput] = useState('')
  const [stopped, setStopped] = useState(false)
  useEffect(() => {
    const tell = () => setStopped(true)
    onStopped.add(tell)
    return () => {
      onStopped.delete(tell)
    }
  }, [])

  /** Stops the run on the server: the stream (here and in every other tab) ends with the stop. */
  async function stopRun() {
    await fetch('/api/chat/stop', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: chatId }) })
  }
  const busy = status === 'submitted' || status === 'streaming'
  const waiting = waitingForApproval(messages)

  function onSubmit(e: FormEvent) {
    e.preventDefault()
    const text = input.trim()
    if (!text || busy || waiting) return
    setStopped(false)
    sendMessage({ text })
    setInput('')
  }

  return (
    <section className="chat" data-testid="chat" data-status={status} data-chat-id={chatId}>
      <ol className="messages">
        {messages.map((m) => (
          <Message key={m.id} message={m} answer={addToolApprovalResponse} busy={busy} />
        ))}
      </ol>
      {status === 'submitted' && <p className="pending">Thinking…</p>}
      {stopped && !busy && (
        <p className="notice" data-testid="chat-stopped">
          The answer was stopped.
        </p>
      )}
      {error && (
        <p className="error" role="alert" data-testid="chat-error">
          {error.message}
        </p>
      )}
      <form onSubmit={onSubmit} className="ask">
        <label htmlFor="message">Message</label>
        <div className="row">
          <input id="message" value={input} onChange={(e) => setInput(e.target.value)} placeholder={EXAMPLES[0]} autoComplete="off" />
          <button type="submit" disabled={busy || waiting || input.trim() === ''}>
            Send
          </button>
          <button type="button" onClick={() => void stopRun()} disabled={!busy}>
            Stop
          </button>
        </div>
        {waiting ? <p className="examples">Answer the approval request above first.</p> : <p className="examples">Try: {EXAMPLES.map((q) => <q key={q}>{q}</q>)}</p>}
      </form>
    </section>
  )
}

function Message({ message, answer, busy }: { message: UIMessage; answer: Answer; busy: boolean }) {
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
          return <ToolCall key={i} part={part as ToolUIPart | DynamicToolUIPart} answer={answer} busy={busy} />
        }
        return null // step-start, reasoning, …
      })}
    </li>
  )
}

function ToolCall({ part, answer, busy }: { part: ToolUIPart | DynamicToolUIPart; answer: Answer; busy: boolean }) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length)
  // A declined call: answered with the denial (output-error, or output-denied), the part keeps the
  // user's answer in `approval`.
  const approval = 'approval' in part ? part.approval : undefined
  const declined = part.state === 'output-denied' || (approval?.approved === false && part.state !== 'approval-requested')
  const kind = declined ? 'declined' : part.state === 'output-error' ? 'failed' : 'ok'
  return (
    <div className={`tool-call ${kind}`} data-testid="tool-call" data-tool={name} data-state={part.state} data-kind={kind}>
      <div className="name">
        <code data-testid="tool-name">{name}</code>
        <span className="badge">{declined ? 'declined' : (STATE[part.state] ?? part.state)}</span>
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
        {declined && (
          <>
            <dt>not run</dt>
            <dd>
              <pre data-testid="tool-declined">You declined this call{approval?.reason ? `: ${approval.reason}` : '.'}</pre>
            </dd>
          </>
        )}
        {part.state === 'output-error' && !declined && (
          <>
            <dt>error</dt>
            <dd>
              <pre data-testid="tool-error">{part.errorText}</pre>
            </dd>
          </>
        )}
      </dl>
      {part.state === 'approval-requested' && <ApprovalButtons part={part} name={name} answer={answer} busy={busy} />}
    </div>
  )
}

/** Approve / Decline (with an optional reason) for a call waiting for the user's yes. */
function ApprovalButtons({ part, name, answer, busy }: { part: ToolUIPart | DynamicToolUIPart; name: string; answer: Answer; busy: boolean }) {
  const [reason, setReason] = useState('')
  if (part.state !== 'approval-requested') return null
  const id = part.approval.id
  const orderId = (part.input as { orderId?: unknown } | undefined)?.orderId
  const question = name === 'solicitar_devolucion' && orderId !== undefined ? `Start a return for order ${String(orderId).replace(/^#/, '')}?` : `Run ${name}?`
  return (
    <div className="approval" data-testid="approval">
      <p className="question" data-testid="approval-question">
        {question}
      </p>
      <input className="reason" aria-label="Reason, if you decline" placeholder="Reason, if you decline (optional)" value={reason} onChange={(e) => setReason(e.target.value)} />
      <div className="row">
        <button type="button" disabled={busy} onClick={() => answer({ id, approved: true })}>
          Approve
        </button>
        <button type="button" className="secondary" disabled={busy} onClick={() => answer({ id, approved: false, ...(reason.trim() ? { reason: reason.trim() } : {}) })}>
          Decline
        </button>
      </div>
    </div>
  )
}

const STATE: Record<string, string> = {
  'input-streaming': 'writing input…',
  'input-available': 'running…',
  'output-available': 'ok',
  'output-error': 'failed',
  'approval-requested': 'waiting for your approval',
  'approval-responded': 'answered',
  'output-denied': 'declined',
}
