// The stored conversation of a chat (Messages API params, the `data.messages` of its last run)
// turned into the UI messages `useChat` starts from, so a reloaded page shows the chat as it was
// streamed: the same parts in the same states as the UI message stream gave them.
//
// It is the way out only. Nothing the browser sends is ever turned back into history: the server
// keeps the history, and these messages are for display.
//
// Pure (no imports at run time), so the e2e suite can load it without Next.js.
import type { ApprovalDecision, MessageParam, PendingApproval } from 'anthropic-tool-calling'
import type { UIMessage } from 'ai'

/** What the user answered to an approval request, kept with the chat once the run resumed. */
export interface StoredDecision {
  approvalId: string
  approved: boolean
  reason?: string
}

export interface UIHistoryOptions {
  /** The calls waiting for the user's answer (the last run stopped with `approval_required`). */
  pendingApprovals?: PendingApproval[]
  /** The answers given so far, by `tool_use` id. */
  decisions?: Record<string, StoredDecision>
}

/**
 * The answers of a resume that went through, added to those kept before: by the tool_use id of
 * the pending call each approval id was issued for. An id that matches no pending call is left out.
 */
export function withDecisions(
  decisions: Record<string, StoredDecision>,
  pendingApprovals: PendingApproval[] | null,
  approvals: ApprovalDecision[],
): Record<string, StoredDecision> {
  const next = { ...decisions }
  for (const a of approvals) {
    const call = pendingApprovals?.find((p) => p.approvalId === a.approvalId)
    if (!call) continue
    next[call.toolUseId] = a.approved ? { approvalId: a.approvalId, approved: true } : { approvalId: a.approvalId, approved: false, ...(a.reason ? { reason: a.reason } : {}) }
  }
  return next
}

type Part = UIMessage['parts'][number]
type Block = { type: string; [field: string]: unknown }
/** A tool part while it is being built; its state-dependent fields are set as the results come. */
type ToolPart = { type: `tool-${string}`; toolCallId: string; state: string; input: unknown; [field: string]: unknown }

/**
 * One UI message per user text, and one assistant UI message per run of the model: its replies
 * (one step each, opened by `step-start`) and the results of their tool calls, as the stream
 * built it. Message ids are made from the position in the history, so they stay the same across
 * reloads.
 */
export function toUIMessages(messages: MessageParam[], { pendingApprovals = [], decisions = {} }: UIHistoryOptions = {}): UIMessage[] {
  const out: UIMessage[] = []
  const calls = new Map<string, ToolPart>()
  let assistant: UIMessage | null = null

  messages.forEach((message, i) => {
    const blocks: Block[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as Block[])
    if (message.role === 'assistant') {
      if (assistant === null) {
        assistant = { id: `m${i}`, role: 'assistant', parts: [] }
        out.push(assistant)
      }
      const parts = assistant.parts
      parts.push({ type: 'step-start' })
      for (const block of blocks) {
        if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          parts.push({ type: 'text', text: block.text, state: 'done' })
        } else if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking !== '') {
          parts.push({ type: 'reasoning', text: block.thinking, state: 'done' })
        } else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
          const part: ToolPart = { type: `tool-${block.name}`, toolCallId: block.id, state: 'input-available', input: block.input ?? {} }
          calls.set(block.id, part)
          parts.push(part as Part)
        }
        // Other blocks (redacted thinking, server tools' blocks) have nothing to show.
      }
      return
    }
    // A user message: the results of the calls before it, then (maybe) what the person wrote.
    const said: Part[] = []
    for (const block of blocks) {
      if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
        const part = calls.get(block.tool_use_id)
        if (part) settle(part, block, decisions[block.tool_use_id])
      } else if (block.type === 'text' && typeof block.text === 'string' && block.text.trim() !== '') {
        // As `sendMessage({ text })` makes it: a user's text part has no streaming state.
        said.push({ type: 'text', text: block.text })
      }
      // This app stores only text from the person; other blocks (images, documents) are not shown.
    }
    if (said.length > 0) {
      out.push({ id: `m${i}`, role: 'user', parts: said })
      assistant = null
    }
  })

  for (const pending of pendingApprovals) {
    const part = calls.get(pending.toolUseId)
    if (part && part.state === 'input-available') {
      part.state = 'approval-requested'
      part.approval = { id: pending.approvalId }
    }
  }
  return out
}

/** The part of a call once its result is known: its output, the error the model read, or the denial. */
function settle(part: ToolPart, result: Block, decision: StoredDecision | undefined) {
  if (decision) {
    part.approval = decision.approved
      ? { id: decision.approvalId, approved: true }
      : { id: decision.approvalId, approved: false, ...(decision.reason !== undefined ? { reason: decision.reason } : {}) }
  }
  if (decision && !decision.approved) {
    part.state = 'output-denied'
  } else if (result.is_error === true) {
    part.state = 'output-error'
    part.errorText = textOf(result.content)
  } else {
    part.state = 'output-available'
    part.output = outputOf(result.content)
  }
}

/**
 * The output as the stream showed it. The history keeps what the model read: a string output as
 * it is, any other value as its JSON, so JSON text that holds an object or array is read back as
 * that value, and anything else stays the string it is. Content blocks (`toolResult(blocks)`) are
 * the array of blocks, as in the stream.
 */
function outputOf(content: unknown): unknown {
  if (Array.isArray(content)) return content
  if (typeof content !== 'string') return content ?? null
  const text = content.trim()
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return JSON.parse(text)
    } catch {
      // Not JSON after all: the string the tool returned.
    }
  }
  return content
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter((b): b is { type: 'text'; text: string } => b !== null && typeof b === 'object' && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('')
}
