// The conversations, kept on the server (the `chats` table, lib/db.ts). The browser knows a
// chat only by its id, which the server makes; it never sends the history back, so it cannot
// change it: what the model said, which tools it called and with what input, and which calls wait
// for an approval are all read from here.
import { randomUUID } from 'node:crypto'
import type { ApprovalDecision, MessageParam, PendingApproval, RunResult } from 'anthropic-tool-calling'
import type { OnToolError } from '@/lib/ai/anthropic/tool-calling/types'
import { withDecisions, type StoredDecision } from '@/lib/ai/anthropic/tool-calling/ui-history'
import { getDb } from './db'

/** `chat`: the /chat page (useChat). `ask`: one question of the form on /. */
export type ChatKind = 'chat' | 'ask'

export interface StoredChat {
  /** Random and unguessable (`crypto.randomUUID()`); also the `approvalScope` of every run of the chat. */
  id: string
  kind: ChatKind
  onToolError: OnToolError
  /** The `data.messages` of the last run that succeeded. */
  messages: MessageParam[]
  /** While the last run is paused for approval: the calls waiting for an answer. */
  pendingApprovals: PendingApproval[] | null
  /** The answers given so far, by tool_use id. */
  decisions: Record<string, StoredDecision>
}

/** The right to run one request of a chat, from `claimChat` until `saveRun` or `releaseChat`. */
export interface Lease {
  chatId: string
  token: string
}

/** How long a lease holds if its run never ends (a crashed server): then the chat is free again. */
const LEASE_MS = 10 * 60_000
/** Chats nobody wrote in (a page opened and left) are removed after a day. */
const EMPTY_CHAT_MS = 24 * 60 * 60_000

interface Row {
  id: string
  kind: ChatKind
  on_tool_error: OnToolError
  messages: string
  pending: string | null
  decisions: string
}

function fromRow(row: Row): StoredChat {
  return {
    id: row.id,
    kind: row.kind,
    onToolError: row.on_tool_error,
    messages: JSON.parse(row.messages),
    pendingApprovals: row.pending === null ? null : JSON.parse(row.pending),
    decisions: JSON.parse(row.decisions),
  }
}

/** A new, empty conversation with an id of the server's making. */
export function createChat(kind: ChatKind, onToolError: OnToolError): StoredChat {
  const db = getDb()
  const now = new Date()
  db.prepare("DELETE FROM chats WHERE messages = '[]' AND lease IS NULL AND created_at < ?").run(new Date(now.getTime() - EMPTY_CHAT_MS).toISOString())
  const id = randomUUID()
  db.prepare('INSERT INTO chats (id, kind, on_tool_error, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(id, kind, onToolError, now.toISOString(), now.toISOString())
  return { id, kind, onToolError, messages: [], pendingApprovals: null, decisions: {} }
}

/** The conversation with this id and kind, or undefined (an id the server did not make, or of the other page). */
export function findChat(id: string, kind: ChatKind): StoredChat | undefined {
  const row = getDb().prepare('SELECT id, kind, on_tool_error, messages, pending, decisions FROM chats WHERE id = ? AND kind = ?').get(id, kind) as Row | undefined
  return row && fromRow(row)
}

/**
 * Takes the chat for one run. A second request for the same chat while a run is going (a double
 * submit, a second tab) waits up to `waitMs` for it to end, then gets null: two runs of one chat
 * would both start from the same history, and the second to end would drop what the first added.
 */
export async function claimChat(id: string, { waitMs = 2_000 } = {}): Promise<Lease | null> {
  const token = randomUUID()
  const claim = getDb().prepare('UPDATE chats SET lease = ?, lease_until = ? WHERE id = ? AND (lease IS NULL OR lease_until <= ?)')
  const deadline = Date.now() + waitMs
  for (;;) {
    const now = Date.now()
    if (claim.run(token, now + LEASE_MS, id, now).changes === 1) return { chatId: id, token }
    if (now >= deadline) return null
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Gives the chat back without changing it (the run failed, was stopped, or never started). */
export function releaseChat(lease: Lease) {
  getDb().prepare('UPDATE chats SET lease = NULL, lease_until = NULL WHERE id = ? AND lease = ?').run(lease.chatId, lease.token)
}

/**
 * Stores what a run of `chat` ended with and gives the chat back. Only a run that succeeded
 * changes the chat: its `data.messages` is the whole conversation so far. After
 * `approval_required` that history ends with the paused turn, which only a resume with
 * `approvals` may continue, so its pending calls are kept with it. A failed or stopped run
 * leaves the chat as it was before the request. `approvals`: the answers this run resumed with;
 * kept by tool_use id once the resume went through.
 */
export function saveRun(lease: Lease, chat: StoredChat, result: RunResult, approvals: ApprovalDecision[] = []): boolean {
  if (result.error) {
    releaseChat(lease)
    return false
  }
  const decisions = withDecisions(chat.decisions, chat.pendingApprovals, approvals)
  const { data } = result
  const pending = data.stopReason === 'approval_required' && data.pendingApprovals?.length ? JSON.stringify(data.pendingApprovals) : null
  const saved = getDb()
    .prepare('UPDATE chats SET messages = ?, pending = ?, decisions = ?, updated_at = ?, lease = NULL, lease_until = NULL WHERE id = ? AND lease = ?')
    .run(JSON.stringify(data.messages), pending, JSON.stringify(decisions), new Date().toISOString(), lease.chatId, lease.token)
  // No row changed: the lease ran out and another request has the chat now; its run wins.
  if (saved.changes !== 1) console.error(`[tool-calling] chat ${lease.chatId}: the run ended after its lease; its result was not stored`)
  return saved.changes === 1
}
