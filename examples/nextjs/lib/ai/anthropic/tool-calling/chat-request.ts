// What the chat page may post to /api/chat, read strictly. The server keeps each chat's history,
// so a post carries only what is new: the chat's id and either the person's next message (its
// text) or their answers to the approval requests (each approval id, yes or no, and an optional
// reason). Anything else is refused before anything runs: a history, tool calls, inputs, or
// fields this route does not know.
//
// Pure (no imports at run time), so the e2e suite can load it without Next.js.
import type { ApprovalDecision } from 'anthropic-tool-calling'

export type ChatPost =
  | { chatId: string; kind: 'message'; text: string }
  | { chatId: string; kind: 'approvals'; approvals: ApprovalDecision[] }

/** A post that is refused (HTTP 400); the message says why, in words for the person. */
export class ChatRequestError extends Error {
  override name = 'ChatRequestError'
}

/** The ids the store makes for threads (`createThread`: `thread_` and 128 random bits in hex). */
export const CHAT_ID = /^thread_[0-9a-f]{32}$/
/** How long one message may be. */
export const MAX_TEXT = 4000
/** How long the reason of a declined call may be. */
export const MAX_REASON = 500
/** Approval ids are the package's (`apr_<issued-at>_<hex>`); this only bounds what is read. */
const APPROVAL_ID = /^[A-Za-z0-9_-]{1,200}$/
/** The keys a post may have: the AI SDK's `prepareSendMessagesRequest` in app/chat/chat.tsx sends these. */
const POST_KEYS = new Set(['id', 'message'])
/** Keys of a message that carry nothing the route uses (the AI SDK's own). */
const MESSAGE_KEYS = new Set(['id', 'role', 'parts', 'metadata'])

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const refuse = (why: string): never => {
  throw new ChatRequestError(why)
}

/** Reads the JSON body of a POST to /api/chat; throws a ChatRequestError for anything else. */
export function readChatPost(body: unknown): ChatPost {
  if (!isObject(body)) refuse('The request must be a JSON object { id, message }.')
  const post = body as Record<string, unknown>
  if ('messages' in post) refuse('This chat keeps its history on the server: post only the new message ({ id, message }), never the conversation.')
  for (const key of Object.keys(post)) if (!POST_KEYS.has(key)) refuse(`The request has a field this chat does not take: ${JSON.stringify(key).slice(0, 60)}.`)
  const chatId = post.id
  if (typeof chatId !== 'string' || !CHAT_ID.test(chatId)) refuse('The request has no valid chat id. Reload the page to start a new chat.')
  const message = post.message
  if (!isObject(message) || !Array.isArray(message.parts)) refuse('The request has no message with parts.')
  const m = message as Record<string, unknown> & { parts: unknown[] }
  for (const key of Object.keys(m)) if (!MESSAGE_KEYS.has(key)) refuse(`The message has a field this chat does not take: ${JSON.stringify(key).slice(0, 60)}.`)
  if (m.role === 'user') return { chatId: chatId as string, kind: 'message', text: textOf(m.parts) }
  if (m.role === 'assistant') return { chatId: chatId as string, kind: 'approvals', approvals: answersOf(m.parts) }
  return refuse('The message must be from the user (a new message) or carry the answers to approval requests.')
}

/** The text of a new message: text parts only. */
function textOf(parts: unknown[]): string {
  const texts: string[] = []
  for (const part of parts) {
    if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
      refuse('A new message may hold only text.')
    }
    texts.push((part as { text: string }).text)
  }
  const text = texts.join('\n').trim()
  if (text === '') refuse('The message is empty.')
  if (text.length > MAX_TEXT) refuse(`The message is too long (at most ${MAX_TEXT} characters).`)
  return text
}

/**
 * The answers to approval requests: from each part, its approval id, yes or no, and a reason;
 * nothing else of it is read (not the call's name, id or input: the server has the call). Every
 * part must be such an answer.
 */
function answersOf(parts: unknown[]): ApprovalDecision[] {
  if (parts.length === 0) refuse('The message carries no answer to an approval request.')
  const approvals: ApprovalDecision[] = []
  const seen = new Set<string>()
  for (const part of parts) {
    const p = isObject(part) ? part : {}
    const isTool = typeof p.type === 'string' && (p.type.startsWith('tool-') || p.type === 'dynamic-tool')
    if (!isTool || p.state !== 'approval-responded') refuse('Only answers to approval requests may be posted for the assistant.')
    const approval = isObject(p.approval) ? p.approval : {}
    const { id, approved, reason } = approval as { id?: unknown; approved?: unknown; reason?: unknown }
    if (typeof id !== 'string' || !APPROVAL_ID.test(id) || typeof approved !== 'boolean') refuse('An answer to an approval request needs its approval id and approved: true or false.')
    if (reason !== undefined && typeof reason !== 'string') refuse('The reason of an answer must be text.')
    if (seen.has(id as string)) refuse('The same approval request was answered twice.')
    seen.add(id as string)
    const why = typeof reason === 'string' ? reason.trim().slice(0, MAX_REASON) : ''
    approvals.push(approved ? { approvalId: id as string, approved: true } : { approvalId: id as string, approved: false, ...(why ? { reason: why } : {}) })
  }
  return approvals
}
