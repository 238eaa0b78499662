// Server-side compaction, simulated: a token estimate of the request, and — when the request asks
// for compaction (`compact_20260112`) and the estimate reaches its trigger — the compaction block
// and usage iterations a reply starts with, or the whole reply when it pauses after compacting.

import { createHash } from 'node:crypto';
import { DEFAULT_USAGE } from './replies.mjs';
import { has, isObject } from './values.mjs';

/** The API's default trigger of a compaction, in input tokens. */
const DEFAULT_TRIGGER = 150_000;

/** The request's context-management edits (none without them). */
export function editsOf(body) {
  const edits = isObject(body?.context_management) ? body.context_management.edits : undefined;
  return Array.isArray(edits) ? edits.filter(isObject) : [];
}

const summarises = (b) => isObject(b) && b.type === 'compaction' && typeof b.content === 'string';

/**
 * The messages the API reads: from the last compaction block with a summary on (the API drops
 * what precedes it; a block whose `content` is null is a failed compaction and changes nothing).
 */
export function keptMessages(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isObject(m) || m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    const j = m.content.findLastIndex(summarises);
    if (j >= 0) return [{ ...m, content: m.content.slice(j) }, ...messages.slice(i + 1)];
  }
  return messages;
}

/** A request's input tokens as the stand-in counts them: a quarter of the JSON of what the API reads. */
export function estimateInputTokens(body) {
  let chars = JSON.stringify(keptMessages(body)).length;
  if (has(body, 'system')) chars += JSON.stringify(body.system).length;
  if (has(body, 'tools')) chars += JSON.stringify(body.tools).length;
  return Math.ceil(chars / 4);
}

const iteration = (type, input, output) => ({
  type, input_tokens: input, output_tokens: output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0,
});

/**
 * The compaction this request gets, or null: with a `compact_20260112` edit whose trigger
 * (default 150000) the estimate reaches. `block` is the compaction block (a summary naming how
 * many messages it stands for), `first` its usage iteration, `pause` whether the reply stops after
 * it, and `compactedInput` the estimate of the request the model then answers (the summary and the
 * system prompt and tools).
 */
export function compactionFor(body) {
  const edit = editsOf(body).find((e) => e.type === 'compact_20260112');
  if (!edit) return null;
  const estimate = estimateInputTokens(body);
  if (estimate < (edit.trigger?.value ?? DEFAULT_TRIGGER)) return null;
  const n = keptMessages(body).length;
  const summary = `Summary of the conversation so far: ${n} message${n === 1 ? '' : 's'}, compacted by the stand-in.`;
  const digest = createHash('sha256').update(JSON.stringify(keptMessages(body))).digest('hex').slice(0, 16);
  const block = { type: 'compaction', content: summary, encrypted_content: Buffer.from(`stand-in compaction ${n} ${digest}`).toString('base64') };
  const compactedInput = estimateInputTokens({ ...body, messages: [{ role: 'assistant', content: [block] }] });
  return { block, first: iteration('compaction', estimate, Math.ceil(summary.length / 4)), pause: edit.pause_after_compaction === true, compactedInput };
}

/** The reply step of a compaction that pauses: the block alone, stop reason `compaction`, no message tokens. */
export function pausedStep(compaction) {
  const usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, iterations: [compaction.first] };
  return { content: [], stop_reason: 'compaction', usage };
}

/**
 * The usage of a reply after a compaction: the message iteration's numbers at the top (each field
 * of the step's own usage over them), and both iterations (unless the step's usage has its own).
 */
export function compactedUsage(compaction, given = {}) {
  const top = { ...DEFAULT_USAGE, input_tokens: compaction.compactedInput, ...given };
  if (has(top, 'iterations')) return top;
  const second = iteration('message', top.input_tokens, top.output_tokens);
  second.cache_read_input_tokens = top.cache_read_input_tokens ?? 0;
  second.cache_creation_input_tokens = top.cache_creation_input_tokens ?? 0;
  return { ...top, iterations: [compaction.first, second] };
}
