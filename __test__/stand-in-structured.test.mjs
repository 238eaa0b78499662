// Structured outputs in the strict stand-in: a final answer that misses the request's format is a
// 500 naming why, unless the step says ignoresFormat.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startMockApi, reply, text, toolUse, schemaMismatch, FORMAT_MISMATCH } from '../stand-in/index.mjs';

const KEY = 'sk-ant-test-key';
const HEADERS = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

let api;
before(async () => {
  api = await startMockApi({ apiKey: KEY });
});
after(() => api.close());
beforeEach(() => api.reset());

const closed = (properties, required = Object.keys(properties), extra = {}) => ({
  type: 'object', properties, required, additionalProperties: false, ...extra,
});
const ORDER = closed(
  { orderId: { type: 'string' }, status: { enum: ['shipped', 'pending'] }, eta: { type: 'string', format: 'date' }, carrier: { type: ['string', 'null'] } },
  ['orderId', 'status'],
);
const withFormat = (schema, extra = {}) => ({
  model: 'claude-test', max_tokens: 256, messages: [{ role: 'user', content: 'where is #4821?' }],
  output_config: { format: { type: 'json_schema', schema } }, ...extra,
});
const post = (body, headers = {}) => fetch(`${api.url}/v1/messages`, { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) });

// --- schemaMismatch ----------------------------------------------------------------------------------

test('schemaMismatch: the reasons, each at its place in the value', () => {
  assert.equal(schemaMismatch(ORDER, { orderId: '1', status: 'shipped' }), null);
  assert.equal(schemaMismatch(ORDER, { orderId: 1, status: 'shipped' }), 'at /orderId: 1 is not of type "string"');
  assert.equal(schemaMismatch(ORDER, { orderId: '1' }), 'at /: "status" is a required property');
  assert.equal(schemaMismatch(ORDER, { orderId: '1', status: 'shipped', x: 1, y: 2 }), "at /: Additional properties are not allowed ('x', 'y' were unexpected)");
  assert.equal(schemaMismatch(ORDER, { orderId: '1', status: 'shipped', eta: '2026-13-01' }), 'at /eta: "2026-13-01" is not a "date"');
  assert.equal(schemaMismatch(ORDER, { orderId: '1', status: 'shipped', carrier: 5 }), 'at /carrier: 5 is not of types "string", "null"');
  assert.equal(schemaMismatch({ enum: ['a', 'b', 'c', 'd'] }, 'z'), 'at /: "z" is not one of "a", "b" or 2 other candidates');
  assert.equal(schemaMismatch({ type: 'array', minItems: 1, items: { const: 1 } }, []), 'at /: [] has less than 1 item');
  assert.equal(schemaMismatch({ type: 'array', items: { const: 1 } }, [1, 2]), 'at /1: 1 was expected');
  assert.equal(schemaMismatch({ anyOf: [{ type: 'string' }, { type: 'null' }] }, 3), "at /: 3 is not valid under any of the schemas listed in the 'anyOf' keyword");
  assert.equal(schemaMismatch({ type: 'string', pattern: '^[0-9]{4}$' }, '48'), 'at /: "48" does not match "^[0-9]{4}$"');
  assert.equal(schemaMismatch({ $defs: { N: { type: 'integer' } }, $ref: '#/$defs/N' }, 1.5), 'at /: 1.5 is not of type "integer"');
});

// --- the answer must match the format ----------------------------------------------------------------

const errorOf = async (res) => ({ status: res.status, ...(await res.json()).error });
const misfit = (why) => ({ status: 500, type: 'api_error', message: FORMAT_MISMATCH + why });

test('a final answer that misses the format is a 500 naming why, streamed or not; a matching one is sent', async () => {
  const wrong = reply(JSON.stringify({ orderId: '4821', status: 'lost' }));
  api.script(wrong, wrong, reply('Order #4821 has shipped.'));
  const why = 'at /status: "lost" is not one of "shipped" or "pending"';
  assert.deepEqual(await errorOf(await post(withFormat(ORDER))), misfit(why));
  assert.deepEqual(await errorOf(await post(withFormat(ORDER, { stream: true }))), misfit(why));
  const notJson = await errorOf(await post(withFormat(ORDER)));
  assert.equal(notJson.status, 500);
  assert.ok(notJson.message.startsWith(`${FORMAT_MISMATCH}the text is not JSON (`), notJson.message);
  // The text blocks are joined: an answer split over two blocks is one JSON text.
  api.script(reply([text('{"orderId":"4821",'), text('"status":"shipped"}')], { stop_reason: 'stop_sequence', stop_sequence: 'END' }));
  assert.equal((await post(withFormat(ORDER))).status, 200);
  const good = { orderId: '4821', status: 'shipped' };
  api.script({ ...reply(JSON.stringify(good)), streamDelayMs: 0 });
  const res = await post(withFormat(ORDER, { stream: true }));
  assert.equal(res.status, 200);
  assert.match(await res.text(), /event: message_stop/);
});

test('ignoresFormat: true sends an answer that misses the format, streamed or not', async () => {
  const broken = { ...reply('Sorry, here is prose instead of JSON.'), ignoresFormat: true };
  api.script(broken, broken);
  const plain = await post(withFormat(ORDER));
  assert.equal(plain.status, 200);
  assert.equal((await plain.json()).content[0].text, 'Sorry, here is prose instead of JSON.');
  const streamed = await post(withFormat(ORDER, { stream: true }));
  assert.equal(streamed.status, 200);
  assert.match(await streamed.text(), /event: message_stop/);
});

test('refusals, cut answers and tool calls are never checked; nor is anything without a format', async () => {
  api.script(
    reply('I cannot help with that.', { stop_reason: 'refusal' }),
    reply('{"orderId": "48', { stop_reason: 'max_tokens' }),
    reply([text('Let me look.'), toolUse('get_order_status', { orderId: '4821' })]),
    reply('plain prose'),
  );
  const tools = [{ name: 'get_order_status', input_schema: { type: 'object' } }];
  for (let i = 0; i < 3; i++) assert.equal((await post(withFormat(ORDER, { tools }))).status, 200, `step ${i}`);
  assert.equal((await post({ model: 'claude-test', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] })).status, 200);
});

test('a function step, the handler and a delayed step are checked too; the deprecated output_format as well', async () => {
  const why = 'at /: "status" is a required property';
  api.script(() => reply('{"orderId":"4821"}'), { fault: 'delay', ms: 1, then: reply('{"orderId":"4821"}') });
  assert.deepEqual(await errorOf(await post(withFormat(ORDER))), misfit(why));
  assert.deepEqual(await errorOf(await post(withFormat(ORDER))), misfit(why));
  api.handler = () => reply('{"orderId":"4821"}');
  assert.deepEqual(await errorOf(await post(withFormat(ORDER))), misfit(why));
  const deprecated = { ...withFormat(ORDER), output_config: undefined, output_format: { type: 'json_schema', schema: ORDER } };
  assert.deepEqual(await errorOf(await post(deprecated)), misfit(why));
  api.handler = () => ({ ...reply('{"orderId":"4821"}'), ignoresFormat: true });
  assert.equal((await post(withFormat(ORDER))).status, 200);
});
