// Builders of scripted replies and their content blocks (`api.script(reply([text('…')]))`).

import { randomBytes } from 'node:crypto';
import { has, isObject } from './values.mjs';
import { signRedacted, signThinking, validRedactedData } from './signatures.mjs';

export const DEFAULT_USAGE = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomId(length) {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] % ALPHABET.length];
  return out;
}

/** A text block; `citations` (a list of citation objects) is added when given. */
export function text(s, citations) {
  const block = { type: 'text', text: String(s) };
  if (citations !== undefined) block.citations = citations;
  return block;
}

/** A tool_use block; the id is random unless given. */
export function toolUse(name, input, id) {
  return { type: 'tool_use', id: id ?? `toolu_${randomId(24)}`, name, input };
}

/** A thinking block; without `signature` it gets a valid one (an explicit one is kept as given). */
export function thinking(thinkingText, signature) {
  const t = String(thinkingText);
  return { type: 'thinking', thinking: t, signature: signature ?? signThinking(t) };
}

/**
 * A redacted_thinking block with valid signed `data`. `data`, when given, is kept if it is already
 * valid signed data, else it is the payload that gets signed (so the block is always valid; build a
 * `{ type: 'redacted_thinking', data: '…' }` by hand to test a forged one).
 */
export function redactedThinking(data) {
  if (data !== undefined && validRedactedData(data)) return { type: 'redacted_thinking', data };
  return { type: 'redacted_thinking', data: signRedacted(data ?? `redacted thinking ${randomId(16)}`) };
}

/** A block as the stand-in sends it: thinking blocks without a signature get one, redacted ones without data get some. */
export function signed(block) {
  if (!isObject(block)) return block;
  if (block.type === 'thinking' && !has(block, 'signature')) return { ...block, signature: signThinking(String(block.thinking ?? '')) };
  if (block.type === 'redacted_thinking' && !has(block, 'data')) return { ...block, ...redactedThinking() };
  return block;
}

/** A server_tool_use block (Anthropic runs it; the client never answers it); id `srvtoolu_…` unless given. */
export function serverToolUse(name, input, id) {
  return { type: 'server_tool_use', id: id ?? `srvtoolu_${randomId(24)}`, name, input };
}

/** An mcp_tool_use block: a call Anthropic makes through the MCP connector; id `mcptoolu_…` unless given. */
export function mcpToolUse(serverName, name, input, id) {
  return { type: 'mcp_tool_use', id: id ?? `mcptoolu_${randomId(24)}`, name, input, server_name: serverName };
}

/** The mcp_tool_result of `toolUseId`: `content` a string or text blocks (one text block for a string). */
export function mcpToolResult(toolUseId, content, isError = false) {
  const blocks = typeof content === 'string' ? [text(content)] : content;
  return { type: 'mcp_tool_result', tool_use_id: toolUseId, is_error: isError, content: blocks };
}

/**
 * A web_search_tool_result for `toolUseId`; `results` are `{ url, title, encrypted_content?, page_age? }`
 * (one example result when omitted), each becoming a `web_search_result` entry.
 */
export function webSearchResult(toolUseId, results) {
  const list = results ?? [{ url: 'https://example.com/', title: 'Example Domain' }];
  return {
    type: 'web_search_tool_result',
    tool_use_id: toolUseId,
    content: list.map((r) => ({
      type: 'web_search_result',
      url: r.url,
      title: r.title,
      encrypted_content: r.encrypted_content ?? Buffer.from(`${r.url} ${r.title}`).toString('base64'),
      page_age: r.page_age ?? null,
    })),
  };
}

/**
 * A compaction block (server-side compaction): `content` the summary (null: a failed compaction),
 * `encrypted_content` base64 of the summary unless given; `extra` members (`signature`,
 * `tool_changes`) follow them.
 */
export function compaction(content, encryptedContent, extra = {}) {
  const encrypted = encryptedContent ?? Buffer.from(`compaction ${content ?? ''}`).toString('base64');
  return { type: 'compaction', content, encrypted_content: encrypted, ...extra };
}

/** A `tool_addition` / `tool_removal` block (the content of a `system` message) naming a tool of `tools`. */
export const toolAddition = (name) => ({ type: 'tool_addition', tool: { type: 'tool_reference', name } });
export const toolRemoval = (name) => ({ type: 'tool_removal', tool: { type: 'tool_reference', name } });

/**
 * A scripted 200 reply. `stop_reason` defaults to `tool_use` when the content has a tool_use block,
 * else `end_turn`. `content` may also be a plain string (one text block). `container`
 * (`{ id, expires_at }`), `stop_details` and `context_management` (`{ applied_edits }`) go on the
 * message only when given; `usage` may hold `iterations`.
 */
export function reply(content, { stop_reason, usage, model, stop_sequence, container, stop_details, context_management } = {}) {
  const blocks = typeof content === 'string' ? [text(content)] : content;
  const step = { content: blocks, stop_reason: stop_reason ?? defaultStopReason(blocks) };
  if (usage !== undefined) step.usage = usage;
  if (model !== undefined) step.model = model;
  if (stop_sequence !== undefined) step.stop_sequence = stop_sequence;
  if (container !== undefined) step.container = container;
  if (stop_details !== undefined) step.stop_details = stop_details;
  if (context_management !== undefined) step.context_management = context_management;
  return step;
}

export function defaultStopReason(blocks) {
  return Array.isArray(blocks) && blocks.some((b) => b && b.type === 'tool_use') ? 'tool_use' : 'end_turn';
}
