// The stand-in's long loops, checked with plain fetch (no engine): server-side compaction (at its
// trigger, not below it; pausing after it, the step kept for the continuation), usage iterations,
// context editing's applied_edits, a compaction reply streamed as the API streams it, and the beta
// and system-role rules.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  startMockApi, text, toolUse, thinking, reply, compaction, toolAddition, toolRemoval, estimateInputTokens,
} from '../stand-in/index.mjs';

const KEY = 'sk-ant-test-key';
const COMPACT = 'compact-2026-01-12';
const CLEARING = 'context-management-2025-06-27';
const TOOL_CHANGES = 'mid-conversation-tool-changes-2026-07-01';
const ORDER_TOOL = { name: 'get_order_status', description: 'Look up an order', input_schema: { type: 'object' } };

let api;
before(async () => {
  api = await startMockApi({ apiKey: KEY });
});
after(() => api.close());
beforeEach(() => api.reset());

async function post(body, betas = [COMPACT, CLEARING]) {
  const headers = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
  if (betas.length > 0) headers['anthropic-beta'] = betas.join(',');
  return fetch(`${api.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function ok(body, betas) {
  const res = await post(body, betas);
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

async function refused(body, betas, message) {
  const res = await post(body, betas);
  const json = await res.json();
  assert.equal(res.status, 400, JSON.stringify(json));
  assert.deepEqual(json.error, { type: 'invalid_request_error', message });
}

const user = (content) => ({ role: 'user', content });
const assistant = (content) => ({ role: 'assistant', content });
const system = (content) => ({ role: 'system', content });
const result = (id, content) => ({ type: 'tool_result', tool_use_id: id, content });
const request = (messages, edits, extra = {}) => ({
  model: 'claude-test', max_tokens: 256, tools: [ORDER_TOOL], messages, context_management: { edits }, ...extra,
});
const compact = (trigger, extra = {}) => ({ type: 'compact_20260112', trigger: { type: 'input_tokens', value: trigger }, ...extra });

/** A conversation of `n` messages (alternating, ending with the user's), long enough to be worth compacting. */
function history(n) {
  return Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user(`Question ${i}: ${'lorem ipsum '.repeat(30)}`) : assistant([text(`Answer ${i}.`)])));
}

/** The stand-in's count, written out: a quarter of the JSON of the messages it reads, the system prompt and the tools. */
const tokensOf = (messages, body) => Math.ceil((JSON.stringify(messages).length + JSON.stringify(body.tools).length) / 4);

// --- compaction ------------------------------------------------------------------------------------

test('compaction: at its trigger the reply starts with a compaction block, iterations say what each step cost', async () => {
  const messages = history(5);
  const probe = request(messages, [compact(1)]);
  const estimate = tokensOf(messages, probe);
  assert.equal(estimateInputTokens(probe), estimate);
  api.script(reply([text('Here is the answer.')], { usage: { output_tokens: 7 } }));
  const message = await ok(request(messages, [compact(estimate)]));

  const [block, answer] = message.content;
  assert.equal(block.type, 'compaction');
  assert.match(block.content, /\b5 messages\b/);
  assert.equal(typeof block.encrypted_content, 'string');
  assert.equal(Buffer.from(block.encrypted_content, 'base64').toString('base64'), block.encrypted_content);
  assert.deepEqual(answer, text('Here is the answer.'));
  assert.equal(message.content.length, 2);
  assert.equal(message.stop_reason, 'end_turn');

  const compacted = tokensOf([assistant([block])], probe);
  assert.deepEqual(message.usage.iterations, [
    { type: 'compaction', input_tokens: estimate, output_tokens: Math.ceil(block.content.length / 4), cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    { type: 'message', input_tokens: compacted, output_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  ]);
  assert.equal(message.usage.input_tokens, compacted, 'the top level is the message iteration');
  assert.equal(message.usage.output_tokens, 7, "each field of the step's usage wins");
  assert.deepEqual(message.context_management, { applied_edits: [] });

  // Without a usage of its own, the top level is the message iteration: the compacted request.
  api.script(reply('Again.'));
  const plain = await ok(request(messages, [compact(estimate)]));
  assert.deepEqual(plain.usage, {
    input_tokens: compacted, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
    iterations: [plain.usage.iterations[0], { type: 'message', input_tokens: compacted, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }],
  });
  assert.ok(compacted < estimate);
});

test('compaction: below the trigger, or without the edit, nothing is compacted and no iterations are reported', async () => {
  const messages = history(5);
  const estimate = estimateInputTokens(request(messages, []));
  api.script(reply('Below.'), reply('Default trigger.'), reply('No edit.'));
  const below = await ok(request(messages, [compact(estimate + 1)]));
  assert.deepEqual(below.content, [text('Below.')]);
  assert.equal('iterations' in below.usage, false);
  assert.deepEqual(below.context_management, { applied_edits: [] });
  const byDefault = await ok(request(messages, [{ type: 'compact_20260112' }]));
  assert.deepEqual(byDefault.content, [text('Default trigger.')], 'the default trigger is 150000 tokens');
  const { context_management, ...plain } = request(messages, []);
  const none = await ok(plain, []);
  assert.deepEqual(none.content, [text('No edit.')]);
  assert.equal('context_management' in none, false);
});

test('compaction: what precedes the last summary is not counted, a failed compaction (content null) changes nothing', async () => {
  const long = history(9);
  const summary = compaction('Earlier: nine messages about lorem ipsum.');
  const after = [...long, assistant([summary, text('Noted.')]), user('And now?')];
  const estimate = estimateInputTokens(request(after, []));
  assert.equal(estimate, tokensOf([assistant([summary, text('Noted.')]), user('And now?')], request(after, [])));
  const failed = [...long, assistant([{ type: 'compaction', content: null }, text('Noted.')]), user('And now?')];
  assert.equal(estimateInputTokens(request(failed, [])), tokensOf(failed, request(failed, [])));

  const trigger = tokensOf(long, request(long, []));
  api.script(reply('Short now.'), reply('Still long.'));
  assert.equal((await ok(request(after, [compact(trigger)]))).content[0].type, 'text', 'the summary keeps it below the trigger');
  const again = await ok(request(failed, [compact(trigger)]));
  assert.equal(again.content[0].type, 'compaction');
  assert.match(again.content[0].content, /\b11 messages\b/);
});

test('compaction: a scripted compaction reply is sent as given, never compacted twice', async () => {
  const usage = {
    input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
    iterations: [{ type: 'compaction', input_tokens: 60385, output_tokens: 522, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }],
  };
  const managed = { applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 4, cleared_input_tokens: 900 }] };
  const block = compaction('Scripted summary.', 'c2NyaXB0ZWQ=', { signature: 'c2ln' });
  api.script(reply([block], { stop_reason: 'compaction', usage, context_management: managed }));
  const message = await ok(request(history(3), [compact(1)]));
  assert.deepEqual(message.content, [block]);
  assert.equal(message.stop_reason, 'compaction');
  assert.deepEqual(message.usage, usage);
  assert.deepEqual(message.context_management, managed);
});

test('compaction: pause_after_compaction answers with the block alone and keeps the step for the continuation', async () => {
  const messages = history(7);
  const trigger = estimateInputTokens(request(messages, []));
  api.script(reply([text('The answer, after the pause.')]), reply('The next turn.'));
  const paused = await ok(request(messages, [compact(trigger, { pause_after_compaction: true })]));
  assert.equal(paused.stop_reason, 'compaction');
  assert.equal(paused.content.length, 1);
  const [block] = paused.content;
  assert.equal(block.type, 'compaction');
  assert.match(block.content, /\b7 messages\b/);
  assert.deepEqual(paused.usage, {
    input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
    iterations: [{ type: 'compaction', input_tokens: trigger, output_tokens: Math.ceil(block.content.length / 4), cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }],
  });
  assert.equal(api.pending, 2, 'the step was not used up');

  // The client's continuation: the same history ending in the paused reply, nothing added.
  const continued = await ok(request([...messages, assistant(paused.content)], [compact(trigger, { pause_after_compaction: true })]));
  assert.deepEqual(continued.content, [text('The answer, after the pause.')]);
  assert.equal('iterations' in continued.usage, false);
  assert.equal(api.pending, 1);
});

// --- context editing -------------------------------------------------------------------------------

/** Three tool rounds (ids toolu_1…3, the second one by `second`), each with its result, then a question. */
function toolRounds(second = 'get_order_status') {
  const out = [user('Check my orders.')];
  for (const [i, name] of [[1, 'get_order_status'], [2, second], [3, 'get_order_status']]) {
    out.push(assistant([thinking(`Order ${i} next.`), toolUse(name, { orderId: String(i) }, `toolu_${i}`)]));
    out.push(user([result(`toolu_${i}`, `order ${i}: shipped ${'.'.repeat(40 * i)}`)]));
  }
  return out;
}

test('context editing: cleared tool uses and thinking turns are reported in applied_edits, in the order of the edits', async () => {
  const messages = toolRounds();
  const size = (value) => JSON.stringify(value).length;
  const results = messages.filter((m) => m.role === 'user' && Array.isArray(m.content)).map((m) => m.content[0]);
  const thoughts = messages.filter((m) => m.role === 'assistant').map((m) => m.content[0]);
  const uses = messages.filter((m) => m.role === 'assistant').map((m) => m.content[1]);
  api.handler = () => reply('ok');

  const both = await ok(request(messages, [
    { type: 'clear_thinking_20251015' },
    { type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 3 }, keep: { type: 'tool_uses', value: 1 } },
  ], { tools: [{ ...ORDER_TOOL }, { ...ORDER_TOOL, name: 'refund' }] }));
  assert.deepEqual(both.context_management, {
    applied_edits: [
      { type: 'clear_thinking_20251015', cleared_thinking_turns: 2, cleared_input_tokens: Math.ceil((size(thoughts[0]) + size(thoughts[1])) / 4) },
      { type: 'clear_tool_uses_20250919', cleared_tool_uses: 2, cleared_input_tokens: Math.ceil((size(results[0].content) + size(results[1].content)) / 4) },
    ],
  });

  const withInputs = await ok(request(messages, [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 3 }, keep: { type: 'tool_uses', value: 2 }, clear_tool_inputs: true }]));
  assert.deepEqual(withInputs.context_management.applied_edits, [
    { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: Math.ceil((size(results[0].content) + size(uses[0].input)) / 4) },
  ]);

  const spared = toolRounds('refund');
  const excluded = await ok(request(spared, [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 2 }, keep: { type: 'tool_uses', value: 1 }, exclude_tools: ['refund'] }], { tools: [ORDER_TOOL, { ...ORDER_TOOL, name: 'refund' }] }));
  assert.deepEqual(excluded.context_management.applied_edits, [
    { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: Math.ceil(size(results[0].content) / 4) },
  ], 'the refund round is spared');
});

test('context editing: below the trigger, within keep, or under clear_at_least nothing is cleared; a step\'s own context_management wins', async () => {
  const messages = toolRounds();
  api.handler = () => reply('ok');
  const cases = [
    [{ type: 'clear_tool_uses_20250919' }, 'the default trigger is 100000 input tokens'],
    [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 4 }, keep: { type: 'tool_uses', value: 0 } }, 'three tool uses are below four'],
    [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 1 } }, 'the default keeps three'],
    [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 1 }, keep: { type: 'tool_uses', value: 0 }, clear_at_least: { type: 'input_tokens', value: 10_000 } }, 'clearing them all frees too little'],
    [{ type: 'clear_thinking_20251015', keep: 'all' }, 'all thinking kept'],
    [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 3 } }, 'three turns kept'],
  ];
  for (const [edit, why] of cases) assert.deepEqual((await ok(request(messages, [edit]))).context_management, { applied_edits: [] }, why);
  const mine = { applied_edits: [{ type: 'clear_thinking_20251015', cleared_thinking_turns: 9, cleared_input_tokens: 99 }] };
  api.script(reply('mine', { context_management: mine }));
  assert.deepEqual((await ok(request(messages, [{ type: 'clear_thinking_20251015' }]))).context_management, mine);
});

// --- streaming -------------------------------------------------------------------------------------

function parseSse(raw) {
  return raw.split('\n\n').filter((f) => f.trim() !== '').map((frame) => {
    const lines = frame.split('\n');
    return { event: lines.find((l) => l.startsWith('event: '))?.slice(7), data: JSON.parse(lines.find((l) => l.startsWith('data: ')).slice(6)) };
  });
}

/** The message the events give, accumulated the way the official SDK's BetaMessageStream does (text and compaction only). */
function reassemble(events) {
  let message;
  for (const { event, data } of events) {
    if (event === 'message_start') message = structuredClone(data.message);
    else if (event === 'content_block_start') message.content.push(structuredClone(data.content_block));
    else if (event === 'content_block_delta') {
      const block = message.content[data.index];
      if (data.delta.type === 'text_delta') block.text += data.delta.text;
      else if (data.delta.type === 'compaction_delta') {
        block.content = data.delta.content;
        if ('encrypted_content' in data.delta) block.encrypted_content = data.delta.encrypted_content;
      } else throw new Error(`unexpected delta ${data.delta.type}`);
    } else if (event === 'message_delta') {
      Object.assign(message, data.delta);
      Object.assign(message.usage, data.usage);
      if ('context_management' in data) message.context_management = data.context_management;
    }
  }
  return message;
}

test('streaming: a compaction block is one compaction_delta; message_delta carries the iterations and context_management', async () => {
  const messages = history(5);
  const body = request(messages, [compact(1)]);
  api.script(reply('Summarised, then answered.'), reply('Summarised, then answered.'));
  const plain = await ok(body);
  const res = await post({ ...body, stream: true });
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const events = parseSse(await res.text());

  const start = events.find((e) => e.event === 'content_block_start').data;
  assert.deepEqual(start, { type: 'content_block_start', index: 0, content_block: { type: 'compaction', content: null } });
  const deltas = events.filter((e) => e.event === 'content_block_delta' && e.data.index === 0).map((e) => e.data.delta);
  assert.deepEqual(deltas, [{ type: 'compaction_delta', content: plain.content[0].content, encrypted_content: plain.content[0].encrypted_content }]);

  const first = events[0].data.message;
  assert.equal(first.usage.input_tokens, plain.usage.iterations[0].input_tokens, "message_start reports the compaction's input");
  assert.equal('iterations' in first.usage, false);
  assert.equal('context_management' in first, false);
  const last = events.find((e) => e.event === 'message_delta').data;
  assert.deepEqual(last.usage, plain.usage);
  assert.deepEqual(last.context_management, { applied_edits: [] });
  assert.deepEqual(Object.keys(last), ['type', 'delta', 'usage', 'context_management']);

  const rebuilt = reassemble(events);
  rebuilt.id = plain.id;
  assert.equal(JSON.stringify(rebuilt), JSON.stringify(plain), 'same keys, same order, same values');
});

// --- the rules -------------------------------------------------------------------------------------

test('rules: each edit needs its beta', async () => {
  const messages = [user('hi')];
  await refused(request(messages, [compact(1000)]), [CLEARING],
    'context_management.edits.0: the `compact_20260112` edit requires the `compact-2026-01-12` beta; add it to the `anthropic-beta` header');
  await refused(request(messages, [compact(1000), { type: 'clear_thinking_20251015' }]), [COMPACT],
    'context_management.edits.1: the `clear_thinking_20251015` edit requires the `context-management-2025-06-27` beta; add it to the `anthropic-beta` header');
  await refused(request(messages, [{ type: 'clear_tool_uses_20250919' }]), [],
    'context_management.edits.0: the `clear_tool_uses_20250919` edit requires the `context-management-2025-06-27` beta; add it to the `anthropic-beta` header');
  api.script(reply('ok'));
  await ok(request(messages, [compact(100_000), { type: 'clear_tool_uses_20250919' }]), [CLEARING, COMPACT]);
});

test('rules: system messages change the tools only with their beta, name tools of the request, and sit between turns', async () => {
  const turn = [user('hi'), assistant([text('hello')])];
  const body = (messages) => ({ model: 'claude-test', max_tokens: 256, tools: [ORDER_TOOL], messages });
  await refused(body([...turn, system([toolRemoval('get_order_status')]), user('go on')]), [],
    "messages.2.role: Input should be 'user' or 'assistant'");
  api.script(reply('changed'), reply('last'));
  await ok(body([...turn, system([toolRemoval('get_order_status'), toolAddition('get_order_status')]), user('go on')]), [TOOL_CHANGES]);
  await ok(body([...turn, user('go on'), system([toolRemoval('get_order_status')])]), [TOOL_CHANGES]);
  await refused(body([...turn, system([toolAddition('refund')]), user('go on')]), [TOOL_CHANGES],
    "messages.2.content.0.tool.name: Tool 'refund' is not in `tools`; a `tool_addition` may only name a tool the request defines");
  await refused(body([...turn, system([text('be brief')]), user('go on')]), [TOOL_CHANGES],
    "messages.2.content.0: Input tag 'text' found using 'type' does not match any of the expected tags: 'tool_addition', 'tool_removal'");
  await refused(body([system([toolAddition('get_order_status')]), ...turn]), [TOOL_CHANGES], 'messages: first message must use the "user" role');
  await refused(body([user([text('hi'), toolAddition('get_order_status')])]), [TOOL_CHANGES],
    'messages.0.content.1: `tool_addition` blocks can only be in `system` messages');
  const call = assistant([toolUse('get_order_status', {}, 'toolu_1')]);
  await refused(body([user('hi'), call, system([toolRemoval('get_order_status')]), user([result('toolu_1', 'ok')])]), [TOOL_CHANGES],
    'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.');
});
