// The strict stand-in of the Messages API, checked with plain fetch: validation messages, scripting,
// faults, demoModel, keep-alive, and that close() lets the process exit.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startMockApi, text, toolUse, reply, demoModel } from './mock-api.mjs';

const KEY = 'sk-ant-test-key';
const MODULE_PATH = fileURLToPath(new URL('./mock-api.mjs', import.meta.url));
const HEADERS = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

let api;
before(async () => {
  api = await startMockApi({ apiKey: KEY, port: 0, logLevel: 'silent' });
});
after(() => api.close());
beforeEach(() => api.reset());

function post(body, { headers = {}, signal, path = '/v1/messages', method = 'POST' } = {}) {
  return fetch(api.url + path, {
    method,
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
  await expect400(request([user('hi')], { stream: true }), 'mock-api: streaming is not supported by this stand-in');
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
    import { startMockApi, reply, text } from ${JSON.stringify(new URL('./mock-api.mjs', import.meta.url).href)};
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
  const { code, stdout } = await runNode([MODULE_PATH, '--port', '0', '--key', 'cli-key', '--demo'], {
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
