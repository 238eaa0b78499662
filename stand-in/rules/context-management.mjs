// `context_management`: the edits of a long loop (server-side compaction, clearing old tool uses
// and thinking), each with its own fields, and each needing its beta in `anthropic-beta`.

import { fail } from '../errors.mjs';
import { has, isObject } from '../values.mjs';
import { badTag, checkBoolean, checkDict, checkInteger, checkString, checkStringList, onlyKeys } from './fields.mjs';

export const COMPACT_BETA = 'compact-2026-01-12';
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

/** Each edit type: the beta it needs and the fields it takes. */
const EDITS = {
  compact_20260112: { beta: COMPACT_BETA, fields: ['type', 'trigger', 'pause_after_compaction', 'instructions'] },
  clear_tool_uses_20250919: {
    beta: CONTEXT_MANAGEMENT_BETA,
    fields: ['type', 'trigger', 'keep', 'clear_at_least', 'exclude_tools', 'clear_tool_inputs'],
  },
  clear_thinking_20251015: { beta: CONTEXT_MANAGEMENT_BETA, fields: ['type', 'keep'] },
};

/** The beta a feature needs, named with the feature when the request's `anthropic-beta` lacks it. */
export function needBeta(betas, beta, where, what) {
  if (!betas.includes(beta)) fail(`${where}: ${what} requires the \`${beta}\` beta; add it to the \`anthropic-beta\` header`);
}

/** A `{ type, value }` count such as a trigger: `type` one of `types`, `value` an integer of at least `min`. */
function checkCount(count, where, types, min) {
  checkDict(count, where);
  if (!types.includes(count.type)) badTag(where, count.type, types);
  onlyKeys(count, new Set(['type', 'value']), `${where}.`);
  if (!has(count, 'value')) fail(`${where}.value: Field required`);
  checkInteger(count.value, `${where}.value`, min);
}

const present = (edit, key) => has(edit, key) && edit[key] !== null;

function checkEdit(edit, p, betas) {
  checkDict(edit, p);
  checkString(edit.type, `${p}.type`);
  if (!has(EDITS, edit.type)) badTag(p, edit.type, Object.keys(EDITS));
  const { beta, fields } = EDITS[edit.type];
  needBeta(betas, beta, p, `the \`${edit.type}\` edit`);
  onlyKeys(edit, new Set(fields), `${p}.`);
  switch (edit.type) {
    case 'compact_20260112':
      if (present(edit, 'trigger')) checkCount(edit.trigger, `${p}.trigger`, ['input_tokens'], 1);
      if (has(edit, 'pause_after_compaction')) checkBoolean(edit.pause_after_compaction, `${p}.pause_after_compaction`);
      if (present(edit, 'instructions')) checkString(edit.instructions, `${p}.instructions`);
      return;
    case 'clear_tool_uses_20250919':
      if (has(edit, 'trigger')) checkCount(edit.trigger, `${p}.trigger`, ['input_tokens', 'tool_uses'], 1);
      if (has(edit, 'keep')) checkCount(edit.keep, `${p}.keep`, ['tool_uses'], 0);
      if (present(edit, 'clear_at_least')) checkCount(edit.clear_at_least, `${p}.clear_at_least`, ['input_tokens'], 0);
      if (present(edit, 'exclude_tools')) checkStringList(edit.exclude_tools, `${p}.exclude_tools`);
      // The API takes a flag for every tool's inputs, or the names of the tools whose inputs go.
      if (present(edit, 'clear_tool_inputs') && typeof edit.clear_tool_inputs !== 'boolean') {
        if (!Array.isArray(edit.clear_tool_inputs)) fail(`${p}.clear_tool_inputs: Input should be a valid boolean or a list of strings`);
        checkStringList(edit.clear_tool_inputs, `${p}.clear_tool_inputs`);
      }
      return;
    default: // clear_thinking_20251015
      if (!has(edit, 'keep') || edit.keep === 'all') return;
      if (isObject(edit.keep) && edit.keep.type === 'all') return onlyKeys(edit.keep, new Set(['type']), `${p}.keep.all.`);
      if (!isObject(edit.keep)) fail(`${p}.keep: Input should be 'all' or a valid dictionary`);
      checkCount(edit.keep, `${p}.keep`, ['thinking_turns', 'all'], 0);
  }
}

/** `context_management`: only `edits`, each a known edit with its fields and its beta. */
export function checkContextManagement(cm, betas) {
  checkDict(cm, 'context_management');
  onlyKeys(cm, new Set(['edits']), 'context_management.');
  if (!has(cm, 'edits')) return;
  if (!Array.isArray(cm.edits)) fail('context_management.edits: Input should be a valid list');
  cm.edits.forEach((edit, k) => checkEdit(edit, `context_management.edits.${k}`, betas));
}
