// Messages and their content blocks: roles, the fields of each block type, which role may hold
// which block, non-empty content, and the system prompt's text blocks.

import { fail } from '../errors.mjs';
import { validRedactedData, validSignature } from '../signatures.mjs';
import { has, isObject } from '../values.mjs';
import { badTag, checkBoolean, checkCacheControl, checkDict, checkString, onlyKeys, tagList } from './fields.mjs';
import { checkSystemMessage, checkToolChangeList } from './tool-changes.mjs';
import { needBeta } from './context-management.mjs';
import { MCP_CLIENT_BETA } from './mcp-connector.mjs';
import { checkAssistantBlock, checkUserCitations, LEGACY_VERSION } from './versions.mjs';

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
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
const COMPACTION_FIELDS = new Set(['type', 'content', 'encrypted_content', 'signature', 'tool_changes', 'cache_control']);
const MCP_TOOL_USE_FIELDS = new Set(['type', 'id', 'name', 'server_name', 'input', 'cache_control']);
const MCP_TOOL_RESULT_FIELDS = new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']);
const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const SERVER_TOOL_NAMES = new Set([
  'web_search', 'web_fetch', 'code_execution', 'bash_code_execution', 'text_editor_code_execution',
  'tool_search_tool_regex', 'tool_search_tool_bm25',
]);
const SERVER_TOOL_ID = /^srvtoolu_[a-zA-Z0-9_]+$/;
/** Result blocks of server tools: they come in assistant messages, after their server_tool_use. */
export const SERVER_RESULT_TYPES = new Set([
  'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result', 'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result', 'tool_search_tool_result',
]);
/** A block type no API version has: a scripted reply may hold it and it is accepted back unchanged (round-trip tests). */
const FUTURE_BLOCK = 'x_future_block';
const MESSAGE_BLOCK_TAGS = [
  'text', 'image', 'document', 'search_result', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result',
  'server_tool_use', ...SERVER_RESULT_TYPES, 'mcp_tool_use', 'mcp_tool_result', 'compaction',
];
const CITATION_TYPES = new Set(['char_location', 'page_location', 'content_block_location', 'web_search_result_location', 'search_result_location']);

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
export function checkSystem(system) {
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

/** No content, blank text or an empty list. */
function isEmptyResult(content) {
  if (content === undefined) return true;
  if (typeof content === 'string') return content.trim() === '';
  return Array.isArray(content) && content.length === 0;
}

/** A call Anthropic made through the MCP connector (`mcp_tool_use`), or its result: the assistant's, with the beta. */
function checkMcpBlock(block, role, p, betas) {
  onlyIn(role, 'assistant', block, p);
  needBeta(betas, MCP_CLIENT_BETA, p, `an \`${block.type}\` block`);
  if (block.type === 'mcp_tool_use') {
    onlyKeys(block, MCP_TOOL_USE_FIELDS, `${p}.`);
    for (const f of ['id', 'name', 'server_name', 'input']) if (!has(block, f)) fail(`${p}.${f}: Field required`);
    for (const f of ['id', 'name', 'server_name']) checkString(block[f], `${p}.${f}`);
    if (!isObject(block.input)) fail(`${p}.input: Input should be a valid dictionary`);
  } else {
    onlyKeys(block, MCP_TOOL_RESULT_FIELDS, `${p}.`);
    if (!has(block, 'tool_use_id')) fail(`${p}.tool_use_id: Field required`);
    checkString(block.tool_use_id, `${p}.tool_use_id`);
    if (has(block, 'is_error')) checkBoolean(block.is_error, `${p}.is_error`);
    if (has(block, 'content') && typeof block.content !== 'string') {
      if (!Array.isArray(block.content)) fail(`${p}.content: Input should be a valid string or list`);
      block.content.forEach((b, k) => {
        const q = `${p}.content.${k}`;
        checkDict(b, q);
        if (b.type !== 'text') badTag(q, b.type, ['text']);
        checkTextBlock(b, q);
      });
    }
  }
  checkCacheControl(block, `${p}.`);
}

function checkBlock(block, role, p, betas, version) {
  if (!isObject(block)) fail(`${p}: Input should be a valid dictionary`);
  switch (block.type) {
    case 'text':
      return checkTextBlock(block, p);
    case 'image':
      onlyIn(role, 'user', block, p);
      return checkImageBlock(block, p);
    case 'document':
      // Directly in an assistant message: taken under the versions before the removals only.
      if (role !== 'assistant') onlyIn(role, 'user', block, p);
      else checkAssistantBlock(block, p, version);
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
      // A failure must say what went wrong: the API refuses an error result with nothing in it.
      if (block.is_error === true && isEmptyResult(block.content)) fail(`${p}.tool_result: content cannot be empty if \`is_error\` is true`);
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
      // `content: null` is a compaction that failed (a no-op); an empty summary is refused.
      if (has(block, 'content') && block.content !== null) {
        checkString(block.content, `${p}.content`);
        if (block.content.length === 0) fail(`${p}.content: String should have at least 1 character`);
      }
      for (const f of ['encrypted_content', 'signature']) if (has(block, f) && block[f] !== null) checkString(block[f], `${p}.${f}`);
      if (has(block, 'tool_changes')) checkToolChangeList(block.tool_changes, `${p}.tool_changes`);
      return checkCacheControl(block, `${p}.`);
    case 'mcp_tool_use':
    case 'mcp_tool_result':
      return checkMcpBlock(block, role, p, betas);
    case 'tool_addition':
    case 'tool_removal':
      return onlyIn(role, 'system', block, p);
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

export const EMPTY_MESSAGE = 'all messages must have non-empty content except for the optional final assistant message';

/**
 * Each message's role, content and blocks. `context`: the request's betas and tool names, which
 * `system` messages (mid-conversation tool changes) need, and its API version.
 */
export function checkMessageShapes(messages, context = { betas: [], toolNames: new Set(), version: LEGACY_VERSION }) {
  const last = messages.length - 1;
  messages.forEach((m, i) => {
    const p = `messages.${i}`;
    if (!isObject(m)) fail(`${p}: Input should be a valid dictionary`);
    onlyKeys(m, MESSAGE_FIELDS, `${p}.`);
    if (!has(m, 'role')) fail(`${p}.role: Field required`);
    if (m.role === 'system') return checkSystemMessage(m, p, context);
    if (m.role !== 'user' && m.role !== 'assistant') fail(`${p}.role: Input should be 'user' or 'assistant'`);
    if (!has(m, 'content')) fail(`${p}.content: Field required`);
    const finalAssistant = i === last && m.role === 'assistant';
    if (typeof m.content === 'string') {
      if (m.content.length === 0 && !finalAssistant) fail(`${p}: ${EMPTY_MESSAGE}`);
    } else if (Array.isArray(m.content)) {
      if (m.content.length === 0 && !finalAssistant) fail(`${p}: ${EMPTY_MESSAGE}`);
      m.content.forEach((block, j) => checkBlock(block, m.role, `${p}.content.${j}`, context.betas, context.version));
      if (m.role === 'user') checkUserCitations(m.content, p, context.version);
    } else {
      fail(`${p}.content: Input should be a valid string or list`);
    }
  });
  if (messages[0].role !== 'user') fail('messages: first message must use the "user" role');
}
