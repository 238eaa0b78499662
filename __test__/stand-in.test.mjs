// The strict stand-in of the Messages API, checked with plain fetch: validation messages, scripting,
// faults, demoModel, keep-alive, and that close() lets the process exit.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  startMockApi, text, toolUse, reply, demoModel, thinking, redactedThinking, serverToolUse, webSearchResult, signThinking,
  CONTAINER_REQUIRED, sseEvents,
} from '../stand-in/index.mjs';

const KEY = 'sk-ant-test-key';
const CLI_PATH = fileURLToPath(new URL('../stand-in/cli.mjs', import.meta.url));
const HEADERS = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

let api;
before(async () => {
  api = await startMockApi({ apiKey: KEY, port: 0, logLevel: 'silent' });
});
after(() => api.close());
beforeEach(() => api.reset());

function post(body, { headers = {}, signal, path = '/v1/messages', method = 'POST', redirect } = {}) {
  return fetch(api.url + path, {
    method,
    redirect,
    headers: { ...HEADERS, ...headers },
    body: method === 'GET' ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

const request = (messages, extra = {}) => ({ model: 'claude-test', max_tokens: 256, messages, ...extra });
const user = (content) => ({ role: 'user', content });
const assistant = (content) => ({ role: 'assistant', content });
const result = (id, content = 'ok', extra = {}) => ({ type: 'tool_result', tool_use_id: id, content, ...extra });
const ORDER_TOOL = {
  name: 'get_order_status',
  description: 'Look up the status of an order by its ID',
  input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};

async function expectError(body, status, type, message, options) {
  const res = await post(body, options);
  const json = await res.json();
  assert.equal(res.status, status, JSON.stringify(json));
  assert.deepEqual(json.error, { type, message });
  assert.equal(json.type, 'error');
  assert.match(json.request_id, /^req_/);
  assert.equal(res.headers.get('request-id'), json.request_id);
  assert.equal(res.headers.get('content-type'), 'application/json');
  const record = api.requests.at(-1);
  assert.equal(record.status, status);
  assert.equal(record.requestId, json.request_id);
  return json;
}
const expect400 = (body, message, options) => expectError(body, 400, 'invalid_request_error', message, options);

// --- the pairing rules ---------------------------------------------------------------------------

test('pairing: a tool_use in the last message has no tool_result after it', async () => {
  await expect400(
    request([user('hi'), assistant([text('let me look'), toolUse('get_order_status', { orderId: '1' }, 'toolu_a')])], { tools: [ORDER_TOOL] }),
    'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  );
});

test('pairing: missing results are listed (next message lacks one of two)', async () => {
  const calls = [toolUse('get_order_status', { orderId: '1' }, 'toolu_a'), toolUse('get_order_status', { orderId: '2' }, 'toolu_b')];
  await expect400(
    request([user('hi'), assistant(calls), user([result('toolu_a')])], { tools: [ORDER_TOOL] }),
    'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  );
  await expect400(
    request([user('hi'), assistant(calls), user('plain text instead of results')]),
    'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a, toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  );
  // results split over two user messages: the second one is not "the next message"
  await expect400(
    request([user('hi'), assistant(calls), user([result('toolu_a')]), user([result('toolu_b')])]),
    'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  );
});

test('pairing: tool_result blocks must come first', async () => {
  await expect400(
    request([user('hi'), assistant([toolUse('get_order_status', { orderId: '1' }, 'toolu_a')]), user([text('here you go'), result('toolu_a')])]),
    'messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
  );
  const calls = [toolUse('t', {}, 'toolu_a'), toolUse('t', {}, 'toolu_b')];
  await expect400(
    request([user('hi'), assistant(calls), user([result('toolu_a'), text('and'), result('toolu_b')])]),
    'messages.2: Did not find 2 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
  );
});

test('pairing: a tool_result without its tool_use in the previous message', async () => {
  await expect400(
    request([user('hi'), assistant([toolUse('t', {}, 'toolu_a')]), user([result('toolu_a'), result('toolu_zzz')])]),
    'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zzz. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
  );
  await expect400(
    request([user([result('toolu_x')])]),
    'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
  );
});

test('pairing: tool_use ids must be unique', async () => {
  await expect400(
    request([user('hi'), assistant([toolUse('t', {}, 'toolu_a'), toolUse('t', {}, 'toolu_a')]), user([result('toolu_a')])]),
    'messages.1.content.1: `tool_use` ids must be unique',
  );
  await expect400(
    request([
      user('hi'), assistant([toolUse('t', {}, 'toolu_a')]), user([result('toolu_a')]),
      assistant([toolUse('t', {}, 'toolu_a')]), user([result('toolu_a')]),
    ]),
    'messages.3.content.0: `tool_use` ids must be unique',
  );
});

test('blocks: tool_use only from the assistant, tool_result only from the user, no extra fields', async () => {
  await expect400(request([user([toolUse('t', {}, 'toolu_a')])]), 'messages.0.content.0: `tool_use` blocks can only be in `assistant` messages');
  await expect400(
    request([user('hi'), assistant([toolUse('t', {}, 'toolu_a')]), user([result('toolu_a', 'ok', { output: 'x' })])]),
    'messages.2.content.0.output: Extra inputs are not permitted',
  );
  await expect400(
    request([user('hi'), assistant([toolUse('t', {}, 'toolu_a')]), user([result('toolu_a', 'ok', { is_error: 'yes' })])]),
    'messages.2.content.0.is_error: Input should be a valid boolean',
  );
  await expect400(request([user('hi'), assistant([toolUse('t', 'not an object', 'toolu_a')]), user([result('toolu_a')])]), 'messages.1.content.0.input: Input should be a valid dictionary');
  await expect400(request([user([{ type: 'text', text: '' }])]), 'messages: text content blocks must be non-empty');
  await expect400(request([assistant('hi')]), 'messages: first message must use the "user" role');
});

// --- auth, headers, routes, fields ---------------------------------------------------------------

test('auth: a missing or wrong key is a 401; Bearer works', async () => {
  await expectError(request([user('hi')]), 401, 'authentication_error', 'invalid x-api-key', { headers: { 'x-api-key': 'sk-ant-wrong' } });
  const res = await fetch(`${api.url}/v1/messages`, {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify(request([user('hi')])),
  });
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error.type, 'authentication_error');

  api.script(reply([text('hello')]));
  const ok = await fetch(`${api.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify(request([user('hi')])),
  });
  assert.equal(ok.status, 200);
  assert.equal(api.requests.length, 3);
});

test('headers: anthropic-version and content-type are required; the body must be JSON', async () => {
  const noVersion = await fetch(`${api.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify(request([user('hi')])),
  });
  assert.equal(noVersion.status, 400);
  assert.match((await noVersion.json()).error.message, /^anthropic-version: header is required/);
  const oldVersion = await post(request([user('hi')]), { headers: { 'anthropic-version': '2022-01-01' } });
  assert.equal(oldVersion.status, 400);
  assert.match((await oldVersion.json()).error.message, /^anthropic-version: "2022-01-01" is not a valid version/);
  const badType = await post(JSON.stringify(request([user('hi')])), { headers: { 'content-type': 'text/plain' } });
  assert.equal(badType.status, 400);
  assert.match((await badType.json()).error.message, /^content-type: must be application\/json/);
  const badJson = await post('{"model":');
  assert.equal(badJson.status, 400);
  assert.match((await badJson.json()).error.message, /^There was an error parsing the body of your request/);
  assert.equal(api.requests.at(-1).body, null);
  assert.equal(api.requests.at(-1).rawBody, '{"model":');
  await expect400('[1]', 'Input should be a valid dictionary (the request body must be a JSON object)');
});

test('routes: other paths are 404, other methods 405', async () => {
  await expectError(request([user('hi')]), 404, 'not_found_error', 'mock-api: no route POST /v1/complete; only POST /v1/messages exists', { path: '/v1/complete' });
  const res = await post(null, { method: 'GET' });
  assert.equal(res.status, 405);
  assert.equal(api.requests.at(-1).status, 405);
});

test('fields: required, types, unknown fields, streaming', async () => {
  await expect400(request([user('hi')], { foo: 1 }), 'foo: Extra inputs are not permitted');
  await expect400({ max_tokens: 10, messages: [user('hi')] }, 'model: Field required');
  await expect400(request([user('hi')], { max_tokens: 0 }), 'max_tokens: Input should be greater than or equal to 1');
  await expect400(request([user('hi')], { max_tokens: 1.5 }), 'max_tokens: Input should be a valid integer');
  await expect400(request([]), 'messages: at least one message is required');
  await expect400(request([user('hi')], { stream: 'yes' }), 'stream: Input should be a valid boolean');
  await expect400(request([user('hi')], { temperature: 1.5 }), 'temperature: Input should be less than or equal to 1');
  await expect400(request([user('hi')], { system: [{ type: 'text' }] }), 'system.0.text: Field required');
  api.script(reply([text('fine')]));
  const ok = await post(request([user('hi')], { system: 'be brief', temperature: 0, stop_sequences: ['x'], metadata: { user_id: 'u1' }, stream: false }));
  assert.equal(ok.status, 200);
});

test('tools: bad name, schema type, duplicate names, tool_choice', async () => {
  await expect400(
    request([user('hi')], { tools: [{ ...ORDER_TOOL, name: 'get order status' }] }),
    "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
  );
  await expect400(
    request([user('hi')], { tools: [ORDER_TOOL, { ...ORDER_TOOL, name: 'x'.repeat(129) }] }),
    "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
  );
  await expect400(
    request([user('hi')], { tools: [{ ...ORDER_TOOL, input_schema: { type: 'array' } }] }),
    "tools.0.custom.input_schema.type: Input should be 'object'",
  );
  await expect400(request([user('hi')], { tools: [ORDER_TOOL, ORDER_TOOL] }), 'tools: Tool names must be unique.');
  await expect400(request([user('hi')], { tools: [{ ...ORDER_TOOL, execute: 'x' }] }), 'tools.0.custom.execute: Extra inputs are not permitted');
  const bad = await post(request([user('hi')], { tools: [ORDER_TOOL], tool_choice: { type: 'tool', name: 'nope' } }));
  assert.equal(bad.status, 400);
  await expect400(
    request([user('hi')], { tools: [ORDER_TOOL], tool_choice: { type: 'none', disable_parallel_tool_use: true } }),
    'tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted',
  );
  api.script(reply([text('ok')]));
  const ok = await post(
    request([user('hi')], { tools: [ORDER_TOOL], tool_choice: { type: 'tool', name: 'get_order_status', disable_parallel_tool_use: true } }),
  );
  assert.equal(ok.status, 200);
});

test('a body over 32 MB is a 413', async () => {
  const big = JSON.stringify(request([user('x'.repeat(33 * 1024 * 1024))]));
  await expectError(big, 413, 'request_too_large', `Request exceeds the maximum allowed number of bytes (${32 * 1024 * 1024}).`);
  assert.equal(api.requests.at(-1).rawBody, '');
});

// --- scripted conversations and error steps ------------------------------------------------------

test('a scripted conversation: tool_use, then the answer, then the script runs dry', async () => {
  api.script(
    reply([text('Let me check.'), toolUse('get_order_status', { orderId: '4821' }, 'toolu_1')]),
    reply([text('Order #4821 is shipped.')], { usage: { input_tokens: 42, output_tokens: 7 } }),
  );
  const first = request([user('Where is #4821?')], { tools: [ORDER_TOOL] });
  const res1 = await post(first);
  assert.equal(res1.status, 200);
  assert.match(res1.headers.get('request-id'), /^req_/);
  const msg1 = await res1.json();
  assert.match(msg1.id, /^msg_/);
  assert.deepEqual(
    { ...msg1, id: undefined },
    {
      id: undefined,
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [text('Let me check.'), toolUse('get_order_status', { orderId: '4821' }, 'toolu_1')],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  );

  const second = { ...first, messages: [...first.messages, assistant(msg1.content), user([result('toolu_1', '{"status":"shipped"}')])] };
  const msg2 = await (await post(second)).json();
  assert.equal(msg2.stop_reason, 'end_turn');
  assert.deepEqual(msg2.content, [text('Order #4821 is shipped.')]);
  assert.deepEqual(msg2.usage, { input_tokens: 42, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });

  await expectError(second, 500, 'api_error', 'mock-api: no scripted response left for this request');

  assert.deepEqual(api.requests.map((r) => r.status), [200, 200, 500]);
  const [r1] = api.requests;
  assert.equal(r1.method, 'POST');
  assert.equal(r1.path, '/v1/messages');
  assert.equal(r1.headers['x-api-key'], KEY);
  assert.deepEqual(r1.body, first);
  assert.equal(r1.rawBody, JSON.stringify(first));
  assert.equal(r1.retryCount, null);
});

test('records: `broken` names the rule a request broke, or what the script lacked; a step keeps its own id', async () => {
  api.script({ ...reply([text('kept')]), id: 'msg_test_7' }, { ...reply([text('x')]), requireContainer: 'cont_1' });
  const ok = await (await post(request([user('hi')]))).json();
  assert.equal(ok.id, 'msg_test_7');
  await expectError(request([user('hi')]), 400, 'invalid_request_error', CONTAINER_REQUIRED);
  const empty = 'messages.0: all messages must have non-empty content except for the optional final assistant message';
  await expectError(request([user('')]), 400, 'invalid_request_error', empty);
  await expectError(request([user('hi')]), 500, 'api_error', 'mock-api: no scripted response left for this request');
  await expectError(request([user('hi')]), 401, 'authentication_error', 'invalid x-api-key', { headers: { 'x-api-key': 'sk-ant-wrong' } });
  const broken = api.requests.map((r) => r.broken?.message ?? null);
  assert.equal(broken[0], null);
  assert.equal(broken[1], CONTAINER_REQUIRED);
  assert.equal(broken[2], empty);
  assert.equal(broken[3], 'mock-api: no scripted response left for this request');
  assert.equal(broken[4], 'invalid x-api-key');
});

test('auth: apiKey may be a list, and a key pushed onto it later counts at once', async () => {
  const keys = ['sk-ant-first-key'];
  const listed = await startMockApi({ apiKey: keys, handler: () => reply([text('ok')]) });
  try {
    const send = (key) => fetch(`${listed.url}/v1/messages`, { method: 'POST', headers: { ...HEADERS, 'x-api-key': key }, body: JSON.stringify(request([user('hi')])) });
    assert.equal((await send('sk-ant-first-key')).status, 200);
    assert.equal((await send('sk-ant-later-key')).status, 401);
    keys.push('sk-ant-later-key');
    assert.equal((await send('sk-ant-later-key')).status, 200);
  } finally {
    await listed.close();
  }
});

test('retryCount is read from x-stainless-retry-count', async () => {
  api.script({ status: 529 }, reply([text('ok')]));
  await (await post(request([user('hi')]), { headers: { 'x-stainless-retry-count': '0' } })).text();
  await (await post(request([user('hi')]), { headers: { 'x-stainless-retry-count': '1' } })).text();
  assert.deepEqual(api.requests.map((r) => [r.retryCount, r.status]), [[0, 529], [1, 200]]);
});

test('error steps: body, default types, extra headers', async () => {
  api.script(
    { status: 429, headers: { 'retry-after': '3', 'x-should-retry': 'true' } },
    { status: 529 },
    { status: 400, error: { type: 'invalid_request_error', message: 'prompt is too long' } },
    { status: 503 },
  );
  await expectError(request([user('hi')]), 429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit');
  await expectError(request([user('hi')]), 529, 'overloaded_error', 'Overloaded');
  await expect400(request([user('hi')]), 'prompt is too long');
  const res = await post(request([user('hi')]));
  assert.equal(res.status, 503);
  assert.equal((await res.json()).error.type, 'api_error');

  api.script({ status: 429, headers: { 'retry-after-ms': '1500' } });
  const again = await post(request([user('hi')]));
  assert.equal(again.headers.get('retry-after-ms'), '1500');
  assert.equal(again.headers.get('anthropic-ratelimit-requests-remaining'), '0');
  assert.match(again.headers.get('request-id'), /^req_/);
  await again.text();
});

test('echo: an error step, a body step, a redirect and an SSE error repeat the request\'s headers', async () => {
  api.script(
    { status: 401, error: { message: 'invalid x-api-key {echo:x-api-key}; x-extra {echo:x-extra}; none {echo:x-absent}' } },
    { status: 401, body: '{"detail":"{echo-escaped:x-api-key}"}' },
    { status: 307, headers: { location: 'https://elsewhere.example/?k={echo:x-api-key}' } },
    { ...reply([text('Hello there.')]), sseError: { type: 'authentication_error', message: 'key {echo:x-api-key}' }, sseErrorAfter: 1 },
  );
  const extra = { headers: { 'x-extra': 'v-1' } };
  await expectError(request([user('hi')]), 401, 'authentication_error', `invalid x-api-key ${KEY}; x-extra v-1; none (none)`, extra);
  const escaped = await post(request([user('hi')]));
  const raw = await escaped.text();
  assert.ok(!raw.includes(KEY) && raw.includes('\\u0073\\u006b'), raw);
  assert.deepEqual(JSON.parse(raw), { detail: KEY });
  const moved = await post(request([user('hi')]), { redirect: 'manual' });
  assert.equal(moved.headers.get('location'), `https://elsewhere.example/?k=${KEY}`);
  const streamed = await (await post(request([user('hi')], { stream: true }))).text();
  assert.ok(streamed.includes(`event: error\ndata: {"type":"error","error":{"type":"authentication_error","message":"key ${KEY}"}}`), streamed);
});

test('429 carries retry-after and the rate-limit header', async () => {
  api.script({ status: 429, headers: { 'retry-after': '3' } });
  const res = await post(request([user('hi')]));
  assert.equal(res.headers.get('retry-after'), '3');
  assert.equal(res.headers.get('anthropic-ratelimit-requests-remaining'), '0');
  const body = await res.json();
  assert.deepEqual(Object.keys(body), ['type', 'error', 'request_id']);
});

test('function steps and the handler', async () => {
  api.script((body, record) => reply([text(`${body.model} ${record.retryCount}`)]));
  const a = await (await post(request([user('hi')]), { headers: { 'x-stainless-retry-count': '2' } })).json();
  assert.deepEqual(a.content, [text('claude-test 2')]);

  api.handler = async (body) => reply([text(`echo: ${body.messages[0].content}`)], { model: 'other-model' });
  const b = await (await post(request([user('ping')]))).json();
  assert.deepEqual(b.content, [text('echo: ping')]);
  assert.equal(b.model, 'other-model');

  api.script(reply([text('scripted first')]));
  const c = await (await post(request([user('x')]))).json();
  assert.deepEqual(c.content, [text('scripted first')]);
  // invalid requests never reach the script or the handler
  api.script(reply([text('kept')]));
  await (await post(request([assistant('x')]))).text();
  assert.equal(api.pending, 1);
});

test('reply() picks the stop_reason; toolUse() makes ids', () => {
  assert.equal(reply([text('a')]).stop_reason, 'end_turn');
  assert.equal(reply([toolUse('t', {})]).stop_reason, 'tool_use');
  assert.equal(reply([text('a')], { stop_reason: 'max_tokens' }).stop_reason, 'max_tokens');
  assert.match(toolUse('t', {}).id, /^toolu_[A-Za-z0-9]{24}$/);
  assert.notEqual(toolUse('t', {}).id, toolUse('t', {}).id);
});

// --- faults ---------------------------------------------------------------------------------------

test('fault reset: the socket is destroyed without an answer', async () => {
  api.script({ fault: 'reset' });
  await assert.rejects(post(request([user('hi')])), TypeError);
  assert.equal(api.requests.at(-1).status, null);
});

test('fault hang: never answers', async () => {
  api.script({ fault: 'hang' });
  await assert.rejects(post(request([user('hi')]), { signal: AbortSignal.timeout(300) }), { name: 'TimeoutError' });
  assert.equal(api.requests.at(-1).status, null);
});

test('fault html: a 200 HTML page', async () => {
  api.script({ fault: 'html' });
  const res = await post(request([user('hi')]));
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/html/);
  await assert.rejects(res.json(), SyntaxError);
});

test('fault badjson: invalid JSON with a JSON content type', async () => {
  api.script({ fault: 'badjson' });
  const res = await post(request([user('hi')]));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/json');
  await assert.rejects(res.json(), SyntaxError);
});

test('fault truncated: content-length promises more than arrives', async () => {
  api.script({ fault: 'truncated' });
  const res = await post(request([user('hi')]));
  assert.equal(res.status, 200);
  await assert.rejects(res.text());
});

test('fault stall-body: half a body, then nothing', async () => {
  api.script({ fault: 'stall-body' });
  const res = await post(request([user('hi')]), { signal: AbortSignal.timeout(400) });
  assert.equal(res.status, 200);
  await assert.rejects(res.text(), { name: 'TimeoutError' });
});

test('fault wrong-shape: valid JSON that is not a message', async () => {
  api.script({ fault: 'wrong-shape' });
  const res = await post(request([user('hi')]));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { hello: 1 });
});

test('fault huge: a 50 MB body, and a client that walks away', async () => {
  api.script({ fault: 'huge' });
  const res = await post(request([user('hi')]));
  assert.equal(res.status, 200);
  const body = await res.text();
  assert.ok(body.length >= 50 * 1024 * 1024);
  assert.equal(JSON.parse(body).type, 'message');

  api.script({ fault: 'huge' }, reply([text('still alive')]));
  const partial = await post(request([user('hi')]));
  const reader = partial.body.getReader();
  await reader.read();
  await reader.cancel();
  const next = await (await post(request([user('hi')]))).json();
  assert.deepEqual(next.content, [text('still alive')]);
});

test('fault delay: waits, then answers the inner step', async () => {
  api.script({ fault: 'delay', ms: 200, then: reply([text('late')]) });
  const started = Date.now();
  const res = await post(request([user('hi')]));
  assert.ok(Date.now() - started >= 190);
  assert.deepEqual((await res.json()).content, [text('late')]);
  assert.equal(api.requests.at(-1).status, 200);
});

// --- load and connections --------------------------------------------------------------------------

test('keep-alive: the second request reuses the socket', async () => {
  assert.ok(api.server.keepAliveTimeout >= 5000);
  api.script(reply([text('1')]), reply([text('2')]));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise((resolve, reject) => {
      const req = http.request(`${api.url}/v1/messages`, { method: 'POST', headers: HEADERS, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(req.reusedSocket));
      });
      req.on('error', reject);
      req.end(JSON.stringify(request([user('hi')])));
    });
  assert.equal(await once(), false);
  assert.equal(await once(), true);
  agent.destroy();
});

test('250 concurrent requests through the handler', async () => {
  api.handler = (body) => reply([text(body.messages[0].content)]);
  const answers = await Promise.all(
    Array.from({ length: 250 }, (_, i) => post(request([user(`n${i}`)])).then((r) => r.json())),
  );
  answers.forEach((a, i) => assert.deepEqual(a.content, [text(`n${i}`)]));
  assert.equal(api.requests.length, 250);
});

// --- demoModel -------------------------------------------------------------------------------------

const RETURN_TOOL = {
  name: 'solicitar_devolucion',
  description: 'Request a return',
  input_schema: { type: 'object', properties: { orderId: { type: 'string' }, reason: { type: 'string' } }, required: ['orderId', 'reason'] },
};

test('demoModel: asks for the order status, then sums it up', () => {
  const ask = request([user('Where is my order #4821?')], { tools: [ORDER_TOOL, RETURN_TOOL] });
  const step1 = demoModel(ask);
  assert.equal(step1.stop_reason, 'tool_use');
  assert.equal(step1.content[0].name, 'get_order_status');
  assert.deepEqual(step1.content[0].input, { orderId: '4821' });

  const status = JSON.stringify({ orderId: '4821', status: 'shipped', eta: '2025-06-01', carrier: 'UPS' });
  const step2 = demoModel({ ...ask, messages: [...ask.messages, assistant(step1.content), user([result(step1.content[0].id, status)])] });
  assert.deepEqual(step2, reply([text('Order #4821 is shipped. Expected delivery: 2025-06-01. Carrier: UPS.')]));

  const other = { ...ask, messages: [user('x #123'), assistant([toolUse('lookup', {}, 'toolu_o')]), user([result('toolu_o', [text('42')])])] };
  assert.deepEqual(demoModel(other).content, [text('Result of lookup: 42')]);
});

test('demoModel: a return, an unknown order, recovery with the other number, then telling the user', () => {
  const ask = request([user('Quiero devolver el pedido #9999 o #1234')], { tools: [ORDER_TOOL, RETURN_TOOL] });
  const step1 = demoModel(ask);
  assert.equal(step1.content[0].name, 'solicitar_devolucion');
  assert.deepEqual(step1.content[0].input, { orderId: '9999', reason: 'not specified' });

  const afterFirst = [...ask.messages, assistant(step1.content), user([result(step1.content[0].id, 'Unknown order 9999', { is_error: true })])];
  const step2 = demoModel({ ...ask, messages: afterFirst });
  assert.equal(step2.stop_reason, 'tool_use');
  assert.deepEqual(step2.content[0].input, { orderId: '1234', reason: 'not specified' });

  const afterSecond = [...afterFirst, assistant(step2.content), user([result(step2.content[0].id, 'Unknown order 1234', { is_error: true })])];
  assert.deepEqual(demoModel({ ...ask, messages: afterSecond }), reply([text('I could not complete that: Unknown order 1234')]));

  const otherError = [...ask.messages, assistant(step1.content), user([result(step1.content[0].id, 'Internal error while running solicitar_devolucion.', { is_error: true })])];
  assert.deepEqual(demoModel({ ...ask, messages: otherError }).content, [text('I could not complete that: Internal error while running solicitar_devolucion.')]);
});

/** As the example app's MCP server lists it (the MCP SDK adds `$schema`). */
const SHIPPING_TOOL = {
  name: 'get_shipping_estimate',
  description: 'Estimate where an order ships from and how many business days delivery takes.',
  input_schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { order_id: { type: 'string', pattern: '^[0-9]+$' } }, required: ['order_id'] },
};

test('demoModel: asked when an order arrives, it calls get_shipping_estimate when offered and answers with its words', () => {
  const ask = request([user('When will order 4821 arrive?')], { tools: [ORDER_TOOL, RETURN_TOOL, SHIPPING_TOOL] });
  const step1 = demoModel(ask);
  assert.equal(step1.stop_reason, 'tool_use');
  assert.equal(step1.content[0].name, 'get_shipping_estimate');
  assert.deepEqual(step1.content[0].input, { order_id: '4821' });
  const estimate = 'Order 4821 ships from Rotterdam; estimated delivery 2 business days.';
  const step2 = demoModel({ ...ask, messages: [...ask.messages, assistant(step1.content), user([result(step1.content[0].id, [text(estimate)])])] });
  assert.deepEqual(step2, reply([text(estimate)]));

  // The other questions keep their tools, and without the shipping tool the status is looked up.
  const questions = [
    ['Where does #4821 ship from?', 'get_shipping_estimate'],
    ['¿Cuándo llega el pedido 4821?', 'get_shipping_estimate'],
    ["What's the status of order #4821?", 'get_order_status'],
    ['Has #4821 shipped?', 'get_order_status'],
    ['It arrived broken, I want to return #4821', 'solicitar_devolucion'],
  ];
  for (const [said, tool] of questions) {
    assert.equal(demoModel(request([user(said)], { tools: [ORDER_TOOL, RETURN_TOOL, SHIPPING_TOOL] })).content[0].name, tool, said);
  }
  assert.equal(demoModel(request([user('When will order 4821 arrive?')], { tools: [ORDER_TOOL] })).content[0].name, 'get_order_status');
});

test('demoModel: no order number, or no matching tool offered → asks which order', () => {
  const fallback = [text('I can help with order questions. Which order do you mean?')];
  assert.deepEqual(demoModel(request([user('hello')], { tools: [ORDER_TOOL] })).content, fallback);
  assert.deepEqual(demoModel(request([user('where is #4821?')])).content, fallback);
  assert.deepEqual(demoModel(request([user('return #4821')], { tools: [ORDER_TOOL] })).content[0].name, 'get_order_status');
});

test('demoModel as the handler: a whole loop passes the strict validation', async () => {
  api.handler = demoModel;
  const messages = [user('Where is order #4821?')];
  const send = async () => (await post(request(messages, { tools: [ORDER_TOOL] }))).json();
  const first = await send();
  assert.equal(first.stop_reason, 'tool_use');
  messages.push(assistant(first.content), user([result(first.content[0].id, '{"orderId":"4821","status":"delivered"}')]));
  const second = await send();
  assert.deepEqual(second.content, [text('Order #4821 is delivered.')]);
  assert.deepEqual(api.requests.map((r) => r.status), [200, 200]);
});

// --- close() and the CLI ---------------------------------------------------------------------------

function runNode(args, { onLine } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.stdout.on('data', (d) => {
      stdout += d;
      if (onLine && stdout.includes('\n')) {
        const line = stdout.split('\n')[0];
        const handle = onLine;
        onLine = null;
        handle(line, child);
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

test('close() lets the process exit, with keep-alive, hanging and stalled sockets open', async () => {
  const script = `
    import { startMockApi, reply, text } from ${JSON.stringify(new URL('../stand-in/index.mjs', import.meta.url).href)};
    const api = await startMockApi({ apiKey: 'k' });
    const h = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
    const body = JSON.stringify({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] });
    api.script(reply([text('ok')]), { fault: 'hang' }, { fault: 'stall-body' });
    await (await fetch(api.url + '/v1/messages', { method: 'POST', headers: h, body })).text();
    const hanging = fetch(api.url + '/v1/messages', { method: 'POST', headers: h, body }).catch(() => 'hang ended');
    const stalled = fetch(api.url + '/v1/messages', { method: 'POST', headers: h, body }).then((r) => r.text()).catch(() => 'stall ended');
    await new Promise((r) => setTimeout(r, 200));
    await api.close();
    await api.close();
    console.log(await hanging, await stalled);
  `;
  const started = Date.now();
  const { code, stdout, stderr } = await runNode(['--input-type=module', '-e', script]);
  assert.equal(code, 0, stderr);
  assert.equal(stdout.trim(), 'hang ended stall ended');
  assert.ok(Date.now() - started < 5000);
});

test('CLI: --demo serves demoModel, prints one line, exits on SIGTERM', async () => {
  let answer;
  const { code, stdout } = await runNode([CLI_PATH, '--port', '0', '--key', 'cli-key', '--demo'], {
    onLine: async (line, child) => {
      const url = /^mock-api listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1];
      try {
        const res = await fetch(`${url}/v1/messages`, {
          method: 'POST',
          headers: { ...HEADERS, 'x-api-key': 'cli-key' },
          body: JSON.stringify(request([user('hello')])),
        });
        answer = await res.json();
      } finally {
        child.kill('SIGTERM');
      }
    },
  });
  assert.equal(code, 0);
  assert.match(stdout, /^mock-api listening on http:\/\/127\.0\.0\.1:\d+\n$/);
  assert.deepEqual(answer.content, [text('I can help with order questions. Which order do you mean?')]);
});

// --- empty messages --------------------------------------------------------------------------------

const EMPTY = 'all messages must have non-empty content except for the optional final assistant message';

test('empty content: refused for every message but a final assistant one; "" counts as empty', async () => {
  await expect400(request([user('')]), `messages.0: ${EMPTY}`);
  await expect400(request([user([])]), `messages.0: ${EMPTY}`);
  await expect400(request([user('hi'), assistant(''), user('again')]), `messages.1: ${EMPTY}`);
  await expect400(request([user('hi'), assistant([]), user('again')]), `messages.1: ${EMPTY}`);
  api.script(reply('a'), reply('b'));
  assert.equal((await post(request([user('hi'), assistant('')]))).status, 200);
  assert.equal((await post(request([user('hi'), assistant([])]))).status, 200);
});

// --- thinking --------------------------------------------------------------------------------------

const THINK = { type: 'enabled', budget_tokens: 1024 };
const THINKING_ORDER = (n, found) =>
  `messages.${n}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
const DOCS = 'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking';

test('thinking builders: signed blocks; an explicit signature is kept; redacted data is signed', () => {
  const t = thinking('Let me think.');
  assert.deepEqual(Object.keys(t), ['type', 'thinking', 'signature']);
  assert.equal(t.signature, signThinking('Let me think.'));
  assert.match(t.signature, /^[A-Za-z0-9+/]+=*$/);
  assert.equal(thinking('x', 'forged').signature, 'forged');
  const r = redactedThinking();
  assert.deepEqual(Object.keys(r), ['type', 'data']);
  assert.notEqual(redactedThinking().data, r.data);
  assert.equal(redactedThinking(r.data).data, r.data, 'valid data is kept');
  assert.equal(redactedThinking('seed').data, redactedThinking('seed').data, 'a payload is signed deterministically');
});

test('thinking: blocks come back unchanged, or the request is refused', async () => {
  const call = toolUse('get_order_status', { orderId: '1' }, 'toolu_t');
  const history = (first) => request([user('hi'), assistant([first, call]), user([result('toolu_t')])], { tools: [ORDER_TOOL], thinking: THINK, max_tokens: 2048 });
  api.script(reply('ok'), reply('ok'));
  assert.equal((await post(history(thinking('plan')))).status, 200);
  assert.equal((await post(history(redactedThinking()))).status, 200);
  await expect400(history({ ...thinking('plan'), thinking: 'plan, edited' }), 'messages.1.content.0: Invalid `signature` in `thinking` block');
  await expect400(history(thinking('plan', 'c2lnbmF0dXJl')), 'messages.1.content.0: Invalid `signature` in `thinking` block');
  const r = redactedThinking();
  await expect400(history({ ...r, data: `A${r.data.slice(1)}` === r.data ? `B${r.data.slice(1)}` : `A${r.data.slice(1)}` }), 'messages.1.content.0: Invalid `data` in `redacted_thinking` block');
  await expect400(history({ type: 'thinking', thinking: 'plan' }), 'messages.1.content.0.signature: Field required');
  // signatures are checked with thinking off too
  await expect400(
    request([user('hi'), assistant([thinking('a', 'bad'), text('b')]), user('more')]),
    'messages.1.content.0: Invalid `signature` in `thinking` block',
  );
  await expect400(request([user([thinking('mine')])]), 'messages.0.content.0: `thinking` blocks can only be in `assistant` messages');
});

test('thinking off: a final assistant message may not hold thinking blocks', async () => {
  const paused = [thinking('searching'), serverToolUse('web_search', { query: 'q' }, 'srvtoolu_f')];
  const message = 'messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.';
  await expect400(request([user('q'), assistant(paused)], { tools: [WEB_SEARCH] }), message);
  await expect400(request([user('q'), assistant(paused)], { tools: [WEB_SEARCH], thinking: { type: 'disabled' } }), message);
  await expect400(request([user('q'), assistant([text('So far:'), redactedThinking()])]), message.replace('content.0', 'content.1'));
  api.script(reply('ok'), reply('ok'));
  assert.equal((await post(request([user('q'), assistant(paused)], { tools: [WEB_SEARCH], thinking: THINK, max_tokens: 2048 }))).status, 200);
  assert.equal((await post(request([user('q'), assistant(paused.slice(0, 1)), user('go on')]))).status, 200, 'earlier turns may keep them');
});

test('thinking: the mock signs the thinking blocks it sends', async () => {
  api.script(reply([{ type: 'thinking', thinking: 'unsigned in the script' }, { type: 'redacted_thinking' }, text('hi')]));
  const msg = await (await post(request([user('hi')], { thinking: THINK, max_tokens: 2048 }))).json();
  assert.deepEqual(msg.content[0], thinking('unsigned in the script'));
  assert.equal(redactedThinking(msg.content[1].data).data, msg.content[1].data);
  api.script(reply('ok'));
  assert.equal((await post(request([user('hi'), assistant(msg.content), user('go on')], { thinking: THINK, max_tokens: 2048 }))).status, 200);
});

test('thinking on: the turn answered by the final tool results starts with a thinking block', async () => {
  const call = toolUse('get_order_status', { orderId: '1' }, 'toolu_t');
  const body = (content, thinkingConfig = THINK) =>
    request([user('hi'), assistant(content), user([result('toolu_t')])], { tools: [ORDER_TOOL], thinking: thinkingConfig, max_tokens: 4096 });
  await expect400(body([call]), THINKING_ORDER(1, 'tool_use'));
  await expect400(body([text('Let me look.'), call]), THINKING_ORDER(1, 'text'));
  await expect400(body([text('Let me look.'), call], { type: 'adaptive' }), THINKING_ORDER(1, 'text'));
  // earlier turns need no thinking block; off or disabled, no rule at all
  api.script(reply('a'), reply('b'), reply('c'), reply('d'));
  const older = request(
    [user('hi'), assistant([toolUse('get_order_status', { orderId: '0' }, 'toolu_o')]), user([result('toolu_o')]),
      assistant([thinking('now'), call]), user([result('toolu_t')])],
    { tools: [ORDER_TOOL], thinking: THINK, max_tokens: 4096 },
  );
  assert.equal((await post(older)).status, 200);
  assert.equal((await post(body([call], { type: 'disabled' }))).status, 200);
  assert.equal((await post(request([user('hi'), assistant([call]), user([result('toolu_t')])], { tools: [ORDER_TOOL] }))).status, 200);
  assert.equal((await post(body([redactedThinking(), call]))).status, 200);
  // a paused server-tool turn sent back last
  await expect400(
    request([user('hi'), assistant([serverToolUse('web_search', { query: 'q' }, 'srvtoolu_1')])], { thinking: THINK, max_tokens: 4096 }),
    THINKING_ORDER(1, 'server_tool_use'),
  );
});

test('thinking config: shape, budget, and what it rules out', async () => {
  await expect400(request([user('hi')], { thinking: 'on' }), 'thinking: Input should be a valid dictionary');
  await expect400(request([user('hi')], { thinking: { type: 'auto' } }), "thinking: Input tag 'auto' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'");
  await expect400(request([user('hi')], { thinking: { type: 'enabled' } }), 'thinking.enabled.budget_tokens: Field required');
  await expect400(request([user('hi')], { thinking: { type: 'enabled', budget_tokens: 1000 }, max_tokens: 4096 }), 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
  await expect400(request([user('hi')], { thinking: { type: 'enabled', budget_tokens: 1.5 } }), 'thinking.enabled.budget_tokens: Input should be a valid integer');
  await expect400(
    request([user('hi')], { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 2048 }),
    '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
  );
  await expect400(request([user('hi')], { thinking: { type: 'adaptive', budget_tokens: 2048 } }), 'thinking.adaptive.budget_tokens: Extra inputs are not permitted');
  const on = { thinking: THINK, max_tokens: 2048, tools: [ORDER_TOOL] };
  await expect400(request([user('hi')], { ...on, tool_choice: { type: 'any' } }), 'Thinking may not be enabled when tool_choice forces tool use.');
  await expect400(request([user('hi')], { ...on, tool_choice: { type: 'tool', name: 'get_order_status' } }), 'Thinking may not be enabled when tool_choice forces tool use.');
  await expect400(request([user('hi')], { ...on, temperature: 0.5 }), `\`temperature\` may only be set to 1 when thinking is enabled or in adaptive mode. ${DOCS}`);
  await expect400(request([user('hi')], { ...on, top_k: 5 }), `\`top_k\` must be unset when thinking is enabled. ${DOCS}`);
  await expect400(request([user('hi')], { ...on, top_p: 0.5 }), `\`top_p\` must be greater than or equal to 0.95 or unset when thinking is enabled. ${DOCS}`);
  await expect400(request([user('hi')], { thinking: { type: 'adaptive' }, temperature: 0 }), `\`temperature\` may only be set to 1 when thinking is enabled or in adaptive mode. ${DOCS}`);
  api.script(reply('a'), reply('b'), reply('c'));
  assert.equal((await post(request([user('hi')], { ...on, tool_choice: { type: 'auto' }, temperature: 1, top_p: 0.95 }))).status, 200);
  assert.equal((await post(request([user('hi')], { thinking: { type: 'adaptive' }, tool_choice: { type: 'none' }, tools: [ORDER_TOOL] }))).status, 200);
  assert.equal((await post(request([user('hi')], { thinking: { type: 'disabled' }, tool_choice: { type: 'any' }, tools: [ORDER_TOOL], top_k: 3 }))).status, 200);
});

// --- server tools ----------------------------------------------------------------------------------

const WEB_SEARCH = {
  type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['example.com'],
  user_location: { type: 'approximate', city: 'Madrid', country: 'ES', timezone: 'Europe/Madrid' }, cache_control: { type: 'ephemeral' },
};

test('server tools: Anthropic-defined tool types with their own fields', async () => {
  const tools = [
    WEB_SEARCH,
    { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2, blocked_domains: ['evil.test'], citations: { enabled: true }, max_content_tokens: 5000 },
    { type: 'code_execution_20250825', name: 'code_execution' },
    { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
    { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
    { type: 'bash_20250124', name: 'bash' },
    { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool', max_characters: 10000 },
    { type: 'memory_20250818', name: 'memory' },
    { ...ORDER_TOOL, type: 'custom', defer_loading: true, allowed_callers: ['code_execution_20250825'] },
  ];
  api.script(reply('ok'), reply('ok'));
  assert.equal((await post(request([user('hi')], { tools }))).status, 200);
  assert.equal((await post(request([user('hi')], { tools: [{ type: 'web_search_20260209', name: 'web_search', blocked_domains: ['a.test'] }] }))).status, 200);
  await expect400(request([user('hi')], { tools: [{ ...WEB_SEARCH, name: 'search' }] }), "tools.0.web_search_20250305.name: Input should be 'web_search'");
  await expect400(request([user('hi')], { tools: [{ ...WEB_SEARCH, input_schema: { type: 'object' } }] }), 'tools.0.web_search_20250305.input_schema: Extra inputs are not permitted');
  await expect400(request([user('hi')], { tools: [{ ...WEB_SEARCH, max_uses: 'three' }] }), 'tools.0.web_search_20250305.max_uses: Input should be a valid integer');
  await expect400(request([user('hi')], { tools: [{ ...WEB_SEARCH, blocked_domains: ['x.test'] }] }), 'tools.0.web_search_20250305: Cannot specify both allowed_domains and blocked_domains');
  await expect400(request([user('hi')], { tools: [{ type: 'code_execution_20250825', name: 'code_execution', max_uses: 1 }] }), 'tools.0.code_execution_20250825.max_uses: Extra inputs are not permitted');
  const res = await post(request([user('hi')], { tools: [{ type: 'web_search_19990101', name: 'web_search' }] }));
  assert.equal(res.status, 400);
  assert.match((await res.json()).error.message, /^tools\.0: Input tag 'web_search_19990101' found using 'type' does not match any of the expected tags: 'custom', 'web_search_20250305', /);
});

test('server tools: server_tool_use and its result round-trip; the client never answers it', async () => {
  const use = serverToolUse('web_search', { query: 'weather madrid' });
  assert.match(use.id, /^srvtoolu_[A-Za-z0-9]{24}$/);
  const found = webSearchResult(use.id, [{ url: 'https://weather.test/madrid', title: 'Madrid weather' }]);
  assert.deepEqual(Object.keys(found), ['type', 'tool_use_id', 'content']);
  assert.deepEqual(Object.keys(found.content[0]), ['type', 'url', 'title', 'encrypted_content', 'page_age']);
  const turn = [use, found, text('Sunny.', [{ type: 'web_search_result_location', url: 'https://weather.test/madrid', title: 'Madrid weather', encrypted_index: 'x', cited_text: 'Sunny' }])];
  api.script(reply(turn), reply('ok'));
  const msg = await (await post(request([user('weather?')], { tools: [WEB_SEARCH] }))).json();
  assert.deepEqual(msg.content, turn);
  assert.equal(msg.stop_reason, 'end_turn');
  assert.equal((await post(request([user('weather?'), assistant(msg.content), user('thanks')], { tools: [WEB_SEARCH] }))).status, 200);

  // a tool_result for a server tool is the "unexpected tool_use_id" 400
  await expect400(
    request([user('weather?'), assistant([use]), user([result(use.id)])]),
    `messages.2.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${use.id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
  );
  await expect400(
    request([user('q'), assistant([found])]),
    `messages.1.content.0: \`web_search_tool_result\` block has tool_use_id ${use.id}, which matches no \`server_tool_use\` block before it in this message.`,
  );
  await expect400(request([user('q'), assistant([{ ...use, id: 'toolu_1' }])]), "messages.1.content.0.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'");
  await expect400(request([user('q'), assistant([{ ...use, name: 'get_order_status' }])]), /* names are Anthropic's */ `messages.1.content.0.name: Input should be 'web_search', 'web_fetch', 'code_execution', 'bash_code_execution', 'text_editor_code_execution', 'tool_search_tool_regex', 'tool_search_tool_bm25'`);
});

test('server tools: a server_tool_use without its result only in the final message (a paused turn)', async () => {
  const use = serverToolUse('web_search', { query: 'q' }, 'srvtoolu_p');
  api.script(reply([use], { stop_reason: 'pause_turn' }), reply('continued'));
  const paused = await (await post(request([user('q')], { tools: [WEB_SEARCH] }))).json();
  assert.equal(paused.stop_reason, 'pause_turn');
  assert.equal((await post(request([user('q'), assistant(paused.content)], { tools: [WEB_SEARCH] }))).status, 200);
  await expect400(
    request([user('q'), assistant(paused.content), user('and then?')], { tools: [WEB_SEARCH] }),
    'messages.1: `server_tool_use` ids were found without their result blocks: srvtoolu_p. A `server_tool_use` block must be followed by its result block in the same message, unless it is in the final message (a paused turn).',
  );
  // other server results are accepted by shape
  const code = serverToolUse('bash_code_execution', { command: 'ls' }, 'srvtoolu_c');
  const codeResult = { type: 'bash_code_execution_tool_result', tool_use_id: 'srvtoolu_c', content: { type: 'bash_code_execution_result', stdout: 'a\n', stderr: '', return_code: 0, content: [] } };
  const fetchUse = serverToolUse('web_fetch', { url: 'https://a.test' }, 'srvtoolu_f');
  const fetched = { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_f', content: { type: 'web_fetch_result', url: 'https://a.test', content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hi' } } } };
  const search = serverToolUse('tool_search_tool_regex', { pattern: 'order' }, 'srvtoolu_s');
  const searched = { type: 'tool_search_tool_result', tool_use_id: 'srvtoolu_s', content: { type: 'tool_search_tool_search_result', tool_references: [{ type: 'tool_reference', tool_name: 'get_order_status' }] } };
  api.script(reply('ok'));
  assert.equal((await post(request([user('q'), assistant([code, codeResult, fetchUse, fetched, search, searched, text('done')]), user('ok')]))).status, 200);
});

// --- pause_turn, container, programmatic tool calling ------------------------------------------------

test('reply(): pause_turn, container and stop_details go on the message only when given', async () => {
  const container = { id: 'cont_abc', expires_at: '2026-12-01T00:00:00Z' };
  api.script(
    reply([serverToolUse('code_execution', { code: 'print(1)' }, 'srvtoolu_x')], { stop_reason: 'pause_turn', container }),
    reply([text('I cannot help with that.')], { stop_reason: 'refusal', stop_details: { type: 'refusal', category: 'cyber' } }),
  );
  const paused = await (await post(request([user('run it')]))).json();
  assert.deepEqual(Object.keys(paused), ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage', 'container']);
  assert.equal(paused.stop_reason, 'pause_turn');
  assert.deepEqual(paused.container, container);
  const refused = await (await post(request([user('x')]))).json();
  assert.deepEqual(Object.keys(refused), ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'stop_details', 'usage']);
  assert.deepEqual(refused.stop_details, { type: 'refusal', category: 'cyber' });
});

test('requireContainer: the request must carry the container id; it is recorded', async () => {
  const step = { ...reply('continued'), requireContainer: 'cont_abc' };
  api.script(step, step, step);
  await expect400(request([user('x')]), CONTAINER_REQUIRED);
  assert.equal(CONTAINER_REQUIRED, 'container_id is required when there are pending tool uses generated by code execution with tools.');
  await expect400(request([user('x')], { container: 'cont_zzz' }), "container: Container 'cont_zzz' not found. This conversation continues container 'cont_abc'.");
  const ok = await post(request([user('x')], { container: 'cont_abc' }));
  assert.equal(ok.status, 200);
  assert.equal(api.requests.at(-1).container, 'cont_abc');
  assert.equal(api.requests[0].container, undefined);
  await expect400(request([user('x')], { container: 7 }), 'container: Input should be a valid string');
});

test('programmatic tool calling: results for code-called tools need the container', async () => {
  const exec = serverToolUse('code_execution', { code: 'await get_order_status("1")' }, 'srvtoolu_e');
  const call = { ...toolUse('get_order_status', { orderId: '1' }, 'toolu_c'), caller: { type: 'code_execution_20250825', tool_id: 'srvtoolu_e' } };
  const body = (extra) => request([user('q'), assistant([exec, call]), user([result('toolu_c')])], { tools: [ORDER_TOOL], ...extra });
  await expect400(body({}), CONTAINER_REQUIRED);
  api.script(reply('ok'));
  assert.equal((await post(body({ container: 'cont_1' }))).status, 200);
});

// --- other block types -----------------------------------------------------------------------------

test('blocks: compaction, documents, search results, tool references, citations', async () => {
  const compaction = { type: 'compaction', content: 'Summary so far.', encrypted_content: 'ZW5j' };
  const doc = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Policy text' }, title: 'Policy', citations: { enabled: true } };
  const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } };
  const urlDoc = { type: 'document', source: { type: 'url', url: 'https://a.test/x.pdf' } };
  const custom = { type: 'document', source: { type: 'content', content: [text('part one')] } };
  const found = { type: 'search_result', source: 'https://kb.test/1', title: 'KB 1', content: [text('Returns within 30 days.')] };
  const ref = { type: 'tool_reference', tool_name: 'get_order_status' };
  const call = toolUse('get_order_status', { orderId: '1' }, 'toolu_b');
  api.script(reply('ok'), reply('ok'));
  assert.equal(
    (await post(request([user([doc, text('read it')]), assistant([compaction, call]), user([result('toolu_b', [text('x'), pdf, urlDoc, custom, found, ref])])]))).status,
    200,
  );
  assert.equal((await post(request([user([found, text('q')]), assistant([compaction]), user('go on')]))).status, 200);
  const inResult = (block) => request([user('q'), assistant([call]), user([result('toolu_b', [block])])]);
  await expect400(inResult({ type: 'search_result', source: 'https://kb.test/1', content: [text('x')] }), 'messages.2.content.0.content.0.title: Field required');
  await expect400(inResult({ ...found, content: 'plain' }), 'messages.2.content.0.content.0.content: Input should be a valid list');
  await expect400(inResult({ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: 'x' } }), "messages.2.content.0.content.0.source.base64.media_type: Input should be 'application/pdf'");
  await expect400(inResult({ type: 'document', source: { type: 'ftp', url: 'x' } }), "messages.2.content.0.content.0.source: Input tag 'ftp' found using 'type' does not match any of the expected tags: 'base64', 'text', 'url', 'content', 'file'");
  await expect400(inResult({ type: 'tool_reference' }), 'messages.2.content.0.content.0.tool_name: Field required');
  await expect400(inResult({ type: 'video', url: 'x' }), "messages.2.content.0.content.0: Input tag 'video' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'search_result', 'tool_reference'");
  await expect400(request([user('q'), assistant([{ ...compaction, summary: 'x' }]), user('go')]), 'messages.1.content.0.summary: Extra inputs are not permitted');
  await expect400(request([user([text('q', [{ type: 'made_up_location' }])])]), "messages.0.content.0.citations.0: Input tag 'made_up_location' found using 'type' does not match any of the expected tags: 'char_location', 'page_location', 'content_block_location', 'web_search_result_location', 'search_result_location'");
});

test('blocks: an unknown type is a 400, but the test-only x_future_block round-trips unchanged', async () => {
  const res = await post(request([user('q'), assistant([{ type: 'hologram', data: 1 }]), user('go')]));
  assert.equal(res.status, 400);
  assert.match((await res.json()).error.message, /^messages\.1\.content\.0: Input tag 'hologram' found using 'type' does not match any of the expected tags: 'text', 'image', /);
  const future = { type: 'x_future_block', z: [3, 2, 1], a: { nested: true }, text: '' };
  api.script(reply([text('before'), future, text('after')]), reply('ok'));
  const raw = await (await post(request([user('q')]))).text();
  assert.ok(raw.includes(JSON.stringify(future)), 'the block is sent byte for byte');
  const msg = JSON.parse(raw);
  assert.equal((await post(request([user('q'), assistant(msg.content), user('go')]))).status, 200);
  assert.equal(api.requests.at(-1).rawBody.includes(JSON.stringify(future)), true);
  await expect400(request([user([future])]), 'messages.0.content.0: `x_future_block` blocks can only be in `assistant` messages');
});

// --- more request fields, betas, prompt caching, redirects -----------------------------------------------

test('fields: the newer top-level fields are accepted, each with a type check', async () => {
  const all = {
    stop_sequences: ['END'], top_p: 0.9, top_k: 5, metadata: { user_id: 'u' }, service_tier: 'auto',
    cache_control: { type: 'ephemeral', ttl: '1h' }, output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object', additionalProperties: false } } },
    context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] }, container: 'cont_1', inference_geo: 'us',
    thinking: { type: 'disabled' },
  };
  api.script(reply('{}')); // the answer matches the format's schema
  assert.equal((await post(request([user('hi')], all), { headers: { 'anthropic-beta': 'context-management-2025-06-27' } })).status, 200);
  const cases = [
    [{ stop_sequences: 'END' }, 'stop_sequences: Input should be a valid list'],
    [{ stop_sequences: [1] }, 'stop_sequences.0: Input should be a valid string'],
    [{ top_p: 'x' }, 'top_p: Input should be a valid number'],
    [{ top_k: 0.5 }, 'top_k: Input should be a valid integer'],
    [{ metadata: 'u' }, 'metadata: Input should be a valid dictionary'],
    [{ metadata: { user: 'u' } }, 'metadata.user: Extra inputs are not permitted'],
    [{ service_tier: 'priority' }, "service_tier: Input should be 'auto' or 'standard_only'"],
    [{ cache_control: true }, 'cache_control: Input should be a valid dictionary'],
    [{ cache_control: { type: 'persistent' } }, "cache_control.type: Input should be 'ephemeral'"],
    [{ cache_control: { type: 'ephemeral', ttl: '2h' } }, "cache_control.ttl: Input should be '5m' or '1h'"],
    [{ output_config: { effort: 'extreme' } }, "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"],
    [{ output_config: { speed: 1 } }, 'output_config.speed: Extra inputs are not permitted'],
    [{ output_config: 'high' }, 'output_config: Input should be a valid dictionary'],
    [{ context_management: { edits: {} } }, 'context_management.edits: Input should be a valid list'],
    [{ inference_geo: 1 }, 'inference_geo: Input should be a valid string'],
    [{ thinking: { type: 'disabled', budget_tokens: 1024 } }, 'thinking.disabled.budget_tokens: Extra inputs are not permitted'],
  ];
  for (const [extra, message] of cases) await expect400(request([user('hi')], extra), message);
});

test('anthropic-beta is recorded as betas', async () => {
  api.script(reply('a'), reply('b'));
  await (await post(request([user('hi')]), { headers: { 'anthropic-beta': 'context-management-2025-06-27, compact-2026-01-12' } })).text();
  await (await post(request([user('hi')]))).text();
  assert.deepEqual(api.requests.map((r) => r.betas), [['context-management-2025-06-27', 'compact-2026-01-12'], []]);
});

test('prompt caching: creation on the first request with a prefix, reads on later ones, none without cache_control', async () => {
  const system = [{ type: 'text', text: 'You are a support agent. '.repeat(40), cache_control: { type: 'ephemeral' } }];
  api.handler = () => reply('ok');
  const usage = async (body) => (await (await post(body)).json()).usage;
  const plain = await usage(request([user('hi')], { system: system.map(({ cache_control, ...b }) => b) }));
  assert.equal(plain.cache_creation_input_tokens, 0);
  assert.equal(plain.cache_read_input_tokens, 0);
  const first = await usage(request([user('hi')], { system }));
  assert.ok(first.cache_creation_input_tokens > 0);
  assert.equal(first.cache_read_input_tokens, 0);
  const second = await usage(request([user('other question')], { system }));
  assert.equal(second.cache_creation_input_tokens, 0);
  assert.equal(second.cache_read_input_tokens, first.cache_creation_input_tokens);
  // automatic caching: the whole prefix; the next turn reads it and writes only what it adds
  const turn1 = [user('Where is #1?')];
  const a = await usage(request(turn1, { system, cache_control: { type: 'ephemeral' } }));
  assert.ok(a.cache_creation_input_tokens > 0);
  assert.equal(a.cache_read_input_tokens, first.cache_creation_input_tokens);
  const b = await usage(request(turn1, { system, cache_control: { type: 'ephemeral' } }));
  assert.deepEqual([b.cache_creation_input_tokens, b.cache_read_input_tokens], [0, a.cache_read_input_tokens + a.cache_creation_input_tokens]);
  const c = await usage(request([...turn1, assistant('On its way.'), user('thanks')], { system, cache_control: { type: 'ephemeral' } }));
  assert.equal(c.cache_read_input_tokens, b.cache_read_input_tokens);
  assert.ok(c.cache_creation_input_tokens > 0);
  // a scripted usage wins; reset() empties the cache
  api.handler = () => reply('ok', { usage: { cache_read_input_tokens: 7 } });
  assert.equal((await usage(request([user('hi')], { system }))).cache_read_input_tokens, 7);
  api.reset();
  api.handler = () => reply('ok');
  assert.equal((await usage(request([user('hi')], { system }))).cache_read_input_tokens, 0);
});

test('a scripted redirect: any 3xx status with its headers', async () => {
  api.script({ status: 307, headers: { location: 'http://127.0.0.1:1/elsewhere' } });
  const res = await post(request([user('hi')]), { redirect: 'manual' });
  assert.equal(res.status, 307);
  assert.equal(res.headers.get('location'), 'http://127.0.0.1:1/elsewhere');
  assert.match(res.headers.get('request-id'), /^req_/);
  assert.equal(await res.text(), '');
  assert.equal(api.requests.length, 1);
});

// --- streaming (SSE) -------------------------------------------------------------------------------

/** The events of an SSE body, as `{ event, data }` (data parsed). */
function parseSse(raw) {
  return raw
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const lines = frame.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = JSON.parse(lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'));
      return { event, data };
    });
}

/**
 * A message rebuilt from its events the way the official SDK's MessageStream accumulates them:
 * message_start's message, blocks pushed at content_block_start, deltas applied in place (input
 * JSON concatenated and parsed, a compaction's summary assigned), message_delta's fields, usage and
 * context_management assigned.
 */
function reassemble(events) {
  let message = null;
  const json = new Map();
  for (const { event, data } of events) {
    assert.equal(data.type, event, 'the event name matches the data type');
    switch (event) {
      case 'message_start':
        message = structuredClone(data.message);
        break;
      case 'content_block_start':
        assert.equal(data.index, message.content.length);
        message.content.push(structuredClone(data.content_block));
        break;
      case 'content_block_delta': {
        const block = message.content[data.index];
        const d = data.delta;
        if (d.type === 'text_delta') block.text += d.text;
        else if (d.type === 'citations_delta') block.citations = [...(block.citations ?? []), d.citation];
        else if (d.type === 'thinking_delta') block.thinking += d.thinking;
        else if (d.type === 'signature_delta') block.signature = d.signature;
        else if (d.type === 'compaction_delta') {
          block.content = d.content;
          if ('encrypted_content' in d) block.encrypted_content = d.encrypted_content;
        } else if (d.type === 'input_json_delta') {
          const buf = (json.get(data.index) ?? '') + d.partial_json;
          json.set(data.index, buf);
          if (buf) block.input = JSON.parse(buf.length && isComplete(buf) ? buf : '{}');
        } else throw new Error(`unknown delta ${d.type}`);
        break;
      }
      case 'content_block_stop':
        if (json.has(data.index)) message.content[data.index].input = JSON.parse(json.get(data.index));
        break;
      case 'message_delta':
        Object.assign(message, data.delta);
        Object.assign(message.usage, data.usage);
        if ('context_management' in data) message.context_management = data.context_management;
        break;
      case 'message_stop':
      case 'ping':
        break;
      default:
        throw new Error(`unknown event ${event}`);
    }
  }
  return message;
}

function isComplete(buf) {
  try {
    JSON.parse(buf);
    return true;
  } catch {
    return false;
  }
}

async function streamed(body, options) {
  const res = await post({ ...body, stream: true }, options);
  return { res, events: parseSse(await res.text()) };
}

const RICH = () => {
  const use = serverToolUse('web_search', { query: 'order 4821' }, 'srvtoolu_r');
  return reply(
    [
      thinking('The user wants order 4821. I will search, then call the tool. ¿Dónde está? 📦'),
      redactedThinking('hidden'),
      use,
      webSearchResult('srvtoolu_r', [{ url: 'https://shop.test/4821', title: 'Order 4821', page_age: '2 days' }]),
      text('Per the shop, it ships soon — 📦 on its way.', [
        { type: 'web_search_result_location', url: 'https://shop.test/4821', title: 'Order 4821', encrypted_index: 'eA==', cited_text: 'ships soon' },
        { type: 'web_search_result_location', url: 'https://shop.test/4821', title: 'Order 4821', encrypted_index: 'eQ==', cited_text: 'on its way' },
      ]),
      { type: 'compaction', content: 'Earlier: the user asked about orders.', encrypted_content: 'Y29tcA==' },
      { type: 'x_future_block', payload: { deep: [1, { z: 'ž' }] } },
      text(''),
      toolUse('get_order_status', { orderId: '4821', options: { verbose: true, fields: ['eta', 'carrier'] }, note: 'a "quoted" \\ string' }, 'toolu_r'),
      toolUse('get_order_status', {}, 'toolu_e'),
    ],
    {
      usage: { input_tokens: 321, output_tokens: 89, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      container: { id: 'cont_r', expires_at: '2026-12-01T00:00:00Z' },
      stop_details: null,
    },
  );
};

test('SSE: the events of a streamed reply reassemble into exactly the non-streamed message', async () => {
  api.script(RICH(), RICH());
  const body = request([user('Where is #4821?')], { tools: [ORDER_TOOL, WEB_SEARCH] });
  const plain = await (await post(body)).json();
  const { res, events } = await streamed(body);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  assert.equal(res.headers.get('cache-control'), 'no-cache');
  assert.match(res.headers.get('request-id'), /^req_/);

  const rebuilt = reassemble(events);
  rebuilt.id = plain.id;
  assert.equal(JSON.stringify(rebuilt), JSON.stringify(plain), 'same keys, same order, same values');

  const names = events.map((e) => e.event);
  assert.deepEqual(names.slice(0, 2), ['message_start', 'ping']);
  assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
  const start = events[0].data.message;
  assert.deepEqual(start.content, []);
  assert.equal(start.stop_reason, null);
  assert.equal(start.stop_sequence, null);
  assert.equal(start.usage.input_tokens, 321);
  assert.equal('container' in start, false);
  const delta = events.at(-2).data;
  assert.deepEqual(delta.delta, { stop_reason: 'tool_use', stop_sequence: null, stop_details: null, container: { id: 'cont_r', expires_at: '2026-12-01T00:00:00Z' } });
  assert.equal(delta.usage.output_tokens, 89);

  const starts = events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block);
  assert.deepEqual(starts[0], { type: 'thinking', thinking: '', signature: '' });
  assert.deepEqual(starts[1], plain.content[1], 'redacted_thinking whole');
  assert.deepEqual(starts[2], { type: 'server_tool_use', id: 'srvtoolu_r', name: 'web_search', input: {} });
  assert.deepEqual(starts[3], plain.content[3], 'the web search result whole');
  assert.deepEqual(starts[4], { type: 'text', text: '', citations: [] });
  assert.deepEqual(starts[5], { type: 'compaction', content: null }, 'a compaction starts without its summary');
  assert.deepEqual(starts[6], plain.content[6], 'an unknown block whole');
  assert.deepEqual(starts[8], { type: 'tool_use', id: 'toolu_r', name: 'get_order_status', input: {} });
  const deltasOf = (index) => events.filter((e) => e.event === 'content_block_delta' && e.data.index === index).map((e) => e.data.delta);
  assert.deepEqual(deltasOf(5), [{ type: 'compaction_delta', content: plain.content[5].content, encrypted_content: 'Y29tcA==' }]);
  const thinkingDeltas = deltasOf(0);
  assert.ok(thinkingDeltas.length > 5);
  assert.deepEqual(thinkingDeltas.at(-1), { type: 'signature_delta', signature: plain.content[0].signature });
  assert.ok(thinkingDeltas.slice(0, -1).every((d) => d.type === 'thinking_delta' && d.thinking.length <= 14));
  const textDeltas = deltasOf(4);
  assert.deepEqual(textDeltas.filter((d) => d.type === 'citations_delta').map((d) => d.citation), plain.content[4].citations);
  assert.ok(textDeltas.filter((d) => d.type === 'text_delta').length > 5);
  assert.deepEqual(deltasOf(7), [], 'an empty text block has no deltas');
  const jsonDeltas = deltasOf(8);
  assert.equal(jsonDeltas[0].partial_json, '');
  assert.ok(jsonDeltas.length > 3 && jsonDeltas.every((d) => d.type === 'input_json_delta'));
  assert.deepEqual(deltasOf(9).map((d) => d.partial_json), ['', '{}']);
  const stops = events.filter((e) => e.event === 'content_block_stop').map((e) => e.data.index);
  assert.deepEqual(stops, plain.content.map((_, i) => i));
  assert.ok(names.filter((n) => n === 'ping').length >= 2);

  const record = api.requests.at(-1);
  assert.equal(record.stream, true);
  assert.equal(record.clientClosed, false);
  assert.deepEqual(record.sseEvents, names);
  // the streamed blocks go back unchanged (but the empty text block, which the API refuses in requests)
  api.script(reply('fine'));
  const content = rebuilt.content.filter((b) => !(b.type === 'text' && b.text === ''));
  const next = { ...body, messages: [...body.messages, assistant(content), user([result('toolu_r'), result('toolu_e')])], container: 'cont_r' };
  assert.equal((await post(next)).status, 200);
});

test('SSE: sseEvents() is what the server sends; demoModel replies stream too', async () => {
  const message = { id: 'msg_x', type: 'message', role: 'assistant', model: 'm', content: [text('hi')], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 2 } };
  const events = sseEvents(message).map(([event, data]) => ({ event, data }));
  assert.deepEqual(reassemble(events), message);

  api.handler = demoModel;
  const { res, events: demo } = await streamed(request([user('Where is order #4821?')], { tools: [ORDER_TOOL] }));
  assert.equal(res.status, 200);
  const msg = reassemble(demo);
  assert.equal(msg.stop_reason, 'tool_use');
  assert.deepEqual(msg.content[0].input, { orderId: '4821' });
});

test('SSE: refusals and scripted errors stay plain JSON', async () => {
  await expect400(request([user('')], { stream: true }), `messages.0: ${EMPTY}`);
  api.script({ status: 529 });
  await expectError(request([user('hi')], { stream: true }), 529, 'overloaded_error', 'Overloaded');
});

test('SSE: sseError after N events sends an error event and ends the response', async () => {
  api.script(
    { ...reply('This answer is cut by an error.'), sseError: { type: 'overloaded_error' }, sseErrorAfter: 3 },
    { ...reply('x'), sseError: { type: 'api_error', message: 'boom' } },
  );
  const { res, events } = await streamed(request([user('hi')]));
  assert.equal(res.status, 200);
  assert.deepEqual(events.map((e) => e.event), ['message_start', 'ping', 'content_block_start', 'error']);
  assert.deepEqual(events[3].data, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  const second = await streamed(request([user('hi')]));
  assert.deepEqual(second.events.map((e) => e.data), [{ type: 'error', error: { type: 'api_error', message: 'boom' } }]);
  assert.equal(api.requests.at(-1).clientClosed, false);
});

test('SSE: unknownDelta injects a delta of an unknown type', async () => {
  api.script({ ...reply('hello there'), unknownDelta: 'x_delta' });
  const { events } = await streamed(request([user('hi')]));
  const odd = events.filter((e) => e.event === 'content_block_delta' && e.data.delta.type === 'x_delta');
  assert.deepEqual(odd.map((e) => e.data), [{ type: 'content_block_delta', index: 0, delta: { type: 'x_delta' } }]);
  assert.throws(() => reassemble(events), /unknown delta x_delta/);
});

test('SSE: sseCutAfter drops the connection mid-stream', async () => {
  api.script({ ...reply('never finished'), sseCutAfter: 4 });
  const res = await post(request([user('hi')], { stream: true }));
  assert.equal(res.status, 200);
  await assert.rejects(res.text());
  assert.deepEqual(api.requests.at(-1).sseEvents, ['message_start', 'ping', 'content_block_start', 'content_block_delta']);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(api.requests.at(-1).clientClosed, false, 'the server cut it, not the client');
});

test('SSE: streamDelayMs paces the events; a client that leaves early is recorded', async () => {
  api.script({ ...reply('x'.repeat(60)), streamDelayMs: 15 });
  const started = Date.now();
  const { events } = await streamed(request([user('hi')]));
  assert.ok(events.length > 20);
  assert.ok(Date.now() - started >= 15 * (events.length - 1) * 0.9, `${Date.now() - started} ms for ${events.length} events`);

  api.script({ ...reply('y'.repeat(200)), streamDelayMs: 5 }, { ...reply('z'), sseStallAfter: 2 });
  const controller = new AbortController();
  const res = await post(request([user('hi')], { stream: true }), { signal: controller.signal });
  const reader = res.body.getReader();
  await reader.read();
  controller.abort();
  await api.waitFor(() => api.requests.at(-1).clientClosed === true, 2000);
  assert.ok(api.requests.at(-1).sseEvents.length < 40);

  const stalled = await post(request([user('hi')], { stream: true }), { signal: AbortSignal.timeout(300) });
  await assert.rejects(stalled.text(), { name: 'TimeoutError' });
  await api.waitFor(() => api.requests.at(-1).clientClosed === true, 2000);
  assert.deepEqual(api.requests.at(-1).sseEvents, ['message_start', 'ping']);
  const all = await api.waitForRequests(3, 100);
  assert.equal(all.length, 3);
});

test('SSE: a server-level streamDelayMs', async () => {
  const slow = await startMockApi({ apiKey: KEY, streamDelayMs: 10 });
  try {
    slow.script(reply('abcdefghij'));
    const started = Date.now();
    const res = await fetch(`${slow.url}/v1/messages`, { method: 'POST', headers: HEADERS, body: JSON.stringify(request([user('hi')], { stream: true })) });
    const events = parseSse(await res.text());
    assert.ok(Date.now() - started >= 10 * (events.length - 1) * 0.9);
  } finally {
    await slow.close();
  }
});
