// A strict local stand-in of the Anthropic Messages API (`POST /v1/messages`), for the node:test
// suites, `npm run demo` and the benchmark. Plain Node ESM, `node:` built-ins only.
//
// It is exactly as strict as the real API described in /work/shared/ANTHROPIC_API.md: a request the
// real API would refuse (bad auth, headers, fields, tools, tool_use/tool_result pairing, empty
// messages, thinking blocks changed or missing, server tool blocks out of place) gets the same 4xx
// and message here, so a looser test server never hides a bug in the engine.
//
//   const api = await startMockApi({ apiKey: 'sk-ant-test-key' });
//   api.script(reply([toolUse('get_order_status', { orderId: '4821' })]), reply([text('Shipped.')]));
//   ... point the client at api.url ...
//   await api.close();
//
// Builders (each returns a plain block or step; use them in `api.script(...)`):
//   text(s, citations?)                   text block; `citations` added when given
//   toolUse(name, input, id?)             tool_use, id `toolu_…` unless given
//   thinking(text, signature?)            thinking block; without `signature` a valid one (signThinking(text))
//   redactedThinking(data?)               redacted_thinking with valid signed data (valid `data` kept, else signed)
//   serverToolUse(name, input, id?)       server_tool_use, id `srvtoolu_…` unless given
//   webSearchResult(toolUseId, results?)  web_search_tool_result; results [{ url, title, encrypted_content?, page_age? }]
//   reply(content, { stop_reason?, usage?, model?, stop_sequence?, container?, stop_details? })
//       a 200 reply step; stop_reason defaults to tool_use/end_turn; `container` ({ id, expires_at })
//       and `stop_details` go on the message only when given; usage defaults to 10 in / 5 out.
//   signThinking(text), sseEvents(message, { unknownDelta? }), CONTAINER_REQUIRED (the API's text)
//
// Steps (`api.script(step, …)`, or returned by `api.handler(body, record)` / a function step):
//   reply(…)                              the message; streamed as SSE when the request has `stream: true`
//   { ...reply(…), requireContainer: 'cont_…' }  the request must carry `container: 'cont_…'`, else 400
//   { status, error?: { type, message }, headers? }   an API error (3xx: an empty body with `headers`,
//                                         e.g. { status: 307, headers: { location } })
//   { status?, body, headers? }           any JSON body as given
//   { fault: 'reset' | 'hang' | 'html' | 'badjson' | 'wrong-shape' | 'truncated' | 'stall-body' | 'huge' }
//   { fault: 'delay', ms, then: step }
//
// A gateway that echoes the request: in the wire text of an error (the message of an error step
// or `sseError`, a `body` step, a 3xx step's headers), `{echo:NAME}` becomes the value of the
// request's header NAME as it arrived (`(none)` without one), and `{echo-escaped:NAME}` the same
// written as JSON \uXXXX escapes (inside a JSON string it decodes to the value, yet never matches
// it as text). E.g. { status: 401, error: { message: 'invalid x-api-key {echo:x-api-key}' } }.
//
// SSE step options (on a reply step, used when the request streams):
//   streamDelayMs: N      pause between events (default: the server's `streamDelayMs`, 0 = just yield)
//   sseError: { type, message? }, sseErrorAfter: N   after N events, `event: error` and the end
//   sseCutAfter: N        after N events the connection is destroyed (no message_stop)
//   sseStallAfter: N      after N events nothing more is sent (until the client gives up)
//   unknownDelta: 'x_delta'   a content_block_delta of that type in the first block
//
// Rules beyond the pairing ones (each a 400 invalid_request_error with the real API's words where known):
//   - every message but a final assistant one has non-empty content ("" and [] are empty);
//   - thinking / redacted_thinking blocks come back unchanged (signatures checked, thinking on or off);
//     with `thinking` enabled or adaptive the assistant turn whose tool_use the final tool results
//     answer (or a final assistant message with server tools) starts with one; thinking rules out a
//     forcing tool_choice, temperature other than 1, top_k, top_p below 0.95; with it off, a final
//     assistant message holds no thinking block;
//   - server tools: typed tool definitions with their own fields; a server_tool_use is followed by
//     its result block in the same message, except in the final message (a paused turn) or while
//     code execution waits for code-called tool results; a client tool_result never answers it;
//   - results for code-called tool_use blocks (programmatic tool calling) need `container`;
//   - compaction, document, search_result, tool_reference, citations have their shapes checked; an
//     unknown block type is a 400, except `x_future_block` (test-only) which is accepted back as is;
//   - newer top-level fields (thinking, service_tier, cache_control, output_config,
//     context_management, container, inference_geo, …) are type-checked.
//
// Request records (`api.requests[i]`): method, path, headers, body, rawBody, retryCount, status,
// requestId, receivedAt, betas (anthropic-beta split on commas), container; for streamed replies
// also stream: true, sseEvents (names sent) and clientClosed (the client left before the end).
// `api.waitFor(predicate, timeoutMs?)`, `api.waitForRequests(n, timeoutMs?)` poll the records.
//
// Prompt caching: with `cache_control` anywhere, usage reports cache tokens from a deterministic
// model (see cacheUsage): the first request with a prefix creates it, later ones read it.
//
// CLI: node stand-in/index.mjs [--port N] [--host H] [--key K] [--demo] [--verbose]

import http from 'node:http';
import path from 'node:path';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const API_VERSION = '2023-06-01';
/** The real API's request size limit. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const TOOL_NAME_PATTERN = '^[a-zA-Z0-9_-]{1,128}$';
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const NO_STEP_LEFT = 'mock-api: no scripted response left for this request';

const ERROR_TYPES = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const ERROR_MESSAGES = {
  400: 'Invalid request',
  401: 'invalid x-api-key',
  402: 'Your credit balance is too low to access the Anthropic API.',
  403: 'Your API key does not have permission to use the specified resource.',
  404: 'The requested resource could not be found.',
  408: 'Request timed out',
  409: 'Conflict',
  413: 'Request exceeds the maximum allowed number of bytes.',
  422: 'Unprocessable entity',
  429: 'Number of request tokens has exceeded your per-minute rate limit',
  500: 'Internal server error',
  503: 'Service unavailable',
  504: 'Request timed out',
  529: 'Overloaded',
};

const DEFAULT_USAGE = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

// ---------------------------------------------------------------------------------------------
// Helpers to build scripted steps
// ---------------------------------------------------------------------------------------------

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomId(length) {
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

/**
 * The key the stand-in signs thinking blocks with. Fixed, so a block built in one process is valid
 * for a stand-in running in another (the CLI); the real API's signatures are opaque too.
 */
const SIGNING_KEY = 'mock-api-thinking-signing-key';

/** The signature of a thinking block: base64 of HMAC-SHA256 over its text. */
export function signThinking(thinkingText) {
  return createHmac('sha256', SIGNING_KEY).update(`thinking\0${thinkingText}`).digest('base64');
}

function validSignature(block) {
  return typeof block.signature === 'string' && typeof block.thinking === 'string' && block.signature === signThinking(block.thinking);
}

/** Signed redacted data: base64 of the payload followed by its 32-byte HMAC. */
function signRedacted(payload) {
  const bytes = Buffer.from(payload, 'utf8');
  const mac = createHmac('sha256', SIGNING_KEY).update('redacted\0').update(bytes).digest();
  return Buffer.concat([bytes, mac]).toString('base64');
}

function validRedactedData(data) {
  if (typeof data !== 'string' || data.length === 0) return false;
  const raw = Buffer.from(data, 'base64');
  if (raw.length < 32 || raw.toString('base64') !== data) return false;
  const payload = raw.subarray(0, raw.length - 32);
  const mac = createHmac('sha256', SIGNING_KEY).update('redacted\0').update(payload).digest();
  return mac.equals(raw.subarray(raw.length - 32));
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
function signed(block) {
  if (!isObject(block)) return block;
  if (block.type === 'thinking' && !has(block, 'signature')) return { ...block, signature: signThinking(String(block.thinking ?? '')) };
  if (block.type === 'redacted_thinking' && !has(block, 'data')) return { ...block, ...redactedThinking() };
  return block;
}

/** A server_tool_use block (Anthropic runs it; the client never answers it); id `srvtoolu_…` unless given. */
export function serverToolUse(name, input, id) {
  return { type: 'server_tool_use', id: id ?? `srvtoolu_${randomId(24)}`, name, input };
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
 * A scripted 200 reply. `stop_reason` defaults to `tool_use` when the content has a tool_use block,
 * else `end_turn`. `content` may also be a plain string (one text block). `container`
 * (`{ id, expires_at }`) and `stop_details` go on the message only when given.
 */
export function reply(content, { stop_reason, usage, model, stop_sequence, container, stop_details } = {}) {
  const blocks = typeof content === 'string' ? [text(content)] : content;
  const step = { content: blocks, stop_reason: stop_reason ?? defaultStopReason(blocks) };
  if (usage !== undefined) step.usage = usage;
  if (model !== undefined) step.model = model;
  if (stop_sequence !== undefined) step.stop_sequence = stop_sequence;
  if (container !== undefined) step.container = container;
  if (stop_details !== undefined) step.stop_details = stop_details;
  return step;
}

function defaultStopReason(blocks) {
  return Array.isArray(blocks) && blocks.some((b) => b && b.type === 'tool_use') ? 'tool_use' : 'end_turn';
}

// ---------------------------------------------------------------------------------------------
// Validation: the real API's rules and messages
// ---------------------------------------------------------------------------------------------

/** A request the API refuses: status, error type and message as the real API sends them. */
class Refusal extends Error {
  constructor(status, message, type = ERROR_TYPES[status]) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

function fail(message) {
  throw new Refusal(400, message);
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

function onlyKeys(obj, allowed, prefix) {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) fail(`${prefix}${key}: Extra inputs are not permitted`);
  }
}

const TOP_LEVEL = new Set([
  'model', 'max_tokens', 'messages', 'system', 'tools', 'tool_choice', 'temperature', 'top_k', 'top_p',
  'stop_sequences', 'stream', 'metadata', 'thinking', 'service_tier', 'cache_control', 'output_config',
  'context_management', 'container', 'inference_geo',
]);
const CUSTOM_TOOL_FIELDS = new Set([
  'type', 'name', 'description', 'input_schema', 'cache_control', 'strict', 'defer_loading', 'allowed_callers', 'input_examples',
]);
/** Fields every Anthropic-defined tool may carry besides `type` and `name`. */
const COMMON_TOOL_FIELDS = ['type', 'name', 'cache_control', 'defer_loading', 'allowed_callers', 'strict'];
const WEB_SEARCH_FIELDS = [...COMMON_TOOL_FIELDS, 'max_uses', 'allowed_domains', 'blocked_domains', 'user_location'];
const WEB_FETCH_FIELDS = [...COMMON_TOOL_FIELDS, 'max_uses', 'allowed_domains', 'blocked_domains', 'citations', 'max_content_tokens'];
/**
 * Anthropic-defined tools (server tools, and client tools whose schema Anthropic defines): the
 * `name` each must have and the fields each accepts. From the API reference and the SDKs' types.
 */
const TYPED_TOOLS = {
  web_search_20250305: { name: 'web_search', fields: WEB_SEARCH_FIELDS },
  web_search_20260209: { name: 'web_search', fields: WEB_SEARCH_FIELDS },
  web_fetch_20250910: { name: 'web_fetch', fields: WEB_FETCH_FIELDS },
  web_fetch_20260209: { name: 'web_fetch', fields: WEB_FETCH_FIELDS },
  code_execution_20250522: { name: 'code_execution', fields: COMMON_TOOL_FIELDS },
  code_execution_20250825: { name: 'code_execution', fields: COMMON_TOOL_FIELDS },
  code_execution_20260120: { name: 'code_execution', fields: COMMON_TOOL_FIELDS },
  tool_search_tool_regex_20251119: { name: 'tool_search_tool_regex', fields: COMMON_TOOL_FIELDS },
  tool_search_tool_bm25_20251119: { name: 'tool_search_tool_bm25', fields: COMMON_TOOL_FIELDS },
  bash_20241022: { name: 'bash', fields: COMMON_TOOL_FIELDS },
  bash_20250124: { name: 'bash', fields: COMMON_TOOL_FIELDS },
  text_editor_20241022: { name: 'str_replace_editor', fields: COMMON_TOOL_FIELDS },
  text_editor_20250124: { name: 'str_replace_editor', fields: COMMON_TOOL_FIELDS },
  text_editor_20250429: { name: 'str_replace_based_edit_tool', fields: COMMON_TOOL_FIELDS },
  text_editor_20250728: { name: 'str_replace_based_edit_tool', fields: [...COMMON_TOOL_FIELDS, 'max_characters'] },
  memory_20250818: { name: 'memory', fields: COMMON_TOOL_FIELDS },
  computer_20241022: { name: 'computer', fields: [...COMMON_TOOL_FIELDS, 'display_width_px', 'display_height_px', 'display_number'] },
  computer_20250124: { name: 'computer', fields: [...COMMON_TOOL_FIELDS, 'display_width_px', 'display_height_px', 'display_number'] },
  computer_20251124: { name: 'computer', fields: [...COMMON_TOOL_FIELDS, 'display_width_px', 'display_height_px', 'display_number', 'enable_zoom'] },
};
const TOOL_TAGS = ['custom', ...Object.keys(TYPED_TOOLS)];
const TOOL_CHOICE_FIELDS = {
  auto: new Set(['type', 'disable_parallel_tool_use']),
  any: new Set(['type', 'disable_parallel_tool_use']),
  tool: new Set(['type', 'name', 'disable_parallel_tool_use']),
  none: new Set(['type']),
};
const MESSAGE_FIELDS = new Set(['role', 'content']);
const TEXT_FIELDS = new Set(['type', 'text', 'cache_control', 'citations']);
const IMAGE_FIELDS = new Set(['type', 'source', 'cache_control']);
const DOCUMENT_FIELDS = new Set(['type', 'source', 'title', 'context', 'citations', 'cache_control']);
const SEARCH_RESULT_FIELDS = new Set(['type', 'source', 'title', 'content', 'citations', 'cache_control']);
const TOOL_REFERENCE_FIELDS = new Set(['type', 'tool_name', 'cache_control']);
const TOOL_USE_FIELDS = new Set(['type', 'id', 'name', 'input', 'cache_control', 'caller']);
const SERVER_TOOL_USE_FIELDS = new Set(['type', 'id', 'name', 'input', 'cache_control', 'caller']);
const SERVER_RESULT_FIELDS = new Set(['type', 'tool_use_id', 'content', 'cache_control', 'caller']);
const TOOL_RESULT_FIELDS = new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']);
const THINKING_FIELDS = new Set(['type', 'thinking', 'signature']);
const REDACTED_THINKING_FIELDS = new Set(['type', 'data']);
const COMPACTION_FIELDS = new Set(['type', 'content', 'encrypted_content', 'cache_control']);
const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const SERVER_TOOL_NAMES = new Set([
  'web_search', 'web_fetch', 'code_execution', 'bash_code_execution', 'text_editor_code_execution',
  'tool_search_tool_regex', 'tool_search_tool_bm25',
]);
const SERVER_TOOL_ID = /^srvtoolu_[a-zA-Z0-9_]+$/;
/** Result blocks of server tools: they come in assistant messages, after their server_tool_use. */
const SERVER_RESULT_TYPES = new Set([
  'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result', 'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result', 'tool_search_tool_result',
]);
/** A block type no API version has: a scripted reply may hold it and it is accepted back unchanged (round-trip tests). */
const FUTURE_BLOCK = 'x_future_block';
const MESSAGE_BLOCK_TAGS = [
  'text', 'image', 'document', 'search_result', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result',
  'server_tool_use', ...SERVER_RESULT_TYPES, 'compaction',
];
const CITATION_TYPES = new Set(['char_location', 'page_location', 'content_block_location', 'web_search_result_location', 'search_result_location']);
const THINKING_DOCS = 'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking';

const tagList = (tags) => tags.map((t) => `'${t}'`).join(', ');
function badTag(where, tag, tags) {
  fail(`${where}: Input tag '${tag}' found using 'type' does not match any of the expected tags: ${tagList(tags)}`);
}

function checkString(value, where) {
  if (typeof value !== 'string') fail(`${where}: Input should be a valid string`);
}

function checkBoolean(value, where) {
  if (typeof value !== 'boolean') fail(`${where}: Input should be a valid boolean`);
}

function checkInteger(value, where, min) {
  if (!Number.isInteger(value)) fail(`${where}: Input should be a valid integer`);
  if (min !== undefined && value < min) fail(`${where}: Input should be greater than or equal to ${min}`);
}

function checkStringList(value, where) {
  if (!Array.isArray(value)) fail(`${where}: Input should be a valid list`);
  value.forEach((s, i) => checkString(s, `${where}.${i}`));
}

function checkDict(value, where) {
  if (!isObject(value)) fail(`${where}: Input should be a valid dictionary`);
}

/** `cache_control` on a block, a tool, a system block or the request (`prefix` ends with '.' or is ''). */
function checkCacheControl(block, prefix) {
  if (!has(block, 'cache_control') || block.cache_control === null) return;
  const cc = block.cache_control;
  if (!isObject(cc)) fail(`${prefix}cache_control: Input should be a valid dictionary`);
  if (cc.type !== 'ephemeral') fail(`${prefix}cache_control.type: Input should be 'ephemeral'`);
  onlyKeys(cc, new Set(['type', 'ttl']), `${prefix}cache_control.`);
  if (has(cc, 'ttl') && cc.ttl !== '5m' && cc.ttl !== '1h') fail(`${prefix}cache_control.ttl: Input should be '5m' or '1h'`);
}

function checkCitations(block, p) {
  if (!has(block, 'citations') || block.citations === null) return;
  if (!Array.isArray(block.citations)) fail(`${p}.citations: Input should be a valid list`);
  block.citations.forEach((c, k) => {
    checkDict(c, `${p}.citations.${k}`);
    if (!CITATION_TYPES.has(c.type)) badTag(`${p}.citations.${k}`, c.type, [...CITATION_TYPES]);
  });
}

function checkTextBlock(block, p) {
  onlyKeys(block, TEXT_FIELDS, `${p}.`);
  if (!has(block, 'text')) fail(`${p}.text: Field required`);
  checkString(block.text, `${p}.text`);
  if (block.text.length === 0) fail('messages: text content blocks must be non-empty');
  if (block.text.trim().length === 0) fail('messages: text content blocks must contain non-whitespace text');
  checkCitations(block, p);
  checkCacheControl(block, `${p}.`);
}

function checkImageBlock(block, p) {
  onlyKeys(block, IMAGE_FIELDS, `${p}.`);
  if (!has(block, 'source')) fail(`${p}.source: Field required`);
  const src = block.source;
  if (!isObject(src)) fail(`${p}.source: Input should be a valid dictionary`);
  if (src.type === 'base64') {
    if (!IMAGE_MEDIA_TYPES.has(src.media_type)) {
      fail(`${p}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`);
    }
    checkString(src.data, `${p}.source.base64.data`);
  } else if (src.type === 'url') {
    checkString(src.url, `${p}.source.url.url`);
  } else if (src.type === 'file') {
    checkString(src.file_id, `${p}.source.file.file_id`);
  } else {
    fail(`${p}.source: Input tag '${src.type}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`);
  }
  checkCacheControl(block, `${p}.`);
}

/** A document: a PDF (base64 or URL), plain text, custom content blocks, or a file. */
function checkDocumentBlock(block, p) {
  onlyKeys(block, DOCUMENT_FIELDS, `${p}.`);
  if (!has(block, 'source')) fail(`${p}.source: Field required`);
  const src = block.source;
  checkDict(src, `${p}.source`);
  switch (src.type) {
    case 'base64':
      if (src.media_type !== 'application/pdf') fail(`${p}.source.base64.media_type: Input should be 'application/pdf'`);
      checkString(src.data, `${p}.source.base64.data`);
      break;
    case 'text':
      if (src.media_type !== 'text/plain') fail(`${p}.source.text.media_type: Input should be 'text/plain'`);
      checkString(src.data, `${p}.source.text.data`);
      break;
    case 'url':
      checkString(src.url, `${p}.source.url.url`);
      break;
    case 'content':
      if (typeof src.content === 'string') break;
      if (!Array.isArray(src.content)) fail(`${p}.source.content.content: Input should be a valid string or list`);
      src.content.forEach((b, k) => {
        const q = `${p}.source.content.content.${k}`;
        checkDict(b, q);
        if (b.type === 'text') checkTextBlock(b, q);
        else if (b.type === 'image') checkImageBlock(b, q);
        else badTag(q, b.type, ['text', 'image']);
      });
      break;
    case 'file':
      checkString(src.file_id, `${p}.source.file.file_id`);
      break;
    default:
      badTag(`${p}.source`, src.type, ['base64', 'text', 'url', 'content', 'file']);
  }
  if (has(block, 'title') && block.title !== null) checkString(block.title, `${p}.title`);
  if (has(block, 'context') && block.context !== null) checkString(block.context, `${p}.context`);
  if (has(block, 'citations') && block.citations !== null) {
    checkDict(block.citations, `${p}.citations`);
    if (has(block.citations, 'enabled')) checkBoolean(block.citations.enabled, `${p}.citations.enabled`);
  }
  checkCacheControl(block, `${p}.`);
}

/** A search_result: `source` and `title` strings, `content` a list of text blocks. */
function checkSearchResultBlock(block, p) {
  onlyKeys(block, SEARCH_RESULT_FIELDS, `${p}.`);
  for (const f of ['source', 'title', 'content']) if (!has(block, f)) fail(`${p}.${f}: Field required`);
  checkString(block.source, `${p}.source`);
  checkString(block.title, `${p}.title`);
  if (!Array.isArray(block.content)) fail(`${p}.content: Input should be a valid list`);
  block.content.forEach((b, k) => {
    const q = `${p}.content.${k}`;
    checkDict(b, q);
    if (b.type !== 'text') badTag(q, b.type, ['text']);
    checkTextBlock(b, q);
  });
  if (has(block, 'citations') && block.citations !== null) {
    checkDict(block.citations, `${p}.citations`);
    if (has(block.citations, 'enabled')) checkBoolean(block.citations.enabled, `${p}.citations.enabled`);
  }
  checkCacheControl(block, `${p}.`);
}

function checkSystem(system) {
  if (typeof system === 'string') return;
  if (!Array.isArray(system)) fail('system: Input should be a valid string or a list of text blocks');
  system.forEach((block, i) => {
    const p = `system.${i}`;
    if (!isObject(block)) fail(`${p}: Input should be a valid dictionary`);
    if (block.type !== 'text') fail(`${p}.type: Input should be 'text'`);
    onlyKeys(block, TEXT_FIELDS, `${p}.`);
    if (!has(block, 'text')) fail(`${p}.text: Field required`);
    checkString(block.text, `${p}.text`);
    if (block.text.length === 0) fail('system: text content blocks must be non-empty');
    checkCacheControl(block, `${p}.`);
  });
}

function checkCommonToolFields(tool, p) {
  if (has(tool, 'defer_loading')) checkBoolean(tool.defer_loading, `${p}.defer_loading`);
  if (has(tool, 'strict')) checkBoolean(tool.strict, `${p}.strict`);
  if (has(tool, 'allowed_callers')) checkStringList(tool.allowed_callers, `${p}.allowed_callers`);
  checkCacheControl(tool, `${p}.`);
}

function checkDomains(tool, p) {
  for (const f of ['allowed_domains', 'blocked_domains']) {
    if (has(tool, f) && tool[f] !== null) checkStringList(tool[f], `${p}.${f}`);
  }
  if (Array.isArray(tool.allowed_domains) && Array.isArray(tool.blocked_domains)) {
    fail(`${p}: Cannot specify both allowed_domains and blocked_domains`);
  }
  if (has(tool, 'max_uses') && tool.max_uses !== null) checkInteger(tool.max_uses, `${p}.max_uses`, 1);
}

/** An Anthropic-defined tool: its fixed name and its own fields. */
function checkTypedTool(tool, i) {
  const spec = TYPED_TOOLS[tool.type];
  const p = `tools.${i}.${tool.type}`;
  onlyKeys(tool, new Set(spec.fields), `${p}.`);
  if (!has(tool, 'name')) fail(`${p}.name: Field required`);
  if (tool.name !== spec.name) fail(`${p}.name: Input should be '${spec.name}'`);
  checkCommonToolFields(tool, p);
  if (tool.type.startsWith('web_search') || tool.type.startsWith('web_fetch')) checkDomains(tool, p);
  if (has(tool, 'user_location') && tool.user_location !== null) {
    const loc = tool.user_location;
    checkDict(loc, `${p}.user_location`);
    if (loc.type !== 'approximate') fail(`${p}.user_location.type: Input should be 'approximate'`);
    onlyKeys(loc, new Set(['type', 'city', 'region', 'country', 'timezone']), `${p}.user_location.`);
    for (const f of ['city', 'region', 'country', 'timezone']) if (has(loc, f) && loc[f] !== null) checkString(loc[f], `${p}.user_location.${f}`);
  }
  if (has(tool, 'citations') && tool.citations !== null) {
    checkDict(tool.citations, `${p}.citations`);
    if (has(tool.citations, 'enabled')) checkBoolean(tool.citations.enabled, `${p}.citations.enabled`);
  }
  if (has(tool, 'max_content_tokens') && tool.max_content_tokens !== null) checkInteger(tool.max_content_tokens, `${p}.max_content_tokens`, 1);
  if (has(tool, 'max_characters') && tool.max_characters !== null) checkInteger(tool.max_characters, `${p}.max_characters`, 1);
  for (const f of ['display_width_px', 'display_height_px']) if (has(tool, f) || tool.type.startsWith('computer')) checkInteger(tool[f], `${p}.${f}`, 1);
}

/** Checks `tools`; returns the offered names. */
function checkTools(tools) {
  if (!Array.isArray(tools)) fail('tools: Input should be a valid list');
  const names = new Set();
  tools.forEach((tool, i) => {
    if (!isObject(tool)) fail(`tools.${i}: Input should be a valid dictionary`);
    if (has(tool, 'type') && tool.type !== 'custom' && tool.type !== null) {
      if (!has(TYPED_TOOLS, tool.type)) badTag(`tools.${i}`, tool.type, TOOL_TAGS);
      checkTypedTool(tool, i);
    } else {
      const p = `tools.${i}.custom`;
      onlyKeys(tool, CUSTOM_TOOL_FIELDS, `${p}.`);
      if (!has(tool, 'name')) fail(`${p}.name: Field required`);
      checkString(tool.name, `${p}.name`);
      if (!TOOL_NAME.test(tool.name)) fail(`${p}.name: String should match pattern '${TOOL_NAME_PATTERN}'`);
      if (has(tool, 'description')) checkString(tool.description, `${p}.description`);
      if (!has(tool, 'input_schema')) fail(`${p}.input_schema: Field required`);
      if (!isObject(tool.input_schema)) fail(`${p}.input_schema: Input should be a valid dictionary`);
      if (!has(tool.input_schema, 'type')) fail(`${p}.input_schema.type: Field required`);
      if (tool.input_schema.type !== 'object') fail(`${p}.input_schema.type: Input should be 'object'`);
      if (has(tool, 'input_examples')) {
        if (!Array.isArray(tool.input_examples)) fail(`${p}.input_examples: Input should be a valid list`);
        tool.input_examples.forEach((e, k) => checkDict(e, `${p}.input_examples.${k}`));
      }
      checkCommonToolFields(tool, p);
    }
    if (names.has(tool.name)) fail('tools: Tool names must be unique.');
    names.add(tool.name);
  });
  return names;
}

function checkToolChoice(choice, names) {
  if (!isObject(choice)) fail('tool_choice: Input should be a valid dictionary');
  const type = choice.type;
  if (typeof type !== 'string' || !has(TOOL_CHOICE_FIELDS, type)) {
    fail(`tool_choice: Input tag '${type}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`);
  }
  onlyKeys(choice, TOOL_CHOICE_FIELDS[type], `tool_choice.${type}.`);
  if (has(choice, 'disable_parallel_tool_use') && typeof choice.disable_parallel_tool_use !== 'boolean') {
    fail(`tool_choice.${type}.disable_parallel_tool_use: Input should be a valid boolean`);
  }
  if (type === 'tool') {
    if (!has(choice, 'name')) fail('tool_choice.tool.name: Field required');
    checkString(choice.name, 'tool_choice.tool.name');
  }
  if ((type === 'any' || type === 'tool') && names.size === 0) {
    fail(`tool_choice: tool_choice.type '${type}' may only be specified while providing tools.`);
  }
  if (type === 'tool' && !names.has(choice.name)) {
    fail(`tool_choice.tool.name: tool '${choice.name}' is not one of the offered tools: ${[...names].join(', ')}`);
  }
}

const TOOL_RESULT_TAGS = ['text', 'image', 'document', 'search_result', 'tool_reference'];

function checkToolResultContent(content, p) {
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) fail(`${p}.content: Input should be a valid string or list`);
  content.forEach((block, k) => {
    const q = `${p}.content.${k}`;
    if (!isObject(block)) fail(`${q}: Input should be a valid dictionary`);
    switch (block.type) {
      case 'text':
        return checkTextBlock(block, q);
      case 'image':
        return checkImageBlock(block, q);
      case 'document':
        return checkDocumentBlock(block, q);
      case 'search_result':
        return checkSearchResultBlock(block, q);
      case 'tool_reference':
        onlyKeys(block, TOOL_REFERENCE_FIELDS, `${q}.`);
        if (!has(block, 'tool_name')) fail(`${q}.tool_name: Field required`);
        checkString(block.tool_name, `${q}.tool_name`);
        return checkCacheControl(block, `${q}.`);
      default:
        badTag(q, block.type, TOOL_RESULT_TAGS);
    }
  });
}

function onlyIn(role, wanted, block, p) {
  if (role !== wanted) fail(`${p}: \`${block.type}\` blocks can only be in \`${wanted}\` messages`);
}

function checkCaller(block, p) {
  if (!has(block, 'caller') || block.caller === null) return;
  checkDict(block.caller, `${p}.caller`);
  checkString(block.caller.type, `${p}.caller.type`);
}

function checkBlock(block, role, p) {
  if (!isObject(block)) fail(`${p}: Input should be a valid dictionary`);
  switch (block.type) {
    case 'text':
      return checkTextBlock(block, p);
    case 'image':
      onlyIn(role, 'user', block, p);
      return checkImageBlock(block, p);
    case 'document':
      onlyIn(role, 'user', block, p);
      return checkDocumentBlock(block, p);
    case 'search_result':
      onlyIn(role, 'user', block, p);
      return checkSearchResultBlock(block, p);
    case 'tool_use':
      onlyIn(role, 'assistant', block, p);
      onlyKeys(block, TOOL_USE_FIELDS, `${p}.`);
      for (const f of ['id', 'name', 'input']) if (!has(block, f)) fail(`${p}.${f}: Field required`);
      checkString(block.id, `${p}.id`);
      if (!TOOL_ID.test(block.id)) fail(`${p}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      checkString(block.name, `${p}.name`);
      if (block.name.length === 0) fail(`${p}.name: String should have at least 1 character`);
      if (!isObject(block.input)) fail(`${p}.input: Input should be a valid dictionary`);
      checkCaller(block, p);
      return checkCacheControl(block, `${p}.`);
    case 'tool_result':
      onlyIn(role, 'user', block, p);
      onlyKeys(block, TOOL_RESULT_FIELDS, `${p}.`);
      if (!has(block, 'tool_use_id')) fail(`${p}.tool_use_id: Field required`);
      checkString(block.tool_use_id, `${p}.tool_use_id`);
      if (!TOOL_ID.test(block.tool_use_id)) fail(`${p}.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      if (has(block, 'content')) checkToolResultContent(block.content, p);
      if (has(block, 'is_error') && typeof block.is_error !== 'boolean') fail(`${p}.is_error: Input should be a valid boolean`);
      return checkCacheControl(block, `${p}.`);
    case 'thinking':
      onlyIn(role, 'assistant', block, p);
      onlyKeys(block, THINKING_FIELDS, `${p}.`);
      for (const f of ['thinking', 'signature']) if (!has(block, f)) fail(`${p}.${f}: Field required`);
      checkString(block.thinking, `${p}.thinking`);
      checkString(block.signature, `${p}.signature`);
      if (!validSignature(block)) fail(`${p}: Invalid \`signature\` in \`thinking\` block`);
      return;
    case 'redacted_thinking':
      onlyIn(role, 'assistant', block, p);
      onlyKeys(block, REDACTED_THINKING_FIELDS, `${p}.`);
      if (!has(block, 'data')) fail(`${p}.data: Field required`);
      checkString(block.data, `${p}.data`);
      if (!validRedactedData(block.data)) fail(`${p}: Invalid \`data\` in \`redacted_thinking\` block`);
      return;
    case 'server_tool_use':
      onlyIn(role, 'assistant', block, p);
      onlyKeys(block, SERVER_TOOL_USE_FIELDS, `${p}.`);
      for (const f of ['id', 'name', 'input']) if (!has(block, f)) fail(`${p}.${f}: Field required`);
      checkString(block.id, `${p}.id`);
      if (!SERVER_TOOL_ID.test(block.id)) fail(`${p}.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'`);
      if (!SERVER_TOOL_NAMES.has(block.name)) fail(`${p}.name: Input should be ${tagList([...SERVER_TOOL_NAMES])}`);
      if (!isObject(block.input)) fail(`${p}.input: Input should be a valid dictionary`);
      checkCaller(block, p);
      return checkCacheControl(block, `${p}.`);
    case 'compaction':
      onlyIn(role, 'assistant', block, p);
      onlyKeys(block, COMPACTION_FIELDS, `${p}.`);
      if (has(block, 'content') && block.content !== null) checkString(block.content, `${p}.content`);
      if (has(block, 'encrypted_content') && block.encrypted_content !== null) checkString(block.encrypted_content, `${p}.encrypted_content`);
      return checkCacheControl(block, `${p}.`);
    case FUTURE_BLOCK:
      return onlyIn(role, 'assistant', block, p); // accepted as it came, whatever it holds
    default:
      if (SERVER_RESULT_TYPES.has(block.type)) return checkServerResult(block, role, p);
      badTag(p, block.type, MESSAGE_BLOCK_TAGS);
  }
}

/** A server tool's result block; web_search results are checked in depth, the others by shape. */
function checkServerResult(block, role, p) {
  onlyIn(role, 'assistant', block, p);
  onlyKeys(block, SERVER_RESULT_FIELDS, `${p}.`);
  for (const f of ['tool_use_id', 'content']) if (!has(block, f)) fail(`${p}.${f}: Field required`);
  checkString(block.tool_use_id, `${p}.tool_use_id`);
  if (!SERVER_TOOL_ID.test(block.tool_use_id)) fail(`${p}.tool_use_id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'`);
  if (block.type === 'web_search_tool_result') {
    const c = block.content;
    if (isObject(c)) {
      if (c.type !== 'web_search_tool_result_error') badTag(`${p}.content`, c.type, ['web_search_tool_result_error']);
      checkString(c.error_code, `${p}.content.error_code`);
    } else if (Array.isArray(c)) {
      c.forEach((r, k) => {
        const q = `${p}.content.${k}`;
        checkDict(r, q);
        if (r.type !== 'web_search_result') badTag(q, r.type, ['web_search_result']);
        onlyKeys(r, new Set(['type', 'url', 'title', 'encrypted_content', 'page_age']), `${q}.`);
        for (const f of ['url', 'title', 'encrypted_content']) {
          if (!has(r, f)) fail(`${q}.${f}: Field required`);
          checkString(r[f], `${q}.${f}`);
        }
        if (has(r, 'page_age') && r.page_age !== null) checkString(r.page_age, `${q}.page_age`);
      });
    } else {
      fail(`${p}.content: Input should be a valid list or dictionary`);
    }
  } else if (!isObject(block.content) && !Array.isArray(block.content)) {
    fail(`${p}.content: Input should be a valid dictionary or list`);
  }
  checkCacheControl(block, `${p}.`);
}

const EMPTY_MESSAGE = 'all messages must have non-empty content except for the optional final assistant message';

function checkMessageShapes(messages) {
  const last = messages.length - 1;
  messages.forEach((m, i) => {
    const p = `messages.${i}`;
    if (!isObject(m)) fail(`${p}: Input should be a valid dictionary`);
    onlyKeys(m, MESSAGE_FIELDS, `${p}.`);
    if (!has(m, 'role')) fail(`${p}.role: Field required`);
    if (m.role !== 'user' && m.role !== 'assistant') fail(`${p}.role: Input should be 'user' or 'assistant'`);
    if (!has(m, 'content')) fail(`${p}.content: Field required`);
    const finalAssistant = i === last && m.role === 'assistant';
    if (typeof m.content === 'string') {
      if (m.content.length === 0 && !finalAssistant) fail(`${p}: ${EMPTY_MESSAGE}`);
    } else if (Array.isArray(m.content)) {
      if (m.content.length === 0 && !finalAssistant) fail(`${p}: ${EMPTY_MESSAGE}`);
      m.content.forEach((block, j) => checkBlock(block, m.role, `${p}.content.${j}`));
    } else {
      fail(`${p}.content: Input should be a valid string or list`);
    }
  });
  if (messages[0].role !== 'user') fail('messages: first message must use the "user" role');
}

const blocksOf = (m) => (m && Array.isArray(m.content) ? m.content : []);

/** A tool_use called from inside code execution (programmatic tool calling), not by the model directly. */
const calledByCode = (b) => b.type === 'tool_use' && isObject(b.caller) && b.caller.type !== 'direct';

/**
 * Server tools: every server_tool_use has its result block after it in the same message, except in
 * the final message (a paused turn sent back to continue) or, with programmatic tool calling, in the
 * assistant message whose code-called tool_use blocks the final user message answers (the code
 * execution is still pending). A result block must follow its server_tool_use.
 */
function checkServerPairing(messages) {
  const last = messages.length - 1;
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const blocks = blocksOf(m);
    const pendingAllowed = i === last || (i === last - 1 && blocks.some(calledByCode));
    const open = new Map();
    blocks.forEach((b, j) => {
      if (b.type === 'server_tool_use') open.set(b.id, j);
      else if (SERVER_RESULT_TYPES.has(b.type)) {
        if (!open.has(b.tool_use_id)) {
          fail(
            `messages.${i}.content.${j}: \`${b.type}\` block has tool_use_id ${b.tool_use_id}, which matches no \`server_tool_use\` block before it in this message.`,
          );
        }
        open.delete(b.tool_use_id);
      }
    });
    if (open.size > 0 && !pendingAllowed) {
      fail(
        `messages.${i}: \`server_tool_use\` ids were found without their result blocks: ${[...open.keys()].join(', ')}. ` +
          'A `server_tool_use` block must be followed by its result block in the same message, unless it is in the final message (a paused turn).',
      );
    }
  });
}

/** The tool_use / tool_result pairing rules, with the real API's messages. */
function checkPairing(messages) {
  const seenIds = new Set();
  messages.forEach((m, i) => {
    const blocks = blocksOf(m);
    if (m.role === 'assistant') {
      const ids = [];
      blocks.forEach((b, j) => {
        if (b.type !== 'tool_use') return;
        if (seenIds.has(b.id)) fail(`messages.${i}.content.${j}: \`tool_use\` ids must be unique`);
        seenIds.add(b.id);
        ids.push(b.id);
      });
      if (ids.length === 0) return;
      const next = messages[i + 1];
      const nextBlocks = next && next.role === 'user' ? blocksOf(next) : [];
      const answered = new Set(nextBlocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        fail(
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        );
      }
      let leading = 0;
      while (leading < nextBlocks.length && nextBlocks[leading].type === 'tool_result') leading++;
      if (leading < ids.length) {
        fail(
          `messages.${i + 1}: Did not find ${ids.length} \`tool_result\` block(s) at the beginning of this message. ` +
            'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
        );
      }
    } else {
      const prev = messages[i - 1];
      const offered = new Set(
        prev && prev.role === 'assistant' ? blocksOf(prev).filter((b) => b.type === 'tool_use').map((b) => b.id) : [],
      );
      const answered = new Set();
      blocks.forEach((b, j) => {
        if (b.type !== 'tool_result') return;
        if (!offered.has(b.tool_use_id)) {
          fail(
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. ` +
              'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          );
        }
        if (answered.has(b.tool_use_id)) {
          fail(`messages.${i}.content.${j}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${b.tool_use_id}`);
        }
        answered.add(b.tool_use_id);
      });
    }
  });
}

const thinkingOn = (body) => isObject(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive');

function checkThinkingConfig(body) {
  const t = body.thinking;
  checkDict(t, 'thinking');
  const tags = ['enabled', 'disabled', 'adaptive'];
  if (!tags.includes(t.type)) badTag('thinking', t.type, tags);
  if (t.type === 'enabled') {
    onlyKeys(t, new Set(['type', 'budget_tokens']), 'thinking.enabled.');
    if (!has(t, 'budget_tokens')) fail('thinking.enabled.budget_tokens: Field required');
    checkInteger(t.budget_tokens, 'thinking.enabled.budget_tokens', 1024);
    if (Number.isInteger(body.max_tokens) && t.budget_tokens >= body.max_tokens) {
      fail(
        '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at ' +
          'https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
      );
    }
  } else {
    onlyKeys(t, new Set(['type']), `thinking.${t.type}.`);
  }
}

/** What thinking rules out: sampling changes and forced tool use. */
function checkThinkingCompatibility(body) {
  if (!thinkingOn(body)) return;
  if (has(body, 'temperature') && body.temperature !== 1) {
    fail(`\`temperature\` may only be set to 1 when thinking is enabled or in adaptive mode. ${THINKING_DOCS}`);
  }
  if (has(body, 'top_k')) fail(`\`top_k\` must be unset when thinking is enabled. ${THINKING_DOCS}`);
  if (has(body, 'top_p') && body.top_p < 0.95) {
    fail(`\`top_p\` must be greater than or equal to 0.95 or unset when thinking is enabled. ${THINKING_DOCS}`);
  }
  const forced = body.tool_choice?.type;
  if (forced === 'any' || forced === 'tool') fail('Thinking may not be enabled when tool_choice forces tool use.');
}

/**
 * With thinking on, the assistant message of the current tool loop (the one whose tool_use blocks
 * the final user message answers, or a final assistant message holding server tool calls) must
 * start with a thinking or redacted_thinking block.
 */
function checkThinkingPlacement(messages) {
  const last = messages.length - 1;
  let n = -1;
  const final = messages[last];
  if (final.role === 'user' && blocksOf(final).some((b) => b.type === 'tool_result') && messages[last - 1]?.role === 'assistant') {
    n = last - 1;
  } else if (final.role === 'assistant' && blocksOf(final).some((b) => b.type === 'tool_use' || b.type === 'server_tool_use')) {
    n = last;
  }
  if (n < 0) return;
  const first = blocksOf(messages[n])[0];
  if (!first || first.type === 'thinking' || first.type === 'redacted_thinking') return;
  fail(
    `messages.${n}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. ` +
      'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of ' +
      '`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this ' +
      'requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking',
  );
}

/** With thinking off, a final (prefilled or paused) assistant message may not hold thinking blocks. */
function checkNoFinalThinking(messages) {
  const n = messages.length - 1;
  if (messages[n].role !== 'assistant') return;
  const m = blocksOf(messages[n]).findIndex((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
  if (m < 0) return;
  fail(
    `messages.${n}.content.${m}: When thinking is disabled, an \`assistant\` message in the final position cannot contain ` +
      '`thinking`. To use thinking blocks, enable `thinking` in your request.',
  );
}

export const CONTAINER_REQUIRED = 'container_id is required when there are pending tool uses generated by code execution with tools.';

/** Programmatic tool calling: results for code-called tool_use blocks continue a container, which must be named. */
function checkPendingCodeExecution(body) {
  const messages = body.messages;
  const final = messages[messages.length - 1];
  const prev = messages[messages.length - 2];
  if (final.role !== 'user' || prev?.role !== 'assistant' || !blocksOf(prev).some(calledByCode)) return;
  if (body.container === undefined || body.container === null) fail(CONTAINER_REQUIRED);
}

function checkOptionalFields(body) {
  if (has(body, 'temperature')) {
    if (typeof body.temperature !== 'number' || !Number.isFinite(body.temperature)) fail('temperature: Input should be a valid number');
    if (body.temperature < 0) fail('temperature: Input should be greater than or equal to 0');
    if (body.temperature > 1) fail('temperature: Input should be less than or equal to 1');
  }
  if (has(body, 'top_p')) {
    if (typeof body.top_p !== 'number' || !Number.isFinite(body.top_p)) fail('top_p: Input should be a valid number');
    if (body.top_p < 0 || body.top_p > 1) fail('top_p: Input should be between 0 and 1');
  }
  if (has(body, 'top_k')) checkInteger(body.top_k, 'top_k', 0);
  if (has(body, 'stop_sequences')) checkStringList(body.stop_sequences, 'stop_sequences');
  if (has(body, 'metadata')) {
    checkDict(body.metadata, 'metadata');
    onlyKeys(body.metadata, new Set(['user_id']), 'metadata.');
    if (has(body.metadata, 'user_id') && body.metadata.user_id !== null) checkString(body.metadata.user_id, 'metadata.user_id');
  }
  if (has(body, 'thinking')) checkThinkingConfig(body);
  if (has(body, 'service_tier') && body.service_tier !== 'auto' && body.service_tier !== 'standard_only') {
    fail("service_tier: Input should be 'auto' or 'standard_only'");
  }
  if (has(body, 'cache_control')) {
    if (!isObject(body.cache_control)) fail('cache_control: Input should be a valid dictionary');
    checkCacheControl(body, '');
  }
  if (has(body, 'output_config')) {
    const oc = body.output_config;
    checkDict(oc, 'output_config');
    onlyKeys(oc, new Set(['effort', 'format']), 'output_config.');
    if (has(oc, 'effort') && oc.effort !== null && !['low', 'medium', 'high', 'max'].includes(oc.effort)) {
      fail("output_config.effort: Input should be 'low', 'medium', 'high' or 'max'");
    }
    if (has(oc, 'format') && oc.format !== null) {
      checkDict(oc.format, 'output_config.format');
      if (oc.format.type !== 'json_schema') badTag('output_config.format', oc.format.type, ['json_schema']);
      checkDict(oc.format.schema, 'output_config.format.schema');
    }
  }
  if (has(body, 'context_management') && body.context_management !== null) {
    const cm = body.context_management;
    checkDict(cm, 'context_management');
    onlyKeys(cm, new Set(['edits']), 'context_management.');
    if (has(cm, 'edits')) {
      if (!Array.isArray(cm.edits)) fail('context_management.edits: Input should be a valid list');
      cm.edits.forEach((e, k) => {
        checkDict(e, `context_management.edits.${k}`);
        checkString(e.type, `context_management.edits.${k}.type`);
      });
    }
  }
  if (has(body, 'container') && body.container !== null) {
    if (isObject(body.container)) {
      onlyKeys(body.container, new Set(['id', 'skills']), 'container.');
      if (has(body.container, 'id') && body.container.id !== null) checkString(body.container.id, 'container.id');
    } else {
      checkString(body.container, 'container');
    }
  }
  if (has(body, 'inference_geo') && body.inference_geo !== null) checkString(body.inference_geo, 'inference_geo');
}

/** Validates a parsed request body; throws a Refusal the way the real API would answer. */
function validateBody(body) {
  if (!isObject(body)) fail('Input should be a valid dictionary (the request body must be a JSON object)');
  onlyKeys(body, TOP_LEVEL, '');

  if (!has(body, 'model')) fail('model: Field required');
  checkString(body.model, 'model');
  if (body.model.length === 0) fail('model: String should have at least 1 character');

  if (!has(body, 'max_tokens')) fail('max_tokens: Field required');
  if (!Number.isInteger(body.max_tokens)) fail('max_tokens: Input should be a valid integer');
  if (body.max_tokens < 1) fail('max_tokens: Input should be greater than or equal to 1');

  if (!has(body, 'messages')) fail('messages: Field required');
  if (!Array.isArray(body.messages)) fail('messages: Input should be a valid list');
  if (body.messages.length === 0) fail('messages: at least one message is required');

  if (has(body, 'stream')) checkBoolean(body.stream, 'stream');
  if (has(body, 'system')) checkSystem(body.system);
  checkOptionalFields(body);
  const names = has(body, 'tools') ? checkTools(body.tools) : new Set();
  if (has(body, 'tool_choice')) checkToolChoice(body.tool_choice, names);
  checkThinkingCompatibility(body);

  checkMessageShapes(body.messages);
  checkPairing(body.messages);
  checkServerPairing(body.messages);
  if (thinkingOn(body)) checkThinkingPlacement(body.messages);
  else checkNoFinalThinking(body.messages);
  checkPendingCodeExecution(body);
}

/** Header checks, in the order the real API applies them (auth first). */
function checkHeaders(req, apiKey) {
  const xKey = req.headers['x-api-key'];
  const auth = req.headers.authorization;
  const bearer = typeof auth === 'string' && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '') : undefined;
  const authorised = xKey !== undefined ? xKey === apiKey : bearer === apiKey;
  if (!authorised) throw new Refusal(401, 'invalid x-api-key');

  const version = req.headers['anthropic-version'];
  if (version === undefined) {
    fail(`anthropic-version: header is required (this stand-in accepts only "${API_VERSION}")`);
  }
  if (version !== API_VERSION) {
    fail(`anthropic-version: "${version}" is not a valid version (this stand-in accepts only "${API_VERSION}")`);
  }
  const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    fail(`content-type: must be application/json, got ${JSON.stringify(req.headers['content-type'] ?? null)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

/** Reads the body, keeping at most MAX_BODY_BYTES; resolves null when the client went away. */
function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      done = true;
      resolve(size > MAX_BODY_BYTES ? { tooLarge: true, raw: '' } : { tooLarge: false, raw: Buffer.concat(chunks).toString('utf8') });
    });
    req.on('error', () => {
      if (!done) resolve(null);
      done = true;
    });
    req.on('close', () => {
      if (!done) resolve(null);
      done = true;
    });
  });
}

function parseRetryCount(value) {
  return value === undefined ? null : Number(Array.isArray(value) ? value[0] : value);
}

const HTML_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n' +
  '<body><center><h1>502 Bad Gateway</h1></center><hr><center>mock-api proxy</center></body></html>\n';

// ---------------------------------------------------------------------------------------------
// Prompt caching: a small deterministic model of the usage it reports
// ---------------------------------------------------------------------------------------------

/**
 * The cacheable prefix of a request, block by block: the tools, then the system prompt, then the
 * messages' blocks, in that order (as the real API builds it).
 */
function cacheItems(body) {
  const items = [];
  for (const tool of Array.isArray(body.tools) ? body.tools : []) items.push(tool);
  if (typeof body.system === 'string') items.push({ system: body.system });
  else if (Array.isArray(body.system)) items.push(...body.system);
  for (const m of body.messages) {
    items.push({ role: m.role });
    if (typeof m.content === 'string') items.push({ type: 'text', text: m.content });
    else items.push(...m.content);
  }
  return items;
}

/**
 * Which positions of the prefix are cache breakpoints: a tool, system block or message block with
 * `cache_control`, or the last block when the request has a top-level `cache_control` (automatic
 * caching).
 */
function breakpointsOf(body, items) {
  const at = [];
  items.forEach((item, i) => {
    const marked = isObject(item) && isObject(item.cache_control);
    const automatic = i === items.length - 1 && isObject(body.cache_control);
    if (marked || automatic) at.push(i);
  });
  return at;
}

/**
 * Each position of the prefix: a key (the model and the JSON of everything up to it) and a size
 * (ceil(bytes / 4) tokens).
 */
function cachePositions(body, items) {
  const hash = createHash('sha256').update(String(body.model));
  let bytes = 0;
  return items.map((item) => {
    const json = JSON.stringify(item);
    hash.update(json);
    bytes += Buffer.byteLength(json);
    return { key: hash.copy().digest('hex'), tokens: Math.ceil(bytes / 4) };
  });
}

/** How far back from a breakpoint the real API looks for an earlier cached prefix. */
const CACHE_LOOKBACK = 20;

/**
 * The cache usage of one reply, a small deterministic model; `cache` (a Set of prefix keys) is the
 * server's memory. A hit is a cached prefix ending at a breakpoint or at any of the 20 positions
 * before one (the real API's lookback): `cache_read_input_tokens` is the longest hit's size, and
 * `cache_creation_input_tokens` is the last breakpoint's size minus that. Then each breakpoint's
 * prefix is cached. No breakpoint: both 0. Not modelled: the minimum cacheable length, TTLs (only
 * `reset()` empties the cache).
 */
function cacheUsage(body, cache) {
  const items = isObject(body) && Array.isArray(body.messages) ? cacheItems(body) : [];
  const breakpoints = breakpointsOf(body, items);
  if (breakpoints.length === 0) return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  // Only now every prefix is hashed: with no breakpoint that work (growing with the history, on
  // every request) would only have answered zeros.
  const positions = cachePositions(body, items);
  let read = 0;
  for (const b of breakpoints) {
    for (let i = Math.max(0, b - CACHE_LOOKBACK); i <= b; i++) {
      if (cache.has(positions[i].key)) read = Math.max(read, positions[i].tokens);
    }
  }
  const creation = positions[breakpoints[breakpoints.length - 1]].tokens - read;
  for (const b of breakpoints) cache.add(positions[b].key);
  return { cache_creation_input_tokens: creation, cache_read_input_tokens: read };
}

// ---------------------------------------------------------------------------------------------
// Streaming: a reply as the Messages API's server-sent events
// ---------------------------------------------------------------------------------------------

const TEXT_CHUNKS = [3, 5, 2, 7, 4];
const JSON_CHUNKS = [6, 9, 4, 11];

/** `s` in small pieces of cycling sizes, split between code points (never inside a surrogate pair). */
function pieces(s, sizes) {
  const chars = Array.from(s);
  const out = [];
  for (let at = 0, k = 0; at < chars.length; k++) {
    const n = sizes[k % sizes.length];
    out.push(chars.slice(at, at + n).join(''));
    at += n;
  }
  return out;
}

/** A block's `content_block_start` payload and its deltas; unknown and result blocks come whole. */
function streamBlock(block) {
  if (!isObject(block)) return { start: block, deltas: [] };
  switch (block.type) {
    case 'text': {
      const start = { ...block, text: '' };
      const deltas = [];
      if (Array.isArray(block.citations)) {
        start.citations = [];
        for (const citation of block.citations) deltas.push({ type: 'citations_delta', citation });
      }
      for (const t of pieces(String(block.text ?? ''), TEXT_CHUNKS)) deltas.push({ type: 'text_delta', text: t });
      return { start, deltas };
    }
    case 'thinking': {
      const deltas = pieces(String(block.thinking ?? ''), TEXT_CHUNKS).map((t) => ({ type: 'thinking_delta', thinking: t }));
      deltas.push({ type: 'signature_delta', signature: block.signature });
      return { start: { ...block, thinking: '', signature: '' }, deltas };
    }
    case 'tool_use':
    case 'server_tool_use': {
      const json = JSON.stringify(block.input ?? {});
      const deltas = ['', ...pieces(json, JSON_CHUNKS)].map((partial_json) => ({ type: 'input_json_delta', partial_json }));
      return { start: { ...block, input: {} }, deltas };
    }
    default:
      return { start: block, deltas: [] };
  }
}

/**
 * The events of a streamed reply, as `[event name, data]`: message_start (empty content, no stop
 * reason, input usage), ping, per block content_block_start / _delta… / _stop (a ping after every
 * second block), message_delta (stop reason, stop_sequence, stop_details and container when the
 * message has them, cumulative usage), message_stop. `unknownDelta` injects a delta of that type
 * into the first block. Reassembled the way the official SDK's MessageStream does, the events give
 * back `message` exactly (same keys, same order).
 */
export function sseEvents(message, { unknownDelta } = {}) {
  const start = { ...message, content: [], stop_reason: null, stop_sequence: null };
  if (has(start, 'stop_details')) start.stop_details = null;
  delete start.container;
  start.usage = { ...message.usage, output_tokens: Math.min(1, message.usage?.output_tokens ?? 0) };
  const events = [['message_start', { type: 'message_start', message: start }], ['ping', { type: 'ping' }]];
  const unknown = (index) => ['content_block_delta', { type: 'content_block_delta', index, delta: { type: unknownDelta } }];
  if (unknownDelta && message.content.length === 0) events.push(unknown(0));
  message.content.forEach((block, index) => {
    const { start: first, deltas } = streamBlock(block);
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: first }]);
    if (unknownDelta && index === 0) events.push(unknown(0));
    for (const delta of deltas) events.push(['content_block_delta', { type: 'content_block_delta', index, delta }]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    if (index % 2 === 1) events.push(['ping', { type: 'ping' }]);
  });
  const delta = { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence };
  if (has(message, 'stop_details')) delta.stop_details = message.stop_details;
  if (has(message, 'container')) delta.container = message.container;
  events.push(['message_delta', { type: 'message_delta', delta, usage: { ...message.usage } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}

const sseFrame = (name, data) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** `text` with `{echo:NAME}` / `{echo-escaped:NAME}` replaced from the request's `headers` (see the top). */
export function echoed(text, headers) {
  return text.replace(/\{echo(-escaped)?:([a-z0-9-]+)\}/g, (_, escaped, name) => {
    const value = headers[name] === undefined ? '(none)' : String(headers[name]);
    if (!escaped) return value;
    let out = '';
    for (let i = 0; i < value.length; i++) out += `\\u${value.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}

const SSE_ERROR_MESSAGES = {
  overloaded_error: 'Overloaded',
  api_error: 'Internal server error',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  invalid_request_error: 'Invalid request',
};

/**
 * Starts the stand-in. Options: `apiKey` (default 'sk-ant-test-key'), `host` ('127.0.0.1'),
 * `port` (0 = any free port), `handler` (called when the script is empty), `logLevel`
 * ('silent' | 'info'; logs go to stderr), `streamDelayMs` (default pause between streamed events;
 * 0 = just yield to the event loop between them).
 */
export async function startMockApi({
  apiKey = 'sk-ant-test-key',
  host = '127.0.0.1',
  port = 0,
  handler = null,
  logLevel = 'silent',
  streamDelayMs = 0,
} = {}) {
  const queue = [];
  /** Prompt-cache prefixes seen so far (see cacheUsage). */
  const cache = new Set();
  const sockets = new Set();
  const timers = new Set();
  const log = logLevel === 'silent' ? () => {} : (line) => process.stderr.write(`mock-api: ${line}\n`);

  const server = http.createServer();
  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 60_000;
  server.requestTimeout = 300_000;

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const api = {
    url: '',
    port: 0,
    server,
    requests: [],
    handler,
    /** Appends steps; each valid POST /v1/messages consumes the next one. */
    script(...steps) {
      queue.push(...steps);
      return api;
    },
    /** How many scripted steps are still waiting. */
    get pending() {
      return queue.length;
    },
    /** Clears the script, the records, the handler and the prompt cache. */
    reset() {
      queue.length = 0;
      api.requests.length = 0;
      api.handler = null;
      cache.clear();
    },
    /** Resolves once `predicate(api)` is true (checked every few ms); rejects after `timeoutMs`. */
    async waitFor(predicate, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(api)) {
        if (Date.now() > deadline) throw new Error(`mock-api: waited ${timeoutMs} ms for ${predicate}`);
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    },
    /** Resolves with the records once `n` requests have arrived; rejects after `timeoutMs`. */
    async waitForRequests(n, timeoutMs = 5000) {
      await api.waitFor(() => api.requests.length >= n, timeoutMs);
      return api.requests;
    },
    close,
  };

  function headersFor(record, extra = {}) {
    return { 'content-type': 'application/json', 'request-id': record.requestId, ...extra };
  }

  /** Sends `payload`; `echo`: the text is an error's, which may echo the request (see echoed). */
  function send(res, record, status, payload, extraHeaders, echo = false) {
    if (res.destroyed || res.headersSent) return;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const body = echo ? echoed(text, record.headers) : text;
    record.status = status;
    res.writeHead(status, { ...headersFor(record, extraHeaders), 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  function sendError(res, record, status, error = {}, extraHeaders = {}) {
    const type = error.type ?? ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    const message = error.message ?? ERROR_MESSAGES[status] ?? `HTTP ${status}`;
    const headers = status === 429 ? { 'anthropic-ratelimit-requests-remaining': '0', ...extraHeaders } : extraHeaders;
    send(res, record, status, { type: 'error', error: { type, message }, request_id: record.requestId }, headers, true);
  }

  function messageFor(step, body) {
    const message = {
      id: `msg_${randomId(24)}`,
      type: 'message',
      role: 'assistant',
      model: step.model ?? body?.model ?? 'claude-mock',
      content: Array.isArray(step.content) ? step.content.map(signed) : step.content,
      stop_reason: step.stop_reason ?? defaultStopReason(step.content),
      stop_sequence: step.stop_sequence ?? null,
    };
    if (has(step, 'stop_details')) message.stop_details = step.stop_details;
    message.usage = { ...DEFAULT_USAGE, ...cacheUsage(body, cache), ...(step.usage ?? {}) };
    if (has(step, 'container')) message.container = step.container;
    return message;
  }

  /** Streams `message` as server-sent events, with the step's pacing and injected faults. */
  async function streamMessage(message, step, record, res) {
    const events = sseEvents(message, { unknownDelta: step.unknownDelta });
    const delay = step.streamDelayMs ?? streamDelayMs;
    const errorAt = has(step, 'sseError') ? (step.sseErrorAfter ?? 0) : -1;
    const cutAt = has(step, 'sseCutAfter') ? step.sseCutAfter : -1;
    const stallAt = has(step, 'sseStallAfter') ? step.sseStallAfter : -1;
    record.status = 200;
    record.stream = true;
    record.clientClosed = false;
    record.sseEvents = [];
    let cut = false;
    res.on('close', () => {
      if (!res.writableFinished && !cut) record.clientClosed = true;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': record.requestId, ...(step.headers ?? {}) });
    const write = async (chunk) => {
      if (res.destroyed) return false;
      if (!res.write(chunk)) await new Promise((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
      return !res.destroyed;
    };
    const pause = () => new Promise((resolve) => {
      if (delay <= 0) return setImmediate(resolve);
      const timer = setTimeout(() => { timers.delete(timer); resolve(); }, delay);
      timers.add(timer);
    });
    for (let i = 0; i <= events.length; i++) {
      if (i === errorAt) {
        const type = step.sseError.type ?? 'overloaded_error';
        const error = { type, message: step.sseError.message ?? SSE_ERROR_MESSAGES[type] ?? type };
        record.sseEvents.push('error');
        if (await write(echoed(sseFrame('error', { type: 'error', error }), record.headers))) res.end();
        return;
      }
      if (i === cutAt) {
        cut = true;
        res.socket?.destroy();
        return;
      }
      if (i === stallAt) return; // open and silent until the client gives up or close() runs
      if (i === events.length) break;
      if (i > 0) await pause();
      if (res.destroyed) return;
      const [name, data] = events[i];
      record.sseEvents.push(name);
      if (!(await write(sseFrame(name, data)))) return;
    }
    res.end();
  }

  /** Checks a step's expectations of the request; returns the refusal message, or null. */
  function unmet(step, body) {
    if (!has(step, 'requireContainer')) return null;
    const sent = isObject(body?.container) ? body.container.id : body?.container;
    if (sent === undefined || sent === null) return CONTAINER_REQUIRED;
    if (sent !== step.requireContainer) return `container: Container '${sent}' not found. This conversation continues container '${step.requireContainer}'.`;
    return null;
  }

  async function answer(step, body, record, req, res) {
    try {
      while (typeof step === 'function') step = await step(body, record);
    } catch (err) {
      return sendError(res, record, 500, { type: 'api_error', message: `mock-api: a scripted step threw: ${err?.message ?? err}` });
    }
    if (!isObject(step)) {
      return sendError(res, record, 500, { type: 'api_error', message: `mock-api: a scripted step must be an object or a function, got ${JSON.stringify(step)}` });
    }
    const why = unmet(step, body);
    if (why !== null) return sendError(res, record, 400, { type: 'invalid_request_error', message: why });
    if (has(step, 'fault')) return fault(step, body, record, req, res);
    if (has(step, 'content')) {
      const message = messageFor(step, body);
      if (body?.stream === true) return streamMessage(message, step, record, res);
      return send(res, record, 200, message, step.headers);
    }
    if (has(step, 'body')) return send(res, record, step.status ?? 200, step.body, step.headers, true);
    if (has(step, 'status') && step.status >= 300 && step.status < 400) {
      const headers = Object.fromEntries(Object.entries(step.headers ?? {}).map(([k, v]) => [k, echoed(String(v), record.headers)]));
      return send(res, record, step.status, '', headers);
    }
    if (has(step, 'status')) return sendError(res, record, step.status, step.error, step.headers);
    return sendError(res, record, 500, { type: 'api_error', message: `mock-api: unknown step shape: ${JSON.stringify(step)}` });
  }

  function fault(step, body, record, req, res) {
    const socket = req.socket;
    record.status = null;
    switch (step.fault) {
      case 'reset':
        socket.destroy();
        return;
      case 'hang':
        return; // the socket stays open until the client gives up or close() runs
      case 'html':
        res.writeHead(step.status ?? 200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(HTML_PAGE) });
        res.end(HTML_PAGE);
        return;
      case 'badjson': {
        const bad = '{"type":"message",';
        res.writeHead(200, { ...headersFor(record), 'content-length': Buffer.byteLength(bad) });
        res.end(bad);
        return;
      }
      case 'wrong-shape': {
        const shape = JSON.stringify(step.body ?? { hello: 1 });
        res.writeHead(200, { ...headersFor(record), 'content-length': Buffer.byteLength(shape) });
        res.end(shape);
        return;
      }
      case 'truncated':
      case 'stall-body': {
        const full = Buffer.from(JSON.stringify(messageFor(reply([text('This body never arrives in full.')]), body)));
        const half = full.subarray(0, Math.floor(full.length / 2));
        res.writeHead(200, { ...headersFor(record), 'content-length': full.length + (step.fault === 'truncated' ? 1000 : 0) });
        if (step.fault === 'truncated') res.write(half, () => socket.destroy());
        else res.write(half); // and never finish: the socket stays open until the client gives up or close()
        return;
      }
      case 'huge':
        return streamHuge(step, body, record, res);
      case 'delay': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) answer(step.then, body, record, req, res);
        }, step.ms ?? 0);
        timers.add(timer);
        res.on('close', () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
        return;
      }
      default:
        return sendError(res, record, 500, { type: 'api_error', message: `mock-api: unknown fault ${JSON.stringify(step.fault)}` });
    }
  }

  /** A valid message of `bytes` (default 50 MB), written in chunks with backpressure. */
  function streamHuge(step, body, record, res) {
    const size = step.bytes ?? 50 * 1024 * 1024;
    const message = messageFor(reply([text('')]), body);
    const [before, after] = JSON.stringify(message).split('"text":""');
    const head = Buffer.from(`${before}"text":"`);
    const tail = Buffer.from(`"${after}`);
    let left = Math.max(0, size - head.length - tail.length);
    const chunk = Buffer.alloc(256 * 1024, 'a');
    const headers = headersFor(record);
    if (!step.chunked) headers['content-length'] = head.length + left + tail.length;
    res.writeHead(200, headers);
    res.write(head);
    const pump = () => {
      while (left > 0) {
        if (res.destroyed) return; // the client went away
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end(tail);
    };
    pump();
  }

  server.on('request', async (req, res) => {
    const record = {
      method: req.method,
      path: req.url,
      headers: { ...req.headers },
      body: null,
      rawBody: '',
      retryCount: parseRetryCount(req.headers['x-stainless-retry-count']),
      status: null,
      requestId: `req_${randomId(24)}`,
      /** The `anthropic-beta` header, split on commas. */
      betas: String(req.headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim()).filter(Boolean),
      /** The request's `container` (a string id), once the body is read. */
      container: undefined,
      /** `performance.now()` when the request arrived: tests read the waits between retries. */
      receivedAt: performance.now(),
    };
    api.requests.push(record);
    res.on('finish', () => log(`${record.method} ${record.path} -> ${record.status ?? 'fault'}`));

    const read = await readBody(req);
    if (read === null) return; // the client went away while sending
    if (read.tooLarge) {
      return sendError(res, record, 413, { message: `Request exceeds the maximum allowed number of bytes (${MAX_BODY_BYTES}).` }, { connection: 'close' });
    }
    record.rawBody = read.raw;
    let parsed;
    let parseError = null;
    try {
      parsed = JSON.parse(read.raw);
      record.body = parsed;
      if (isObject(parsed)) record.container = parsed.container;
    } catch (err) {
      parseError = err;
    }

    try {
      const pathname = req.url.split('?')[0];
      if (pathname !== '/v1/messages') throw new Refusal(404, `mock-api: no route ${req.method} ${pathname}; only POST /v1/messages exists`);
      if (req.method !== 'POST') throw new Refusal(405, `mock-api: method ${req.method} is not allowed on /v1/messages; use POST`);
      checkHeaders(req, apiKey);
      if (parseError) fail(`There was an error parsing the body of your request: ${parseError.message}`);
      validateBody(parsed);
    } catch (err) {
      if (!(err instanceof Refusal)) {
        return sendError(res, record, 500, { type: 'api_error', message: `mock-api: internal error while validating: ${err?.message ?? err}` });
      }
      const extra = err.status === 405 ? { allow: 'POST' } : {};
      return sendError(res, record, err.status, { type: err.type, message: err.message }, extra);
    }

    let step;
    if (queue.length > 0) step = queue.shift();
    else if (typeof api.handler === 'function') step = api.handler;
    else return sendError(res, record, 500, { type: 'api_error', message: NO_STEP_LEFT });
    return answer(step, parsed, record, req, res);
  });

  let closing = null;
  /** Stops the server and destroys every socket (keep-alive, hanging, stalled); never hangs. */
  function close() {
    if (closing) return closing;
    closing = new Promise((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const fallback = setTimeout(resolve, 2000);
      fallback.unref();
      server.close(() => {
        clearTimeout(fallback);
        resolve();
      });
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections?.();
    });
    return closing;
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  api.port = address.port;
  api.url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return api;
}

// ---------------------------------------------------------------------------------------------
// demoModel: a tiny deterministic rule-based "model" for the demo and the example app
// ---------------------------------------------------------------------------------------------

const ORDER_NUMBER = /#?(\d{3,})/;
const RETURN_INTENT = /\breturn|devoluci[oó]n|devolver/i;
const UNKNOWN_ORDER = /unknown|not found|does not exist|doesn't exist|no such|no existe|desconocid|no encontrad/i;

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => b && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

function toolResultText(block) {
  return typeof block.content === 'string' ? block.content : textOf(block.content);
}

/** The latest user message that says something (not just tool results). */
function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    const t = textOf(m.content);
    if (t.trim()) return t;
  }
  return '';
}

/** Input for a tool: `orderId`, plus 'not specified' (or the first enum value) for other required fields. */
function inputFor(tool, orderId) {
  const input = { orderId };
  const schema = tool.input_schema ?? {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const field of required) {
    if (field in input) continue;
    const prop = schema.properties?.[field] ?? {};
    if (Array.isArray(prop.enum) && prop.enum.length > 0) input[field] = prop.enum[0];
    else if (prop.type === 'integer' || prop.type === 'number') input[field] = 0;
    else if (prop.type === 'boolean') input[field] = false;
    else input[field] = 'not specified';
  }
  return input;
}

function summarise(name, content, input) {
  if (name === 'get_order_status') {
    let data = null;
    try {
      data = JSON.parse(content);
    } catch {}
    if (isObject(data) && data.status !== undefined) {
      const id = data.orderId ?? data.id ?? input?.orderId;
      let line = `Order #${id} is ${data.status}.`;
      if (data.eta !== undefined) line += ` Expected delivery: ${data.eta}.`;
      if (data.carrier !== undefined) line += ` Carrier: ${data.carrier}.`;
      return line;
    }
  }
  return `Result of ${name ?? 'the tool'}: ${content}`;
}

/** Step for `body`: calls the order tools it is offered, then sums up their results. */
export function demoModel(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const tools = new Map((Array.isArray(body?.tools) ? body.tools : []).map((t) => [t.name, t]));
  const mayCallTools = body?.tool_choice?.type !== 'none';
  const last = messages[messages.length - 1];
  const fallback = reply([text('I can help with order questions. Which order do you mean?')]);
  if (!last || last.role !== 'user') return fallback;

  const results = blocksOf(last).filter((b) => b && b.type === 'tool_result');
  if (results.length > 0) {
    const calls = new Map(blocksOf(messages[messages.length - 2]).filter((b) => b?.type === 'tool_use').map((b) => [b.id, b]));
    const failed = results.filter((r) => r.is_error === true);
    if (failed.length === 0) {
      const lines = results.map((r) => {
        const call = calls.get(r.tool_use_id);
        return summarise(call?.name, toolResultText(r), call?.input);
      });
      return reply([text(lines.join(' '))]);
    }
    // Recovery: a return for an unknown order, when the user named another order ("... or #1234").
    const tried = new Set(
      messages.flatMap((m) => blocksOf(m).filter((b) => b?.type === 'tool_use' && b.name === 'solicitar_devolucion').map((b) => String(b.input?.orderId))),
    );
    for (const r of failed) {
      const call = calls.get(r.tool_use_id);
      if (call?.name !== 'solicitar_devolucion' || !tools.has('solicitar_devolucion') || !mayCallTools) continue;
      if (!UNKNOWN_ORDER.test(toolResultText(r))) continue;
      const numbers = [...lastUserText(messages).matchAll(/#?(\d{3,})/g)].map((m) => m[1]);
      const next = numbers.length >= 2 ? numbers.find((n) => !tried.has(n)) : undefined;
      if (next !== undefined) {
        return reply([toolUse('solicitar_devolucion', { ...(isObject(call.input) ? call.input : {}), orderId: next })]);
      }
    }
    return reply([text(`I could not complete that: ${failed.map(toolResultText).join('; ')}`)]);
  }

  const said = textOf(last.content);
  const order = ORDER_NUMBER.exec(said);
  if (order && mayCallTools) {
    if (RETURN_INTENT.test(said) && tools.has('solicitar_devolucion')) {
      return reply([toolUse('solicitar_devolucion', inputFor(tools.get('solicitar_devolucion'), order[1]))]);
    }
    if (tools.has('get_order_status')) {
      return reply([toolUse('get_order_status', { orderId: order[1] })]);
    }
  }
  return fallback;
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

function isMain() {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(fileURLToPath(import.meta.url)) === realpathSync(path.resolve(process.argv[1]));
  } catch {
    return false;
  }
}

async function main(argv) {
  const options = { apiKey: 'sk-ant-local-stand-in', host: '127.0.0.1', port: 0, logLevel: 'silent' };
  let demo = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--port') options.port = Number(argv[++i]);
    else if (arg === '--key') options.apiKey = argv[++i];
    else if (arg === '--host') options.host = argv[++i];
    else if (arg === '--demo') demo = true;
    else if (arg === '--verbose') options.logLevel = 'info';
    else {
      process.stderr.write(`mock-api: unknown argument ${arg}\nusage: node stand-in/index.mjs [--port N] [--host H] [--key K] [--demo] [--verbose]\n`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    process.stderr.write('mock-api: --port needs a number between 0 and 65535\n');
    process.exit(2);
  }
  const api = await startMockApi({ ...options, handler: demo ? demoModel : null });
  process.stdout.write(`mock-api listening on ${api.url}\n`);
  const stop = async () => {
    await api.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (isMain()) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`mock-api: ${err?.stack ?? err}\n`);
    process.exit(1);
  });
}
