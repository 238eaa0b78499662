// Context editing, simulated: what the clearing edits of a request (`clear_tool_uses_20250919`,
// `clear_thinking_20251015`) would clear, reported as the reply's `context_management`.

import { editsOf, estimateInputTokens, keptMessages } from './compaction.mjs';
import { blocksOf, isObject } from './values.mjs';

/** The API's defaults: clear tool uses from 100000 input tokens on, keeping the last 3. */
const DEFAULT_TOOL_TRIGGER = { type: 'input_tokens', value: 100_000 };
const DEFAULT_KEEP_TOOL_USES = 3;
const DEFAULT_KEEP_THINKING_TURNS = 1;

const tokens = (chars) => Math.ceil(chars / 4);
const size = (value) => (value === undefined ? 0 : JSON.stringify(value).length);

/** The tool uses the edit may clear, oldest first, each with the result that answered it. */
function toolUses(messages, edit) {
  const excluded = new Set(Array.isArray(edit.exclude_tools) ? edit.exclude_tools : []);
  const uses = [];
  messages.forEach((m, i) => {
    if (m?.role !== 'assistant') return;
    const results = blocksOf(messages[i + 1]).filter((b) => isObject(b) && b.type === 'tool_result');
    for (const b of blocksOf(m)) {
      if (!isObject(b) || b.type !== 'tool_use' || excluded.has(b.name)) continue;
      uses.push({ use: b, result: results.find((r) => r.tool_use_id === b.id) });
    }
  });
  return uses;
}

function clearToolUses(body, edit, estimate) {
  const uses = toolUses(keptMessages(body), edit);
  const trigger = isObject(edit.trigger) ? edit.trigger : DEFAULT_TOOL_TRIGGER;
  const reached = trigger.type === 'tool_uses' ? uses.length >= trigger.value : estimate >= trigger.value;
  if (!reached) return null;
  const cleared = uses.slice(0, Math.max(0, uses.length - (edit.keep?.value ?? DEFAULT_KEEP_TOOL_USES)));
  const inputs = edit.clear_tool_inputs;
  const clearsInput = (name) => inputs === true || (Array.isArray(inputs) && inputs.includes(name));
  const chars = cleared.reduce((n, { use, result }) => n + size(result?.content) + (clearsInput(use.name) ? size(use.input) : 0), 0);
  const clearedTokens = tokens(chars);
  if (cleared.length === 0 || clearedTokens < (edit.clear_at_least?.value ?? 0)) return null;
  return { type: 'clear_tool_uses_20250919', cleared_tool_uses: cleared.length, cleared_input_tokens: clearedTokens };
}

const isThinking = (b) => isObject(b) && (b.type === 'thinking' || b.type === 'redacted_thinking');

function clearThinking(body, edit) {
  const turns = keptMessages(body).filter((m) => m?.role === 'assistant' && blocksOf(m).some(isThinking));
  const keep = edit.keep;
  if (keep === 'all' || keep?.type === 'all') return null;
  const cleared = turns.slice(0, Math.max(0, turns.length - (keep?.value ?? DEFAULT_KEEP_THINKING_TURNS)));
  if (cleared.length === 0) return null;
  const chars = cleared.reduce((n, m) => n + blocksOf(m).filter(isThinking).reduce((k, b) => k + size(b), 0), 0);
  return { type: 'clear_thinking_20251015', cleared_thinking_turns: cleared.length, cleared_input_tokens: tokens(chars) };
}

/**
 * The reply's `context_management` for a request that has one: `applied_edits` lists each
 * clearing edit that cleared something, in the request's order (compaction is not an edit there:
 * it shows as a block). Undefined when the request has no `context_management`.
 */
export function contextManagementFor(body) {
  if (!isObject(body?.context_management)) return undefined;
  const estimate = estimateInputTokens(body);
  const applied = [];
  for (const edit of editsOf(body)) {
    const done = edit.type === 'clear_tool_uses_20250919' ? clearToolUses(body, edit, estimate)
      : edit.type === 'clear_thinking_20251015' ? clearThinking(body, edit) : null;
    if (done) applied.push(done);
  }
  return { applied_edits: applied };
}
