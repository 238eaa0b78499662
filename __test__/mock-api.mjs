// A strict local stand-in of the Anthropic Messages API (`POST /v1/messages`), for the node:test
// suites, `npm run demo` and the benchmark. Plain Node ESM, `node:` built-ins only.
//
// It is exactly as strict as the real API described in /work/shared/ANTHROPIC_API.md: a request the
// real API would refuse (bad auth, headers, fields, tools, tool_use/tool_result pairing) gets the
// same 4xx and message here, so a looser test server never hides a bug in the engine.
//
//   const api = await startMockApi({ apiKey: 'sk-ant-test-key' });
//   api.script(reply([toolUse('get_order_status', { orderId: '4821' })]), reply([text('Shipped.')]));
//   ... point the client at api.url ...
//   await api.close();
//
// CLI: node __test__/mock-api.mjs [--port N] [--host H] [--key K] [--demo] [--verbose]

import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
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

/** A text block. */
export function text(s) {
  return { type: 'text', text: String(s) };
}

/** A tool_use block; the id is random unless given. */
export function toolUse(name, input, id) {
  return { type: 'tool_use', id: id ?? `toolu_${randomId(24)}`, name, input };
}

/**
 * A scripted 200 reply. `stop_reason` defaults to `tool_use` when the content has a tool_use block,
 * else `end_turn`. `content` may also be a plain string (one text block).
 */
export function reply(content, { stop_reason, usage, model, stop_sequence } = {}) {
  const blocks = typeof content === 'string' ? [text(content)] : content;
  const step = { content: blocks, stop_reason: stop_reason ?? defaultStopReason(blocks) };
  if (usage !== undefined) step.usage = usage;
  if (model !== undefined) step.model = model;
  if (stop_sequence !== undefined) step.stop_sequence = stop_sequence;
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
  'stop_sequences', 'stream', 'metadata',
]);
const TOOL_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'cache_control', 'strict']);
const TOOL_CHOICE_FIELDS = {
  auto: new Set(['type', 'disable_parallel_tool_use']),
  any: new Set(['type', 'disable_parallel_tool_use']),
  tool: new Set(['type', 'name', 'disable_parallel_tool_use']),
  none: new Set(['type']),
};
const MESSAGE_FIELDS = new Set(['role', 'content']);
const TEXT_FIELDS = new Set(['type', 'text', 'cache_control', 'citations']);
const IMAGE_FIELDS = new Set(['type', 'source', 'cache_control']);
const TOOL_USE_FIELDS = new Set(['type', 'id', 'name', 'input', 'cache_control']);
const TOOL_RESULT_FIELDS = new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']);
const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

function checkString(value, where) {
  if (typeof value !== 'string') fail(`${where}: Input should be a valid string`);
}

function checkCacheControl(block, prefix) {
  if (!has(block, 'cache_control') || block.cache_control === null) return;
  const cc = block.cache_control;
  if (!isObject(cc)) fail(`${prefix}cache_control: Input should be a valid dictionary`);
  if (cc.type !== 'ephemeral') fail(`${prefix}cache_control.type: Input should be 'ephemeral'`);
}

function checkTextBlock(block, p) {
  onlyKeys(block, TEXT_FIELDS, `${p}.`);
  if (!has(block, 'text')) fail(`${p}.text: Field required`);
  checkString(block.text, `${p}.text`);
  if (block.text.length === 0) fail('messages: text content blocks must be non-empty');
  if (block.text.trim().length === 0) fail('messages: text content blocks must contain non-whitespace text');
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

/** Checks `tools`; returns the offered names. */
function checkTools(tools) {
  if (!Array.isArray(tools)) fail('tools: Input should be a valid list');
  const names = new Set();
  tools.forEach((tool, i) => {
    if (!isObject(tool)) fail(`tools.${i}: Input should be a valid dictionary`);
    if (has(tool, 'type') && tool.type !== 'custom') {
      fail(`tools.${i}.type: mock-api: only custom tools (no \`type\`, or \`type: "custom"\`) are supported by this stand-in, got ${JSON.stringify(tool.type)}`);
    }
    const p = `tools.${i}.custom`;
    onlyKeys(tool, TOOL_FIELDS, `${p}.`);
    if (!has(tool, 'name')) fail(`${p}.name: Field required`);
    checkString(tool.name, `${p}.name`);
    if (!TOOL_NAME.test(tool.name)) fail(`${p}.name: String should match pattern '${TOOL_NAME_PATTERN}'`);
    if (has(tool, 'description')) checkString(tool.description, `${p}.description`);
    if (!has(tool, 'input_schema')) fail(`${p}.input_schema: Field required`);
    if (!isObject(tool.input_schema)) fail(`${p}.input_schema: Input should be a valid dictionary`);
    if (!has(tool.input_schema, 'type')) fail(`${p}.input_schema.type: Field required`);
    if (tool.input_schema.type !== 'object') fail(`${p}.input_schema.type: Input should be 'object'`);
    if (has(tool, 'strict') && typeof tool.strict !== 'boolean') fail(`${p}.strict: Input should be a valid boolean`);
    checkCacheControl(tool, `${p}.`);
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

function checkToolResultContent(content, p) {
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) fail(`${p}.content: Input should be a valid string or list`);
  content.forEach((block, k) => {
    const q = `${p}.content.${k}`;
    if (!isObject(block)) fail(`${q}: Input should be a valid dictionary`);
    if (block.type === 'text') checkTextBlock(block, q);
    else if (block.type === 'image') checkImageBlock(block, q);
    else fail(`${q}: Input tag '${block.type}' found using 'type' does not match any of the expected tags: 'text', 'image'`);
  });
}

function checkBlock(block, role, p) {
  if (!isObject(block)) fail(`${p}: Input should be a valid dictionary`);
  switch (block.type) {
    case 'text':
      return checkTextBlock(block, p);
    case 'image':
      if (role !== 'user') fail(`${p}: \`image\` blocks can only be in \`user\` messages`);
      return checkImageBlock(block, p);
    case 'tool_use':
      if (role !== 'assistant') fail(`${p}: \`tool_use\` blocks can only be in \`assistant\` messages`);
      onlyKeys(block, TOOL_USE_FIELDS, `${p}.`);
      for (const f of ['id', 'name', 'input']) if (!has(block, f)) fail(`${p}.${f}: Field required`);
      checkString(block.id, `${p}.id`);
      if (!TOOL_ID.test(block.id)) fail(`${p}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      checkString(block.name, `${p}.name`);
      if (block.name.length === 0) fail(`${p}.name: String should have at least 1 character`);
      if (!isObject(block.input)) fail(`${p}.input: Input should be a valid dictionary`);
      return checkCacheControl(block, `${p}.`);
    case 'tool_result':
      if (role !== 'user') fail(`${p}: \`tool_result\` blocks can only be in \`user\` messages`);
      onlyKeys(block, TOOL_RESULT_FIELDS, `${p}.`);
      if (!has(block, 'tool_use_id')) fail(`${p}.tool_use_id: Field required`);
      checkString(block.tool_use_id, `${p}.tool_use_id`);
      if (!TOOL_ID.test(block.tool_use_id)) fail(`${p}.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      if (has(block, 'content')) checkToolResultContent(block.content, p);
      if (has(block, 'is_error') && typeof block.is_error !== 'boolean') fail(`${p}.is_error: Input should be a valid boolean`);
      return checkCacheControl(block, `${p}.`);
    default:
      fail(`${p}: Input tag '${block.type}' found using 'type' does not match any of the expected tags: 'text', 'image', 'tool_use', 'tool_result'`);
  }
}

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
      if (m.content.length === 0 && !finalAssistant) {
        fail(`${p}: all messages must have non-empty content except for the optional final assistant message`);
      }
    } else if (Array.isArray(m.content)) {
      if (m.content.length === 0 && !finalAssistant) {
        fail(`${p}: all messages must have non-empty content except for the optional final assistant message`);
      }
      m.content.forEach((block, j) => checkBlock(block, m.role, `${p}.content.${j}`));
    } else {
      fail(`${p}.content: Input should be a valid string or list`);
    }
  });
  if (messages[0].role !== 'user') fail('messages: first message must use the "user" role');
}

const blocksOf = (m) => (m && Array.isArray(m.content) ? m.content : []);

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

  if (has(body, 'stream')) {
    if (typeof body.stream !== 'boolean') fail('stream: Input should be a valid boolean');
    if (body.stream) fail('mock-api: streaming is not supported by this stand-in');
  }
  if (has(body, 'system')) checkSystem(body.system);
  if (has(body, 'temperature')) {
    if (typeof body.temperature !== 'number' || !Number.isFinite(body.temperature)) fail('temperature: Input should be a valid number');
    if (body.temperature < 0) fail('temperature: Input should be greater than or equal to 0');
    if (body.temperature > 1) fail('temperature: Input should be less than or equal to 1');
  }
  if (has(body, 'top_p')) {
    if (typeof body.top_p !== 'number' || !Number.isFinite(body.top_p)) fail('top_p: Input should be a valid number');
    if (body.top_p < 0 || body.top_p > 1) fail('top_p: Input should be between 0 and 1');
  }
  if (has(body, 'top_k')) {
    if (!Number.isInteger(body.top_k)) fail('top_k: Input should be a valid integer');
    if (body.top_k < 0) fail('top_k: Input should be greater than or equal to 0');
  }
  if (has(body, 'stop_sequences')) {
    if (!Array.isArray(body.stop_sequences)) fail('stop_sequences: Input should be a valid list');
    body.stop_sequences.forEach((s, i) => checkString(s, `stop_sequences.${i}`));
  }
  if (has(body, 'metadata')) {
    if (!isObject(body.metadata)) fail('metadata: Input should be a valid dictionary');
    onlyKeys(body.metadata, new Set(['user_id']), 'metadata.');
    if (has(body.metadata, 'user_id') && body.metadata.user_id !== null) checkString(body.metadata.user_id, 'metadata.user_id');
  }
  const names = has(body, 'tools') ? checkTools(body.tools) : new Set();
  if (has(body, 'tool_choice')) checkToolChoice(body.tool_choice, names);

  checkMessageShapes(body.messages);
  checkPairing(body.messages);
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

/**
 * Starts the stand-in. Options: `apiKey` (default 'sk-ant-test-key'), `host` ('127.0.0.1'),
 * `port` (0 = any free port), `handler` (called when the script is empty), `logLevel`
 * ('silent' | 'info'; logs go to stderr).
 */
export async function startMockApi({ apiKey = 'sk-ant-test-key', host = '127.0.0.1', port = 0, handler = null, logLevel = 'silent' } = {}) {
  const queue = [];
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
    /** Clears the script, the records and the handler. */
    reset() {
      queue.length = 0;
      api.requests.length = 0;
      api.handler = null;
    },
    close,
  };

  function headersFor(record, extra = {}) {
    return { 'content-type': 'application/json', 'request-id': record.requestId, ...extra };
  }

  function send(res, record, status, payload, extraHeaders) {
    if (res.destroyed || res.headersSent) return;
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
    record.status = status;
    res.writeHead(status, { ...headersFor(record, extraHeaders), 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  function sendError(res, record, status, error = {}, extraHeaders = {}) {
    const type = error.type ?? ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    const message = error.message ?? ERROR_MESSAGES[status] ?? `HTTP ${status}`;
    const headers = status === 429 ? { 'anthropic-ratelimit-requests-remaining': '0', ...extraHeaders } : extraHeaders;
    send(res, record, status, { type: 'error', error: { type, message }, request_id: record.requestId }, headers);
  }

  function messageFor(step, body) {
    return {
      id: `msg_${randomId(24)}`,
      type: 'message',
      role: 'assistant',
      model: step.model ?? body?.model ?? 'claude-mock',
      content: step.content,
      stop_reason: step.stop_reason ?? defaultStopReason(step.content),
      stop_sequence: step.stop_sequence ?? null,
      usage: { ...DEFAULT_USAGE, ...(step.usage ?? {}) },
    };
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
    if (has(step, 'fault')) return fault(step, body, record, req, res);
    if (has(step, 'content')) return send(res, record, 200, messageFor(step, body), step.headers);
    if (has(step, 'body')) return send(res, record, step.status ?? 200, step.body, step.headers);
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
      process.stderr.write(`mock-api: unknown argument ${arg}\nusage: node __test__/mock-api.mjs [--port N] [--host H] [--key K] [--demo] [--verbose]\n`);
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
