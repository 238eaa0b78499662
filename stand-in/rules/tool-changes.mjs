// Mid-conversation tool changes: messages with `role: "system"` holding `tool_addition` /
// `tool_removal` blocks (a beta), which change the offered tools from that point on; and the same
// blocks as a compaction block's `tool_changes`.

import { fail } from '../errors.mjs';
import { has } from '../values.mjs';
import { badTag, checkCacheControl, checkDict, checkString, onlyKeys } from './fields.mjs';

export const TOOL_CHANGES_BETA = 'mid-conversation-tool-changes-2026-07-01';
export const TOOL_CHANGE_TYPES = ['tool_addition', 'tool_removal'];

const TOOL_CHANGE_FIELDS = new Set(['type', 'tool', 'cache_control']);
const TOOL_REFERENCE_FIELDS = new Set(['type', 'name']);
const SYSTEM_CONTENT = 'a `system` message must hold a non-empty list of `tool_addition` / `tool_removal` blocks';

/** One tool_addition / tool_removal block: `{ type, tool: { type: "tool_reference", name } }`. */
export function checkToolChange(block, p) {
  checkDict(block, p);
  if (!TOOL_CHANGE_TYPES.includes(block.type)) badTag(p, block.type, TOOL_CHANGE_TYPES);
  onlyKeys(block, TOOL_CHANGE_FIELDS, `${p}.`);
  if (!has(block, 'tool')) fail(`${p}.tool: Field required`);
  const tool = block.tool;
  checkDict(tool, `${p}.tool`);
  if (tool.type !== 'tool_reference') badTag(`${p}.tool`, tool.type, ['tool_reference']);
  onlyKeys(tool, TOOL_REFERENCE_FIELDS, `${p}.tool.`);
  if (!has(tool, 'name')) fail(`${p}.tool.name: Field required`);
  checkString(tool.name, `${p}.tool.name`);
  checkCacheControl(block, `${p}.`);
}

/** A compaction block's `tool_changes`: null, or a list of tool change blocks. */
export function checkToolChangeList(value, p) {
  if (value === null) return;
  if (!Array.isArray(value)) fail(`${p}: Input should be a valid list`);
  value.forEach((block, k) => checkToolChange(block, `${p}.${k}`));
}

/**
 * A `system` message (with the beta; without it the API knows only user and assistant): a non-empty
 * list of tool changes, each naming a tool the request's `tools` define.
 */
export function checkSystemMessage(m, p, { betas, toolNames }) {
  if (!betas.includes(TOOL_CHANGES_BETA)) fail(`${p}.role: Input should be 'user' or 'assistant'`);
  if (!has(m, 'content')) fail(`${p}.content: Field required`);
  if (!Array.isArray(m.content) || m.content.length === 0) fail(`${p}.content: ${SYSTEM_CONTENT}`);
  m.content.forEach((block, j) => {
    const q = `${p}.content.${j}`;
    checkToolChange(block, q);
    const name = block.tool.name;
    if (!toolNames.has(name)) {
      fail(`${q}.tool.name: Tool '${name}' is not in \`tools\`; a \`${block.type}\` may only name a tool the request defines`);
    }
  });
}
