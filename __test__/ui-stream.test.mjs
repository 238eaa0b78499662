import { readFileSync } from 'node:fs';
// The stream layer on its own (lib/stream/, lib/ui-messages.js): the part buffer, the UI message stream read back by the AI SDK's own
// reader (`ai` is a devDependency), the text stream, and fromUIMessages checked against the
// strict stand-in of the Messages API. No run and no native binding are involved.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readUIMessageStream, uiMessageChunkSchema, parseJsonEventStream, UI_MESSAGE_STREAM_HEADERS as AI_HEADERS } from 'ai';
import { startMockApi, reply, text as textBlock } from '../stand-in/index.mjs';

const require = createRequire(import.meta.url);
const { createPartStream, ToolStream } = require('../lib/stream/part-stream.js');
const { UI_MESSAGE_STREAM_HEADERS, USER_ERROR_TEXT } = require('../lib/stream/ui-chunker.js');
const { fromUIMessages } = require('../lib/ui-messages.js');

// --- fixtures ------------------------------------------------------------------------------------

const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const ok = (extra = {}) => ({
  data: { text: '', reasoning: '', toolCalls: [], stopReason: 'end_turn', usage: USAGE, messages: [], ...extra },
  error: null,
});
const failed = (code, message, extra = {}) => ({ data: null, error: { code, message, ...extra } });

const step = (n) => ({ type: 'start-step', step: n });
const endStep = (n, stopReason = 'end_turn') => ({ type: 'finish-step', step: n, stopReason, usage: USAGE, toolCalls: [] });
const delta = (t) => ({ type: 'text-delta', text: t });
const think = (t) => ({ type: 'reasoning-delta', text: t });

/** A tool call as the engine streams it: start, input deltas, call, result. */
function toolCall(id, name, input, output, { isError = false, error, deltas = true } = {}) {
  const json = JSON.stringify(input);
  const parts = [{ type: 'tool-input-start', toolUseId: id, toolName: name }];
  if (deltas) for (let i = 0; i < json.length; i += 5) parts.push({ type: 'tool-input-delta', toolUseId: id, delta: json.slice(i, i + 5) });
  parts.push({ type: 'tool-call', toolUseId: id, toolName: name, input });
  const result = { type: 'tool-result', toolUseId: id, toolName: name, output, durationMs: 3 };
  if (isError) Object.assign(result, { isError: true, error });
  parts.push(result);
  return parts;
}

/** A ToolStream fed with `batches` (arrays of parts) and ended with `result`, asynchronously. */
function feed(batches, result, options) {
  const { stream, push, end } = createPartStream(options);
  (async () => {
    for (const batch of batches) {
      await new Promise((r) => setImmediate(r));
      push(batch);
    }
    await new Promise((r) => setImmediate(r));
    end(result);
  })();
  return stream;
}

// The keys each chunk type may have (the AI SDK 5 schema was strict; `useChat` of that version
// refuses anything else). `ai` 7's schema is loose, so this is checked here on top of it.
const CHUNK_KEYS = {
  start: ['type', 'messageId', 'messageMetadata'],
  'start-step': ['type'],
  'finish-step': ['type'],
  'text-start': ['type', 'id'],
  'text-delta': ['type', 'id', 'delta'],
  'text-end': ['type', 'id'],
  'reasoning-start': ['type', 'id'],
  'reasoning-delta': ['type', 'id', 'delta'],
  'reasoning-end': ['type', 'id'],
  'tool-input-start': ['type', 'toolCallId', 'toolName'],
  'tool-input-delta': ['type', 'toolCallId', 'inputTextDelta'],
  'tool-input-available': ['type', 'toolCallId', 'toolName', 'input'],
  'tool-output-available': ['type', 'toolCallId', 'output'],
  'tool-output-error': ['type', 'toolCallId', 'errorText'],
  'tool-approval-request': ['type', 'approvalId', 'toolCallId'],
  error: ['type', 'errorText'],
  abort: ['type'],
  finish: ['type', 'finishReason'],
};

const schema = uiMessageChunkSchema();

/** The SSE body as raw events (`data:` payloads), checking the framing. */
function sseEvents(body) {
  assert.ok(body.endsWith('\n\n'), 'the body ends with a blank line');
  const events = body.slice(0, -2).split('\n\n');
  for (const e of events) assert.match(e, /^data: /, `every event is one data line: ${e}`);
  return events.map((e) => e.slice('data: '.length));
}

/** Every chunk of a UI message stream Response, each validated by the `ai` package's schema. */
async function chunksOf(res) {
  const events = sseEvents(await res.text());
  assert.equal(events.at(-1), '[DONE]', '[DONE] is last');
  assert.equal(events.filter((e) => e === '[DONE]').length, 1);
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  for (const chunk of chunks) {
    const checked = await schema.validate(chunk);
    assert.ok(checked.success, `chunk passes uiMessageChunkSchema: ${JSON.stringify(chunk)}`);
    const allowed = CHUNK_KEYS[chunk.type];
    assert.ok(allowed, `a chunk type we mean to send: ${chunk.type}`);
    for (const key of Object.keys(chunk)) assert.ok(allowed.includes(key), `${chunk.type} has no extra field ${key}`);
  }
  return chunks;
}

/**
 * The final UIMessage `useChat` would build from a Response: the body is parsed by the SDK's
 * own SSE parser with its chunk schema, then folded by readUIMessageStream.
 */
async function uiMessageOf(res, { terminateOnError = true } = {}) {
  const errors = [];
  const chunks = parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(parsed, controller) {
        if (!parsed.success) throw parsed.error;
        controller.enqueue(parsed.value);
      },
    }),
  );
  let last;
  for await (const message of readUIMessageStream({ stream: chunks, onError: (e) => errors.push(e), terminateOnError })) last = message;
  return { message: last, errors };
}

const types = (chunks) => chunks.map((c) => c.type);

// --- the strict stand-in, for fromUIMessages -----------------------------------------------------

const KEY = 'sk-ant-test-key';
let api;
before(async () => {
  api = await startMockApi({ apiKey: KEY, port: 0, logLevel: 'silent' });
});
after(() => api.close());
beforeEach(() => api.reset());

/**
 * Posts `messages` to the stand-in; it answers 200 only if the API would take the history, under
 * the API version a run sends by default (its rules on documents and citations included).
 */
async function assertAccepted(messages, { system } = {}) {
  const names = new Set();
  for (const m of messages) for (const b of Array.isArray(m.content) ? m.content : []) if (b.type === 'tool_use') names.add(b.name);
  const tools = [...names].map((name) => ({ name, description: name, input_schema: { type: 'object' } }));
  api.script(reply([textBlock('fine')]));
  const body = { model: 'claude-test', max_tokens: 64, messages, ...(tools.length ? { tools } : {}), ...(system ? { system } : {}) };
  const res = await fetch(`${api.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'anthropic-version': '2026-10-21', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, `the API refuses the history: ${JSON.stringify(json.error)}\n${JSON.stringify(messages, null, 1)}`);
}

// --- ToolStream: the buffer ----------------------------------------------------------------------

test('iterating yields every part in order, the finish part last, and result resolves', async () => {
  const result = ok({ text: 'Hello world' });
  const stream = feed([[step(1), delta('Hello')], [delta(' world'), endStep(1)]], result);
  assert.ok(stream instanceof ToolStream);
  const seen = [];
  for await (const part of stream) seen.push(part);
  assert.deepEqual(types(seen), ['start-step', 'text-delta', 'text-delta', 'finish-step', 'finish']);
  assert.equal(seen.at(-1).result, result);
  assert.equal(await stream.result, result);
});

test('parts nobody reads are buffered until read, and the run ends anyway', async () => {
  const { stream, push, end } = createPartStream();
  push([step(1), delta('a')]);
  push([delta('b'), endStep(1)]);
  end(ok({ text: 'ab' }));
  assert.equal((await stream.result).data.text, 'ab');
  const seen = [];
  for await (const part of stream) seen.push(part);
  assert.deepEqual(types(seen), ['start-step', 'text-delta', 'text-delta', 'finish-step', 'finish']);
});

test('a long unread run stays in order across the compaction of the buffer', async () => {
  const { stream, push, end } = createPartStream();
  for (let i = 0; i < 3000; i++) push([delta(String(i))]);
  const it = stream[Symbol.asyncIterator]();
  for (let i = 0; i < 2000; i++) assert.equal((await it.next()).value.text, String(i));
  for (let i = 3000; i < 3100; i++) push([delta(String(i))]);
  end(ok());
  let n = 2000;
  for (let r = await it.next(); !r.done; r = await it.next(), n++) if (r.value.type === 'text-delta') assert.equal(r.value.text, String(n));
  assert.equal(n, 3101); // 1100 deltas + the finish part
});

test('single consumer: a second iteration or a Response after iterating is a TypeError naming why', async () => {
  const stream = feed([[delta('x')]], ok());
  const it = stream[Symbol.asyncIterator]();
  assert.throws(() => stream[Symbol.asyncIterator](), { name: 'TypeError', message: /already taken by an earlier iteration.*single consumer/ });
  assert.throws(() => stream.toUIMessageStreamResponse(), { name: 'TypeError', message: /single consumer/ });
  assert.throws(() => stream.toTextStreamResponse(), TypeError);
  while (!(await it.next()).done);

  const other = feed([[delta('x')]], ok());
  await other.toUIMessageStreamResponse().text();
  assert.throws(() => other.toTextStreamResponse(), { name: 'TypeError', message: /already taken by toUIMessageStreamResponse\(\)/ });
  await assert.rejects(async () => {
    for await (const _ of other);
  }, { name: 'TypeError', message: /toUIMessageStreamResponse\(\)/ });
  assert.ok((await other.result).data, 'result is always there');
});

test('break stops buffering but the run goes on and result resolves; iteration never throws', async () => {
  const { stream, push, end } = createPartStream();
  push([step(1), delta('a')]);
  for await (const part of stream) {
    assert.equal(part.type, 'start-step');
    break;
  }
  push([delta('later')]); // dropped, not kept
  end(ok({ text: 'a later' }));
  assert.equal((await stream.result).data.text, 'a later');
});

test('the producer side refuses misuse', () => {
  const { push, end } = createPartStream();
  assert.throws(() => push(delta('not an array')), /array of parts/);
  end(ok());
  assert.throws(() => push([delta('x')]), /after end/);
  assert.throws(() => end(ok()), /twice/);
  assert.throws(() => createPartStream({ onCancel: 1 }), /onCancel/);
});

// --- the UI message stream -----------------------------------------------------------------------

test('headers: the protocol headers, merged with init; status from init', async () => {
  assert.deepEqual({ ...UI_MESSAGE_STREAM_HEADERS }, AI_HEADERS);
  const res = feed([], ok()).toUIMessageStreamResponse({ status: 201, statusText: 'Made', headers: { 'x-extra': '1', 'cache-control': 'no-store' } });
  assert.equal(res.status, 201);
  assert.equal(res.statusText, 'Made');
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  assert.equal(res.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  assert.equal(res.headers.get('x-accel-buffering'), 'no');
  assert.equal(res.headers.get('connection'), 'keep-alive');
  assert.equal(res.headers.get('cache-control'), 'no-store', 'init.headers win');
  assert.equal(res.headers.get('x-extra'), '1');
  assert.deepEqual(types(await chunksOf(res)), ['start', 'finish']);
  assert.equal(feed([], ok()).toUIMessageStreamResponse().status, 200);
});

test('text only: start, step, one text part, finish; useChat shows the text', async () => {
  const parts = [[step(1), delta('Hel')], [delta('lo'), delta(''), delta(' there')], [endStep(1)]];
  const chunks = await chunksOf(feed(parts, ok({ text: 'Hello there' })).toUIMessageStreamResponse({ messageId: 'msg_1' }));
  assert.deepEqual(types(chunks), ['start', 'start-step', 'text-start', 'text-delta', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'finish']);
  assert.deepEqual(chunks[0], { type: 'start', messageId: 'msg_1' });
  assert.deepEqual(chunks.at(-1), { type: 'finish', finishReason: 'stop' });

  const { message, errors } = await uiMessageOf(feed(parts, ok()).toUIMessageStreamResponse({ messageId: 'msg_1' }));
  assert.deepEqual(errors, []);
  assert.equal(message.id, 'msg_1');
  assert.equal(message.role, 'assistant');
  assert.deepEqual(
    message.parts.map((p) => (p.type === 'text' ? { type: p.type, text: p.text, state: p.state } : { type: p.type })),
    [{ type: 'step-start' }, { type: 'text', text: 'Hello there', state: 'done' }],
  );
});

const toolRun = () => [
  [step(1), delta('Let me look.')],
  toolCall('toolu_01', 'get_order_status', { orderId: '4821' }, { status: 'shipped' }),
  [endStep(1, 'tool_use'), step(2), delta('It has shipped.'), endStep(2)],
];

test('text + a tool call with streamed input + its result, then a second step', async () => {
  const chunks = await chunksOf(feed(toolRun(), ok()).toUIMessageStreamResponse());
  const ids = chunks.filter((c) => c.type === 'text-start').map((c) => c.id);
  assert.equal(ids.length, 2);
  assert.notEqual(ids[0], ids[1], 'text that resumes after a tool gets a new id');
  assert.deepEqual(
    types(chunks).filter((t) => t !== 'tool-input-delta'),
    ['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'tool-input-start', 'tool-input-available', 'tool-output-available',
      'finish-step', 'start-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish'],
  );
  const deltas = chunks.filter((c) => c.type === 'tool-input-delta');
  assert.equal(deltas.map((c) => c.inputTextDelta).join(''), '{"orderId":"4821"}');
  assert.ok(deltas.every((c) => c.toolCallId === 'toolu_01'));
  assert.deepEqual(chunks.find((c) => c.type === 'tool-output-available'), { type: 'tool-output-available', toolCallId: 'toolu_01', output: { status: 'shipped' } });

  const { message, errors } = await uiMessageOf(feed(toolRun(), ok()).toUIMessageStreamResponse());
  assert.deepEqual(errors, []);
  assert.deepEqual(types(message.parts), ['step-start', 'text', 'tool-get_order_status', 'step-start', 'text']);
  const tool = message.parts[2];
  assert.equal(tool.state, 'output-available');
  assert.equal(tool.toolCallId, 'toolu_01');
  assert.deepEqual(tool.input, { orderId: '4821' });
  assert.deepEqual(tool.output, { status: 'shipped' });
  assert.equal(message.parts[4].text, 'It has shipped.');
});

test('a tool call without streamed input still becomes input-available, then output', async () => {
  const parts = [[step(1)], toolCall('toolu_02', 'ping', {}, 'pong', { deltas: false }), [endStep(1, 'tool_use')]];
  const chunks = await chunksOf(feed(parts, ok()).toUIMessageStreamResponse());
  assert.deepEqual(types(chunks), ['start', 'start-step', 'tool-input-start', 'tool-input-available', 'tool-output-available', 'finish-step', 'finish']);
  // A result whose call was never announced is announced first (useChat would throw otherwise).
  const bare = [[step(1), { type: 'tool-result', toolUseId: 'toolu_03', toolName: 'ping', output: undefined, durationMs: 1 }]];
  const { message, errors } = await uiMessageOf(feed(bare, ok()).toUIMessageStreamResponse());
  assert.deepEqual(errors, []);
  assert.equal(message.parts[1].state, 'output-available');
  assert.deepEqual(message.parts[1].input, {});
  assert.equal(message.parts[1].output, null);
});

test('a failed tool: output-error carries the model-facing text, never the developer error', async () => {
  const modelText = 'Internal error while running get_order_status. Try again later or tell the user.';
  const secret = 'TypeError: cannot read db password from /etc/secret';
  const parts = [[step(1)], toolCall('toolu_04', 'get_order_status', { orderId: '1' }, modelText, { isError: true, error: secret }), [endStep(1, 'tool_use'), step(2), delta('Sorry.'), endStep(2)]];
  const res = feed(parts, ok()).toUIMessageStreamResponse();
  const body = await res.text();
  assert.ok(!body.includes('db password'), 'the developer error never reaches the browser');
  const { message, errors } = await uiMessageOf(new Response(body));
  assert.deepEqual(errors, []);
  const tool = message.parts.find((p) => p.type === 'tool-get_order_status');
  assert.equal(tool.state, 'output-error');
  assert.equal(tool.errorText, modelText);
  assert.deepEqual(tool.input, { orderId: '1' });
});

test('reasoning: its own parts, ended when text starts; sendReasoning: false leaves it out', async () => {
  const parts = [[step(1), think('Let me '), think('think.'), delta('Answer.'), endStep(1)]];
  const chunks = await chunksOf(feed(parts, ok()).toUIMessageStreamResponse());
  assert.deepEqual(types(chunks), ['start', 'start-step', 'reasoning-start', 'reasoning-delta', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
  const { message } = await uiMessageOf(feed(parts, ok()).toUIMessageStreamResponse());
  assert.deepEqual(message.parts.filter((p) => p.type === 'reasoning').map((p) => [p.text, p.state]), [['Let me think.', 'done']]);
  const without = await chunksOf(feed(parts, ok()).toUIMessageStreamResponse({ sendReasoning: false }));
  assert.ok(!types(without).some((t) => t.startsWith('reasoning')));
});

test('an error result: error with a fixed user-safe sentence, or what onError returns', async () => {
  const error = { code: 'rate_limited', message: 'HTTP 429 for key sk-ant-XXXX at https://internal', retryAfter: 30 };
  const parts = [[step(1), delta('Partial')]];
  const chunks = await chunksOf(feed(parts, { data: null, error }).toUIMessageStreamResponse());
  assert.deepEqual(types(chunks), ['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'error', 'finish']);
  assert.deepEqual(chunks.at(-2), { type: 'error', errorText: USER_ERROR_TEXT.rate_limited });
  assert.deepEqual(chunks.at(-1), { type: 'finish', finishReason: 'error' });

  const seen = [];
  const custom = await chunksOf(feed([], failed('overloaded', 'dev detail')).toUIMessageStreamResponse({ onError: (e) => (seen.push(e), `Busy (${e.code})`) }));
  assert.deepEqual(custom.find((c) => c.type === 'error'), { type: 'error', errorText: 'Busy (overloaded)' });
  assert.equal(seen[0].message, 'dev detail');
  // A hook that throws or returns a non-string falls back to the fixed sentence.
  const thrown = await chunksOf(feed([], failed('network_error', 'x')).toUIMessageStreamResponse({ onError: () => { throw new Error('boom'); } }));
  assert.equal(thrown.find((c) => c.type === 'error').errorText, USER_ERROR_TEXT.network_error);
  const odd = await chunksOf(feed([], failed('made_up_code', 'x')).toUIMessageStreamResponse({ onError: () => 42 }));
  assert.equal(odd.find((c) => c.type === 'error').errorText, USER_ERROR_TEXT.unknown_error);

  const { errors } = await uiMessageOf(feed(parts, { data: null, error }).toUIMessageStreamResponse(), { terminateOnError: false });
  assert.deepEqual(errors.map((e) => e.message), [USER_ERROR_TEXT.rate_limited]);
});

test('there is a user-safe sentence for every error code', () => {
  // The codes as index.d.ts declares them, so a new code cannot go without its sentence.
  const dts = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');
  const union = dts.match(/export type AIErrorCode =([^]*?)\n\n/)[1];
  const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]);
  assert.ok(codes.includes('budget_exceeded') && codes.length >= 12, codes.join());
  assert.deepEqual(Object.keys(USER_ERROR_TEXT).sort(), [...codes].sort());
  for (const code of codes) assert.match(USER_ERROR_TEXT[code], /^[A-Z].*\.$/);
});

test('an aborted run ends with abort (no error, no finish) and [DONE]', async () => {
  const chunks = await chunksOf(feed([[step(1), delta('Half')]], failed('aborted', 'The run was aborted.')).toUIMessageStreamResponse());
  assert.deepEqual(types(chunks), ['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'abort']);
});

test('finish reasons follow the stop reason', async () => {
  const reasons = { end_turn: 'stop', max_tokens: 'length', refusal: 'content-filter', pause_turn: 'other', something_new: 'other' };
  for (const [stopReason, finishReason] of Object.entries(reasons)) {
    const chunks = await chunksOf(feed([], ok({ stopReason })).toUIMessageStreamResponse());
    assert.deepEqual(chunks.at(-1), { type: 'finish', finishReason }, stopReason);
  }
});

test('pending approvals become approval requests on their tool parts', async () => {
  const parts = [[step(1)], [{ type: 'tool-input-start', toolUseId: 'toolu_05', toolName: 'refund' }, { type: 'tool-input-delta', toolUseId: 'toolu_05', delta: '{"amount":5}' }], [endStep(1, 'tool_use')]];
  const result = ok({ stopReason: 'approval_required', pendingApprovals: [{ approvalId: 'apr_1', toolUseId: 'toolu_05', toolName: 'refund', input: { amount: 5 } }] });
  const chunks = await chunksOf(feed(parts, result).toUIMessageStreamResponse());
  assert.deepEqual(chunks.slice(-3), [
    { type: 'tool-input-available', toolCallId: 'toolu_05', toolName: 'refund', input: { amount: 5 } },
    { type: 'tool-approval-request', approvalId: 'apr_1', toolCallId: 'toolu_05' },
    { type: 'finish', finishReason: 'tool-calls' },
  ]);
  const { message, errors } = await uiMessageOf(feed(parts, result).toUIMessageStreamResponse());
  assert.deepEqual(errors, []);
  assert.equal(message.parts[1].state, 'approval-requested');
  assert.equal(message.parts[1].approval.id, 'apr_1');
});

test('parts are sent as they come, not held until the end', async () => {
  const { stream, push, end } = createPartStream();
  const reader = stream.toUIMessageStreamResponse().body.pipeThrough(new TextDecoderStream()).getReader();
  push([step(1), delta('first')]);
  let seen = '';
  while (!seen.includes('first')) seen += (await reader.read()).value;
  push([delta('second')]);
  while (!seen.includes('second')) seen += (await reader.read()).value;
  end(ok());
  for (let r = await reader.read(); !r.done; r = await reader.read()) seen += r.value;
  assert.ok(seen.endsWith('data: [DONE]\n\n'));
});

test('a cancelled body calls onCancel once, stops buffering, and result still resolves', async () => {
  const reasons = [];
  const { stream, push, end } = createPartStream({ onCancel: (reason) => reasons.push(reason) });
  const res = stream.toUIMessageStreamResponse();
  const reader = res.body.getReader();
  push([step(1), delta('x')]);
  await reader.read();
  await reader.cancel('client went away');
  assert.deepEqual(reasons, ['client went away']);
  push([delta('ignored')]);
  end(ok());
  assert.ok((await stream.result).data);

  // A hook that throws does not break the cancellation.
  const other = createPartStream({ onCancel: () => { throw new Error('hook'); } });
  await other.stream.toTextStreamResponse().body.cancel();
  other.end(ok());
});

// --- the text stream -----------------------------------------------------------------------------

test('toTextStreamResponse: the text deltas only, as plain UTF-8', async () => {
  const parts = [[step(1), think('hidden'), delta('Grüße, ')], toolCall('toolu_06', 'x', {}, 'out'), [delta('wörld 🌍'), endStep(1)]];
  const res = feed(parts, ok()).toTextStreamResponse({ status: 202, headers: { 'x-extra': 'y' } });
  assert.equal(res.status, 202);
  assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(res.headers.get('x-extra'), 'y');
  assert.equal(await res.text(), 'Grüße, wörld 🌍');
  assert.equal(await feed([], failed('overloaded', 'x')).toTextStreamResponse().text(), '');
});

// --- fromUIMessages ------------------------------------------------------------------------------

const user = (id, ...texts) => ({ id, role: 'user', parts: texts.map((text) => ({ type: 'text', text })) });

test('round trip: a UIMessage read from our stream → fromUIMessages → a history the API accepts', async () => {
  const { message } = await uiMessageOf(feed(toolRun(), ok()).toUIMessageStreamResponse({ messageId: 'a1' }));
  const messages = fromUIMessages([user('u1', 'Where is order 4821?'), message, user('u2', 'Thanks!')]);
  assert.deepEqual(messages, [
    { role: 'user', content: [{ type: 'text', text: 'Where is order 4821?' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'toolu_01', name: 'get_order_status', input: { orderId: '4821' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '{"status":"shipped"}' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'It has shipped.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Thanks!' }] },
  ]);
  assert.equal(messages.system, undefined);
  assert.deepEqual(messages.approvals, []);
  assert.deepEqual(JSON.parse(JSON.stringify(messages)), messages, 'plain JSON: the extra properties do not serialise');
  await assertAccepted(messages);
});

test('round trip of a failed tool and of two calls in one step', async () => {
  const modelText = 'orderId: 4821 is not of type "string"';
  const parts = [
    [step(1)],
    toolCall('toolu_a', 'get_order_status', { orderId: 4821 }, modelText, { isError: true, error: 'dev only' }),
    toolCall('toolu_b', 'get_order_status', { orderId: '7' }, ''),
    [endStep(1, 'tool_use'), step(2), delta('One failed.'), endStep(2)],
  ];
  const { message } = await uiMessageOf(feed(parts, ok()).toUIMessageStreamResponse());
  const messages = fromUIMessages([user('u1', 'Check both'), message]);
  assert.deepEqual(messages[2], {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'toolu_a', content: modelText, is_error: true },
      { type: 'tool_result', tool_use_id: 'toolu_b', content: '' },
    ],
  });
  assert.equal(messages.length, 4);
  await assertAccepted([...messages, { role: 'user', content: 'next' }]);
});

test('a user message after tool results goes after them, in the same user message', async () => {
  // An assistant message that ends on a tool result (the user stopped it before the answer).
  const assistant = {
    id: 'a1', role: 'assistant', parts: [
      { type: 'step-start' },
      { type: 'tool-lookup', toolCallId: 'toolu_x', state: 'output-available', input: { q: 'a' }, output: [1, 2] },
    ],
  };
  const messages = fromUIMessages([user('u1', 'hi'), assistant, user('u2', 'and?')]);
  assert.deepEqual(messages.at(-1), {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: '[1,2]' }, { type: 'text', text: 'and?' }],
  });
  await assertAccepted(messages);
});

test('text after a tool call in one step (no step-start) starts a new turn', async () => {
  const assistant = {
    id: 'a1', role: 'assistant', parts: [
      { type: 'text', text: 'Looking.' },
      { type: 'dynamic-tool', toolName: 'lookup', toolCallId: 'call_1', state: 'output-available', input: {}, output: 'found' },
      { type: 'text', text: 'Found it.' },
    ],
  };
  const messages = fromUIMessages([user('u1', 'hi'), assistant]);
  assert.deepEqual(types(messages.map((m) => ({ type: m.role }))), ['user', 'assistant', 'user', 'assistant']);
  assert.deepEqual(messages[1].content[1], { type: 'tool_use', id: 'call_1', name: 'lookup', input: {} });
  await assertAccepted([...messages, { role: 'user', content: 'ok' }]);
});

test('what is left out: unfinished calls, reasoning, empty text, display-only parts, a leading greeting', async () => {
  const messages = fromUIMessages([
    { id: 's', role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
    { id: 'g', role: 'assistant', parts: [{ type: 'text', text: 'Hi! How can I help?' }] },
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: '' }, { type: 'text', text: 'Find it' }, { type: 'data-weather', data: { t: 1 } }] },
    {
      id: 'a1', role: 'assistant', parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: 'thinking…', state: 'done' },
        { type: 'text', text: '  ' },
        { type: 'source-url', sourceId: 's1', url: 'https://example.com' },
        { type: 'tool-find', toolCallId: 'toolu_s', state: 'input-streaming', input: { q: 'pa' } },
        { type: 'tool-find', toolCallId: 'toolu_t', state: 'input-available', input: { q: 'x' } },
        { type: 'tool-find', toolCallId: 'toolu_u', state: 'output-available', input: { q: 'x' }, output: 'p', preliminary: true },
        { type: 'tool-find', toolCallId: 'toolu_v', state: 'approval-requested', input: { q: 'y' }, approval: { id: 'apr' } },
        { type: 'tool-find', toolCallId: 'toolu_w', state: 'output-available', input: {}, output: 'srv', providerExecuted: true },
      ],
    },
    { id: 'a2', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'Stopped.' }] },
    user('u2', 'Try again'),
  ]);
  assert.deepEqual(messages, [
    { role: 'user', content: [{ type: 'text', text: 'Find it' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Stopped.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Try again' }] },
  ]);
  assert.equal(messages.system, 'Be brief.');
  await assertAccepted(messages, { system: messages.system });
});

test('a final assistant message does not end with whitespace (the API refuses that prefill)', async () => {
  const messages = fromUIMessages([user('u1', 'hi'), { id: 'a', role: 'assistant', parts: [{ type: 'text', text: 'Hello \n' }] }]);
  assert.deepEqual(messages[1], { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] });
  await assertAccepted(messages);
});

test('a leading greeting with tool calls is left out with its results', async () => {
  const messages = fromUIMessages([
    { id: 'g', role: 'assistant', parts: [{ type: 'tool-hello', toolCallId: 'toolu_g', state: 'output-available', input: {}, output: 'x' }] },
    user('u1', 'hi'),
  ]);
  assert.deepEqual(messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  await assertAccepted(messages);
});

test('approvals: answers in the last message are returned; denied calls get the declined result', async () => {
  const last = {
    id: 'a1', role: 'assistant', parts: [
      { type: 'step-start' },
      { type: 'tool-refund', toolCallId: 'toolu_r1', state: 'approval-responded', input: { amount: 5 }, approval: { id: 'apr_1', approved: true } },
      { type: 'tool-refund', toolCallId: 'toolu_r2', state: 'approval-responded', input: { amount: 9 }, approval: { id: 'apr_2', approved: false, reason: 'too much' } },
      { type: 'tool-lookup', toolCallId: 'toolu_l', state: 'output-available', input: {}, output: 'ok' },
    ],
  };
  const messages = fromUIMessages([user('u1', 'refund'), last]);
  assert.deepEqual(messages.approvals, [{ approvalId: 'apr_1', approved: true }, { approvalId: 'apr_2', approved: false, reason: 'too much' }]);
  // A paused run resumes from here: the model's tool_use turn, then the results of the calls that did run.
  assert.deepEqual(messages.slice(1), [
    { role: 'assistant', content: [
      { type: 'tool_use', id: 'toolu_r1', name: 'refund', input: { amount: 5 } },
      { type: 'tool_use', id: 'toolu_r2', name: 'refund', input: { amount: 9 } },
      { type: 'tool_use', id: 'toolu_l', name: 'lookup', input: {} },
    ] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_l', content: 'ok' }] },
  ]);

  // Once the run went on, the same answers are history: a denial is its declined result.
  const later = fromUIMessages([
    user('u1', 'refund'),
    { ...last, parts: [...last.parts.slice(0, 1), last.parts[2], { type: 'tool-refund', toolCallId: 'toolu_r3', state: 'output-denied', input: {}, approval: { id: 'apr_3', approved: false } }] },
    user('u2', 'ok'),
  ]);
  assert.deepEqual(later.approvals, []);
  assert.deepEqual(later[2].content.slice(0, 2), [
    { type: 'tool_result', tool_use_id: 'toolu_r2', content: 'The user declined this call: too much. Do not retry it.', is_error: true },
    { type: 'tool_result', tool_use_id: 'toolu_r3', content: 'The user declined this call. Do not retry it.', is_error: true },
  ]);
  await assertAccepted(later);
  // The words are the engine's, as a run writes them: a reason is trimmed and loses its last full stop.
  const worded = fromUIMessages([
    user('u1', 'refund'),
    { ...last, parts: [...last.parts.slice(0, 2), { ...last.parts[2], approval: { id: 'apr_2', approved: false, reason: '  too expensive. ' } }, last.parts[3]] },
    user('u2', 'ok'),
  ]);
  assert.equal(worded[2].content[0].content, 'The user declined this call: too expensive. Do not retry it.');
});

test('user files: images and PDFs as blocks, toolResult blocks back as blocks', async () => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const messages = fromUIMessages([
    { id: 'u1', role: 'user', parts: [
      { type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${png}` },
      { type: 'file', mediaType: 'image/jpeg', url: 'https://example.com/a.jpg' },
      { type: 'text', text: 'What is this?' },
    ] },
  ]);
  assert.deepEqual(messages[0].content.slice(0, 2), [
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
  ]);
  await assertAccepted([{ role: 'user', content: [messages[0].content[0], messages[0].content[2]] }]);

  const docs = fromUIMessages([{ id: 'u', role: 'user', parts: [
    { type: 'file', mediaType: 'application/pdf', url: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' },
    { type: 'file', mediaType: 'text/plain', url: 'data:text/plain,hello%20there' },
  ] }]);
  assert.deepEqual(docs[0].content, [
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
    { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello there' } },
  ]);

  const blocks = [{ type: 'text', text: 'a chart' }];
  const withBlocks = fromUIMessages([user('u', 'x'), { id: 'a', role: 'assistant', parts: [{ type: 'tool-chart', toolCallId: 'toolu_c', state: 'output-available', input: {}, output: blocks }] }]);
  assert.deepEqual(withBlocks[2].content[0], { type: 'tool_result', tool_use_id: 'toolu_c', content: blocks });
  await assertAccepted([...withBlocks, { role: 'user', content: 'ok' }]);
});

test('bad input is a TypeError naming the message and the part', () => {
  const bad = (messages, pattern) => assert.throws(() => fromUIMessages(messages), (e) => e instanceof TypeError && pattern.test(e.message), String(pattern));
  bad('nope', /expected an array of UI messages, got string "nope"/);
  bad([null], /messages\[0\] must be an object, got null/);
  bad([{ id: 'm1', role: 'user' }], /messages\[0\] \(id "m1"\) has no parts array/);
  bad([{ id: 'm1', role: 'tool', parts: [] }], /messages\[0\] \(id "m1"\) has role "tool"/);
  bad([{ id: 'm1', role: 'user', parts: ['hi'] }], /messages\[0\] \(id "m1"\)\.parts\[0\] must be an object with a type/);
  bad([{ id: 'm1', role: 'user', parts: [{ type: 'text' }] }], /parts\[0\] \(text\) has no text string/);
  bad([user('u', 'x'), { id: 'a9', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'wat' }] }], /messages\[1\] \(id "a9"\)\.parts\[1\] has unknown type "wat"/);
  bad([{ id: 'u', role: 'user', parts: [{ type: 'tool-x', toolCallId: 'a', state: 'output-available', input: {}, output: 1 }] }], /parts\[0\] has type "tool-x", which a user message cannot hold/);
  const tool = (extra) => [user('u', 'x'), { id: 'a1', role: 'assistant', parts: [{ type: 'tool-find', toolCallId: 'toolu_1', state: 'output-available', input: {}, output: 1, ...extra }] }];
  bad(tool({ toolCallId: 'bad id!' }), /messages\[1\] \(id "a1"\)\.parts\[0\] \(tool-find\) has toolCallId "bad id!"; it must match/);
  bad(tool({ input: [1] }), /parts\[0\] \(tool-find\) has input an array; a tool input must be an object/);
  bad(tool({ input: 'x' }), /has input string "x"/);
  bad(tool({ state: 'weird' }), /has unknown state "weird"/);
  bad(tool({ state: 'output-error', errorText: undefined }), /output-error without errorText/);
  bad(tool({ state: 'approval-responded', approval: { id: 'x' } }), /approval-responded without approval/);
  bad([user('u', 'x'), { id: 'a', role: 'assistant', parts: [{ type: 'dynamic-tool', toolCallId: 'c', state: 'output-available', input: {}, output: 1 }] }], /has no tool name/);
  bad([...tool({}), { id: 'a2', role: 'assistant', parts: [{ type: 'tool-find', toolCallId: 'toolu_1', state: 'output-available', input: {}, output: 1 }] }], /messages\[2\] \(id "a2"\)\.parts\[0\] repeats toolCallId "toolu_1"/);
  bad([{ id: 'u', role: 'user', parts: [{ type: 'file', mediaType: 'application/zip', url: 'data:application/zip;base64,AA==' }] }], /mediaType "application\/zip"/);
  bad([{ id: 'u', role: 'user', parts: [{ type: 'file', mediaType: 'image/png', url: 'file:///etc/passwd' }] }], /neither data: nor http/);
});
