// Structured outputs in the strict stand-in: structuredAnswer builds answers that match a schema
// (the zod 4 schemas the official SDK sends too), a final answer that misses the request's format
// is a 500 unless the step says ignoresFormat, and the demo model answers in JSON when asked.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import {
  startMockApi, reply, text, toolUse, demoModel, structuredAnswer, schemaMismatch, FORMAT_MISMATCH,
} from '../stand-in/index.mjs';

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

/** The value must match the schema, and the stand-in must take it as the answer to a request with it. */
async function assertServed(schema, value) {
  assert.equal(schemaMismatch(schema, value), null, JSON.stringify(value));
  api.script(reply(JSON.stringify(value)));
  const res = await post(withFormat(schema));
  assert.equal(res.status, 200, await res.clone().text());
  assert.deepEqual(JSON.parse((await res.json()).content[0].text), value);
}

// --- structuredAnswer ------------------------------------------------------------------------------

test('structuredAnswer: facts where they fit, the enum, a valid date, null for a nullable field without a fact', async () => {
  const value = structuredAnswer(ORDER, { orderId: '4821', status: 'lost', carrier: 42 });
  assert.deepEqual(value, { orderId: '4821', status: 'shipped', eta: '2025-01-01', carrier: null });
  await assertServed(ORDER, value);
  assert.deepEqual(structuredAnswer(ORDER, { orderId: '4821', status: 'pending', eta: '2026-05-02', carrier: 'UPS' }), {
    orderId: '4821', status: 'pending', eta: '2026-05-02', carrier: 'UPS',
  });
});

test('structuredAnswer: prose for free text, placeholders and type defaults, arrays with minItems', async () => {
  const schema = closed({
    summary: { type: 'string' }, count: { type: 'integer' }, price: { type: 'number' }, ok: { type: 'boolean' }, nothing: { type: 'null' },
    tags: { type: 'array', items: { type: 'string' } }, lines: { type: 'array', minItems: 1, items: closed({ sku: { type: 'string' }, qty: { type: 'integer' } }) },
    kind: { const: 'order' }, size: { type: 'string', default: 'M' }, id: { type: 'string', format: 'uuid' }, when: { type: 'string', format: 'date-time' },
  });
  const value = structuredAnswer(schema, { qty: 3 }, 'Order #4821 is shipped.');
  assert.deepEqual(value, {
    summary: 'Order #4821 is shipped.', count: 0, price: 0, ok: false, nothing: null, tags: [],
    lines: [{ sku: 'Order #4821 is shipped.', qty: 3 }], kind: 'order', size: 'M', id: '00000000-0000-4000-8000-000000000000', when: '2025-01-01T00:00:00Z',
  });
  await assertServed(schema, value);
  assert.equal(structuredAnswer(closed({ s: { type: 'string' } })).s, '…');
});

test('structuredAnswer: $ref to $defs and definitions, allOf merged, anyOf preferring the branch the facts fill', async () => {
  const address = closed({ city: { type: 'string' }, zip: { type: ['string', 'null'] } }, ['city']);
  const schema = {
    ...closed({
      ship_to: { $ref: '#/$defs/Address' }, bill_to: { anyOf: [{ $ref: '#/definitions/Address' }, { type: 'null' }] },
      note: { anyOf: [{ type: 'string' }, { type: 'null' }] }, both: { allOf: [closed({ a: { type: 'string' } }), { description: 'also b' }] },
      either: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
    }),
    $defs: { Address: address },
    definitions: { Address: address },
  };
  const value = structuredAnswer(schema, { city: 'Lyon', note: 'leave at the door' });
  assert.deepEqual(value, { ship_to: { city: 'Lyon', zip: null }, bill_to: { city: 'Lyon', zip: null }, note: 'leave at the door', both: { a: '…' }, either: 0 });
  await assertServed(schema, value);
  // Nothing fills the address: the nullable one is null.
  assert.equal(structuredAnswer(schema, {}).bill_to, null);
  // A fact of the property's own name that is an object fills the nested object first.
  assert.deepEqual(structuredAnswer(schema, { city: 'Lyon', ship_to: { city: 'Oslo', zip: 42 } }).ship_to, { city: 'Oslo', zip: null });
  // One that matches the property's schema is taken as it is.
  assert.deepEqual(structuredAnswer(schema, { ship_to: { city: 'Oslo' } }).ship_to, { city: 'Oslo' });
});

test('structuredAnswer: schemas from zod 4, sent as the official SDK sends them', async () => {
  const Address = z.object({ street: z.string(), city: z.string() });
  const schemas = {
    order: z.object({
      orderId: z.string(), status: z.enum(['shipped', 'pending', 'lost']), eta: z.iso.date().optional(), delivered: z.boolean(),
      carrier: z.string().nullable(), items: z.number().int().min(0), tags: z.array(z.string()).min(1), email: z.email().optional(),
      kind: z.literal('order'), ref: z.union([z.string(), z.number()]), note: z.string().default('n/a'), id: z.uuid(),
    }),
    nested: z.object({ lines: z.array(z.object({ sku: z.string(), qty: z.number() })), ship_to: Address, bill_to: Address.optional() }),
  };
  const facts = { orderId: '4821', status: 'shipped', carrier: 'UPS', items: 2, tags: ['fragile'], kind: 'order', ref: 7 };
  for (const [name, zodSchema] of Object.entries(schemas)) {
    const schema = transformJSONSchema(z.toJSONSchema(zodSchema, { io: 'input' }));
    const value = structuredAnswer(schema, facts, 'Order #4821 is shipped.');
    assert.equal(schemaMismatch(schema, value), null, `${name}: ${JSON.stringify(value)}`);
    assert.equal(zodSchema.safeParse(value).success, true, `${name}: zod takes ${JSON.stringify(value)}`);
    await assertServed(schema, value);
  }
  const order = structuredAnswer(transformJSONSchema(z.toJSONSchema(schemas.order, { io: 'input' })), facts);
  assert.equal(order.orderId, '4821');
  assert.equal(order.carrier, 'UPS');
  assert.deepEqual(order.tags, ['fragile']);
  // A zod schema that reuses a part: a $ref to $defs.
  const shared = transformJSONSchema(z.toJSONSchema(z.object({ a: Address, b: Address }), { io: 'input', reused: 'ref' }));
  assert.ok(JSON.stringify(shared).includes('#/$defs/'));
  await assertServed(shared, structuredAnswer(shared, { city: 'Lyon' }));
});

test('structuredAnswer: every schema the rules table accepts gets an answer that matches it', async () => {
  const table = JSON.parse(readFileSync(new URL('../stand-in/rules.json', import.meta.url), 'utf8'));
  const accepted = table.cases.filter((c) => c.status === 200 && (c.set?.output_config?.format || c.set?.output_format));
  assert.ok(accepted.length >= 10);
  for (const c of accepted) {
    const schema = (c.set.output_config?.format ?? c.set.output_format).schema;
    // A pattern is not generated: the case's own answer supplies the facts that match it.
    const facts = JSON.stringify(schema).includes('"pattern"') ? c.answer : {};
    const value = structuredAnswer(schema, facts, 'prose');
    assert.equal(schemaMismatch(schema, value), null, `${c.rule}: ${JSON.stringify(value)}`);
  }
});

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
  // Each is recorded as broken: a test that scripted it by mistake fails (tests/support/ reads it).
  assert.deepEqual(api.requests.slice(-3).map((r) => r.broken?.message), [FORMAT_MISMATCH + why, FORMAT_MISMATCH + why, notJson.message]);
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
  assert.equal(api.requests.at(-1).broken, undefined);
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

// --- the demo model ----------------------------------------------------------------------------------

const ORDER_TOOL = { name: 'get_order_status', description: 'Look up an order', input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } };
const STATUS = { orderId: '4821', status: 'shipped', eta: '2026-05-02', carrier: 'UPS' };
const ANSWER = closed({
  orderId: { type: 'string' }, status: { type: 'string' }, eta: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] },
  carrier: { type: ['string', 'null'] }, summary: { type: 'string' }, refundable: { type: 'boolean' },
});

test('demoModel: asked for a format, it answers with JSON built from the tool results it read and its sentence', async () => {
  api.handler = demoModel;
  const body = withFormat(ANSWER, { tools: [ORDER_TOOL] });
  const first = await (await post(body)).json();
  assert.equal(first.stop_reason, 'tool_use');
  const call = first.content.find((b) => b.type === 'tool_use');
  const messages = [
    ...body.messages,
    { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: JSON.stringify(STATUS) }] },
  ];
  for (const stream of [false, true]) {
    const res = await post({ ...body, messages, stream });
    assert.equal(res.status, 200);
    if (stream) continue;
    const answer = JSON.parse((await res.json()).content[0].text);
    assert.deepEqual(answer, { ...STATUS, summary: 'Order #4821 is shipped. Expected delivery: 2026-05-02. Carrier: UPS.', refundable: false });
    assert.equal(schemaMismatch(ANSWER, answer), null);
  }
  // Without a tool to call it would say its fallback line: that goes in the free text.
  const fallback = JSON.parse(demoModel(withFormat(ANSWER)).content[0].text);
  assert.equal(fallback.summary, 'I can help with order questions. Which order do you mean?');
  assert.equal(fallback.eta, null);
  // Without a format, the same sentence as ever.
  const { output_config: _, ...plain } = { ...body, messages };
  assert.deepEqual(demoModel(plain), reply([text('Order #4821 is shipped. Expected delivery: 2026-05-02. Carrier: UPS.')]));
});
