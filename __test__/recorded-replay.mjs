// For recorded.test.mjs: the vendored recordings (fixtures/recorded/) read as the stand-in's
// steps, what a user should get from them (text, usage, the last message), the official SDK's
// own assembly of a recorded stream, and the checks of a run's UI message stream.
import { readFileSync, readdirSync } from 'node:fs'
import assert from 'node:assert/strict'
import { uiMessageChunkSchema } from 'ai'
import { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream'
import { uiMessageOf } from './helpers.mjs'

const DIR = new URL('./fixtures/recorded/', import.meta.url)

/** Every recording in the folder (`*.json`, `*.chunks.txt`), by file name. */
export const recordingNames = () => readdirSync(DIR).filter((f) => f.endsWith('.json') || f.endsWith('.chunks.txt')).sort()

/** A non-streamed recording: the message object. */
export const recordedJson = (name) => JSON.parse(readFileSync(new URL(name, DIR), 'utf8'))

/**
 * A streamed recording as its replies: the events of each, in order. A file holds one reply, or
 * the successive replies of one run, each ending with `message_stop`.
 */
export function recordedReplies(name) {
  const events = readFileSync(new URL(name, DIR), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
  const replies = [[]]
  for (const event of events) {
    replies.at(-1).push(event)
    if (event.type === 'message_stop') replies.push([])
  }
  if (replies.at(-1).length === 0) replies.pop()
  return replies
}

/** The stand-in's steps for a recording: `{ recorded }` for a JSON one, `{ recordedEvents }` per reply of a stream. */
export const stepsOf = (name) =>
  name.endsWith('.json') ? [{ recorded: recordedJson(name) }] : recordedReplies(name).map((events) => ({ recordedEvents: events }))

/**
 * The message the official SDK's BetaMessageStream assembles from one reply's events (fed as the
 * newline-delimited JSON its `fromReadableStream` reads), with each block's keys in the order the
 * API sent them: the SDK moves a tool block's `input` to the end once deltas grow it, where the
 * non-streamed reply (and our history) keeps the API's order.
 */
export async function sdkMessage(events) {
  const body = events.map((e) => `${JSON.stringify(e)}\n`).join('')
  const message = structuredClone(await BetaMessageStream.fromReadableStream(new Response(body).body).finalMessage())
  const sent = [
    ...(events.find((e) => e.type === 'message_start')?.message.content ?? []),
    ...events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block),
  ]
  message.content = message.content.map((block, i) => inKeyOrderOf(block, sent[i]))
  return message
}

/** `block` with the keys `model` has first, in its order, then its others. */
function inKeyOrderOf(block, model) {
  const keys = [...Object.keys(model ?? {}).filter((k) => k in block), ...Object.keys(block).filter((k) => !(k in (model ?? {})))]
  return Object.fromEntries(keys.map((k) => [k, block[k]]))
}

/** The text blocks of a content array, joined: `data.text` for that reply. */
export const textOf = (content) => content.filter((b) => b.type === 'text').map((b) => b.text).join('')

/** The thinking of a content array's thinking blocks, joined by a blank line. */
export const thinkingOf = (content) => content.filter((b) => b.type === 'thinking').map((b) => b.thinking).join('\n\n')

/** The client tool calls a reply asks for (direct or code-called `tool_use` blocks). */
export const clientCalls = (content) => content.filter((b) => b.type === 'tool_use')

/** Sampling iterations billed apart from a reply's top-level usage (compaction, advisor…). */
const extraIterations = (usage) => (usage.iterations ?? []).filter((it) => it.type !== 'message' && it.type !== 'fallback_message')

/**
 * `data.usage` for a run of these replies: each reply's top-level usage plus its iterations
 * that the top level leaves out, summed over the run.
 */
export function expectedUsage(messages) {
  const sum = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }
  for (const { usage } of messages) {
    for (const u of [usage, ...extraIterations(usage)]) {
      sum.inputTokens += u.input_tokens ?? 0
      sum.outputTokens += u.output_tokens ?? 0
      sum.cacheReadInputTokens += u.cache_read_input_tokens ?? 0
      sum.cacheCreationInputTokens += u.cache_creation_input_tokens ?? 0
    }
  }
  return sum
}

/** `data.appliedEdits` for a run of these replies: their `context_management.applied_edits`, appended (undefined when none has one). */
export function expectedAppliedEdits(messages) {
  const withEdits = messages.filter((m) => Array.isArray(m.context_management?.applied_edits))
  return withEdits.length > 0 ? withEdits.flatMap((m) => m.context_management.applied_edits) : undefined
}

/** `data.container` for a run of these replies: the last container seen. */
export function expectedContainer(messages) {
  const last = messages.findLast((m) => m.container)?.container
  return last && { id: last.id, expiresAt: last.expires_at }
}

const schema = uiMessageChunkSchema()

/**
 * The chunks of a run's UI message stream Response, after checking it is what `useChat` takes:
 * every chunk passes the AI SDK's schema, `[DONE]` comes last, and the AI SDK's own reader builds
 * the message without an error. `ok`: the run succeeded (ends with `finish`, no `error` chunk).
 */
export async function checkUIStream(res, { ok = true } = {}) {
  const [forReader, forChunks] = [res.clone(), res]
  const events = (await forChunks.text()).split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''))
  assert.equal(events.at(-1), '[DONE]', 'the UI stream ends with [DONE]')
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e))
  for (const chunk of chunks) {
    const checked = await schema.validate(chunk)
    assert.ok(checked.success, `chunk passes uiMessageChunkSchema: ${JSON.stringify(chunk)}`)
  }
  const errors = chunks.filter((c) => c.type === 'error')
  if (ok) {
    assert.deepEqual(errors, [], 'no error chunk')
    assert.equal(chunks.at(-1).type, 'finish', 'the last chunk is finish')
    await uiMessageOf(forReader)
  } else {
    assert.equal(errors.length, 1, `one error chunk: ${JSON.stringify(chunks.slice(-3))}`)
  }
  return chunks
}
