// The stand-in's Threads beyond the shared table (stand-in/rules.json): what depends on how a
// request ends — a stream cut before message_stop holds nothing, a request continuing a reply
// holds it in flight until it ends, an error frees it — and what the steps see.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockApi, reply, text, toolUse, THREADS_BETA } from '../stand-in/index.mjs';

const KEY = 'sk-ant-test-key';
const HEADERS = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'anthropic-beta': THREADS_BETA };
const TOOLS = [{ name: 'lookup', input_schema: { type: 'object' } }];

async function start(t) {
  const api = await startMockApi({ apiKey: KEY });
  t.after(() => api.close());
  return api;
}

const post = (api, body) => fetch(`${api.url}/v1/messages`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
const create = (extra = {}) => ({ model: 'm', max_tokens: 64, system: 'Be brief.', tools: TOOLS, messages: [{ role: 'user', content: 'hi' }], thread: { type: 'create' }, ...extra });
const continuing = (id, messages, extra = {}) => ({ model: 'm', max_tokens: 64, messages, thread: { type: 'continue', previous_message_id: id }, ...extra });
const more = [{ role: 'user', content: 'more' }];

/** Reads an SSE answer to its end (or its cut), returning the message_start id. */
async function readStream(res) {
  let text = '';
  try {
    for await (const chunk of res.body) text += Buffer.from(chunk).toString('utf8');
  } catch {
    // a cut stream ends the body with an error
  }
  return /"id":"(msg_[^"]+)"/.exec(text)?.[1];
}

test('a streamed reply is held once message_stop is written, not when the stream is cut before it', async (t) => {
  const api = await start(t);
  api.script(reply([text('first')]), { ...reply([text('cut')]), sseCutAfter: 5 }, reply([text('whole')]), reply([text('after')]));
  const first = await (await post(api, create())).json();
  const cut = await readStream(await post(api, continuing(first.id, more, { stream: true })));
  assert.ok(cut, 'the cut stream started its message');
  assert.equal(api.threads.get(cut), undefined, 'a reply cut before message_stop is not held');
  // The reply the cut one continued is free again: the server holds the whole reply or none of it.
  const whole = await readStream(await post(api, continuing(first.id, more, { stream: true })));
  assert.equal(api.threads.get(whole).messages.length, 4);
  assert.deepEqual(api.threads.get(whole).messages.at(-1), { role: 'assistant', content: [text('whole')] });
  const after = await post(api, continuing(whole, more));
  assert.equal(after.status, 200);
  const spent = await (await post(api, continuing(first.id, more))).json();
  assert.equal(spent.error.details.error_code, 'thread_already_continued');
  // The record names the refusal and its code (tests/support/ tells a recoverable one by it).
  assert.equal(api.requests.at(-1).broken.code, 'thread_already_continued');
});

test('a reply is in flight while a request continues it, and free again when that request fails', async (t) => {
  const api = await start(t);
  api.script(reply([text('first')]), { fault: 'delay', ms: 300, then: { status: 529 } }, reply([text('again')]));
  const first = await (await post(api, create())).json();
  const slow = post(api, continuing(first.id, more));
  await api.waitForRequests(2);
  const busy = await (await post(api, continuing(first.id, more))).json();
  assert.equal(busy.error.type, 'invalid_request_error');
  assert.equal(busy.error.details.error_code, 'thread_continue_in_flight');
  assert.equal((await slow).status, 529);
  // An error holds nothing: the reply may be continued again.
  const again = await post(api, continuing(first.id, more));
  assert.equal(again.status, 200);
});

test('steps and the records see the whole conversation; the body is what was sent', async (t) => {
  const api = await start(t);
  const seen = [];
  api.script(reply([toolUse('lookup', {}, 'toolu_a')]), (body) => {
    seen.push(body);
    return reply([text('done')]);
  });
  const first = await (await post(api, create())).json();
  const results = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'x' }] }];
  assert.equal((await post(api, continuing(first.id, results))).status, 200);
  const [whole] = seen;
  assert.equal(whole.system, 'Be brief.');
  assert.deepEqual(whole.tools, TOOLS);
  assert.deepEqual(whole.messages.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.equal(whole.thread, undefined);
  assert.deepEqual(api.requests[1].fullBody, whole);
  assert.equal(api.requests[1].body.messages.length, 1);
});

test('a recorded reply is held like a built one, streamed or not', async (t) => {
  const api = await start(t);
  const recorded = { id: 'msg_recorded_1', type: 'message', role: 'assistant', model: 'm', content: [text('rec')], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
  const events = [
    { type: 'message_start', message: { ...recorded, id: 'msg_recorded_2', content: [], stop_reason: null } },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_r', name: 'lookup', input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"q":' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"x"}' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 3 } },
    { type: 'message_stop' },
  ];
  api.script({ recorded }, { recordedEvents: events });
  await post(api, create());
  assert.deepEqual(api.threads.get('msg_recorded_1').messages.at(-1), { role: 'assistant', content: [text('rec')] });
  await readStream(await post(api, continuing('msg_recorded_1', more, { stream: true })));
  assert.deepEqual(api.threads.get('msg_recorded_2').messages.at(-1).content, [{ type: 'tool_use', id: 'toolu_r', name: 'lookup', input: { q: 'x' } }]);
  assert.equal(api.threads.get('msg_recorded_1').state, 'continued');
});

test('a test may lose, spend or busy a held reply, and an error step sends its details', async (t) => {
  const api = await start(t);
  api.script(reply([text('a')]), { status: 400, error: { type: 'invalid_request_error', message: 'scripted', details: { error_code: 'thread_unsupported_request', unsupported: ['x_new'] } } });
  const first = await (await post(api, create())).json();
  for (const [state, code] of [['in_flight', 'thread_continue_in_flight'], ['continued', 'thread_already_continued'], ['lost', 'thread_not_found']]) {
    api.threads.set(first.id, state);
    const refused = await (await post(api, continuing(first.id, more))).json();
    assert.equal(refused.error.details.error_code, code);
  }
  const scripted = await (await post(api, create())).json();
  assert.deepEqual(scripted.error.details, { error_code: 'thread_unsupported_request', unsupported: ['x_new'] });
});

test('the stand-in holds at most heldThreads.limit replies: the oldest expires first, a continue of it is thread_not_found', async (t) => {
  const api = await startMockApi({ apiKey: KEY, heldThreads: { limit: 2 } });
  t.after(() => api.close());
  api.script(reply([text('a')]), reply([text('b')]), reply([text('c')]), reply([text('a again')]));
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await (await post(api, create())).json()).id);
  assert.equal(api.threads.size, 2);
  assert.equal(api.threads.get(ids[0]), undefined, 'the oldest reply expired');
  const expired = await post(api, continuing(ids[0], more));
  assert.equal(expired.status, 404);
  assert.equal((await expired.json()).error.details.error_code, 'thread_not_found');
  assert.equal((await post(api, continuing(ids[1], more))).status, 200, 'a newer one is still held');
  await assert.rejects(startMockApi({ heldThreads: { limit: 0 } }), /heldThreads\.limit: a whole number of at least 1, not 0/);
  await assert.rejects(startMockApi({ heldThreads: { holdEndTurn: 'no' } }), /heldThreads\.holdEndTurn: true or false/);
});

test('heldThreads.holdEndTurn: false holds the replies a tool loop continues, not one that ended its turn', async (t) => {
  const api = await startMockApi({ apiKey: KEY, heldThreads: { holdEndTurn: false } });
  t.after(() => api.close());
  api.script(reply([toolUse('lookup', { q: 'x' }, 'toolu_1')]), reply([text('done')]));
  const asked = await (await post(api, create())).json();
  assert.equal(asked.stop_reason, 'tool_use');
  assert.equal(api.threads.get(asked.id).state, 'held');
  const results = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] }];
  const done = await (await post(api, continuing(asked.id, results))).json();
  assert.equal(done.stop_reason, 'end_turn');
  assert.equal(api.threads.get(done.id), undefined, 'the final reply is not held');
  assert.equal(api.threads.get(asked.id).state, 'continued', 'the reply it continued is spent as always');
  const next = await post(api, continuing(done.id, more));
  assert.equal((await next.json()).error.details.error_code, 'thread_not_found');
});

test('a thread holds every recorded stream as the official SDK assembles it', async () => {
  const { recordingNames, recordedReplies, sdkMessage } = await import('./recorded-replay.mjs');
  const { assembled } = await import('../stand-in/threads.mjs');
  const streams = recordingNames().filter((n) => n.endsWith('.chunks.txt') && !n.startsWith('duplicate-') && !n.startsWith('spliced-'));
  assert.ok(streams.length > 10);
  for (const name of streams) {
    for (const events of recordedReplies(name)) {
      const held = assembled(events);
      const sdk = await sdkMessage(events);
      assert.deepEqual(held?.content, sdk.content, name);
      assert.equal(held.stop_reason, sdk.stop_reason, name);
    }
  }
});
