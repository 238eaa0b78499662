// The stand-in's own table of rules (stand-in/rules.json), sent to the stand-in: it must answer
// every case as the table says. The Rust tests talk to this same stand-in (tests/support/).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMockApi, reply, thinking, redactedThinking } from '../stand-in/index.mjs';

const table = JSON.parse(readFileSync(new URL('../stand-in/rules.json', import.meta.url), 'utf8'));

/** `base` with `changes` applied: a null value removes the field. */
function merged(base, changes = {}) {
  const out = { ...base };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** The table's `{ $thinking }` / `{ $redacted }` placeholders as blocks this stand-in signed. */
function signedBlocks(value) {
  if (Array.isArray(value)) return value.map(signedBlocks);
  if (value === null || typeof value !== 'object') return value;
  if ('$thinking' in value) return thinking(value.$thinking);
  if ('$redacted' in value) return redactedThinking(value.$redacted);
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, signedBlocks(inner)]));
}

let api;
before(async () => {
  api = await startMockApi({ apiKey: table.headers['x-api-key'] });
});
after(() => api.close());

test('the JS stand-in answers every shared rule as stand-in/rules.json lists it', async () => {
  assert.ok(table.cases.length > 100, 'the table has its cases');
  const mismatches = [];
  for (const c of table.cases) {
    const want = { status: c.status, type: c.type, message: c.message };
    api.reset();
    // A case of a structured-output format scripts its answer: each server checks it against the schema.
    const scripted = c.answerText ?? (c.answer !== undefined ? JSON.stringify(c.answer) : 'ok');
    if (want.status === 200 || c.answer !== undefined || c.answerText !== undefined) api.script(reply(scripted));
    const method = c.method ?? 'POST';
    const headers = Object.fromEntries(Object.entries(merged(table.headers, c.headers)));
    const body = c.rawBody ?? JSON.stringify(signedBlocks(merged(table.base, c.set)));
    const res = await fetch(api.url + (c.path ?? '/v1/messages'), { method, headers, body: method === 'GET' ? undefined : body });
    const answer = await res.json().catch(() => null);
    const got = { status: res.status, type: answer?.error?.type, message: answer?.error?.message };
    const ok =
      got.status === want.status &&
      (want.status === 200 || (got.type === want.type && typeof got.message === 'string' && got.message.includes(want.message)));
    if (!ok) mismatches.push(`${c.rule}: wanted ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
  }
  assert.deepEqual(mismatches, []);
});

/** `value` with every `{ $reply: N }` replaced by the id of the reply to request N. */
function withReplyIds(value, ids) {
  if (Array.isArray(value)) return value.map((v) => withReplyIds(v, ids));
  if (value === null || typeof value !== 'object') return value;
  if ('$reply' in value) return ids[value.$reply];
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withReplyIds(inner, ids)]));
}

test('the JS stand-in holds threads as stand-in/rules.json lists it', async () => {
  const { threads } = table;
  assert.ok(threads.cases.length >= 15, 'the table has its thread cases');
  const mismatches = [];
  for (const c of threads.cases) {
    api.reset();
    api.threads.refuse(c.refuse ?? []);
    const ids = [];
    for (const [n, r] of c.requests.entries()) {
      const want = { status: r.status, type: r.type, message: r.message, code: r.code, unsupported: r.unsupported };
      if (r.status === 200) {
        const content = r.reply?.content ?? 'ok';
        const options = { stop_reason: r.reply?.stop_reason ?? 'end_turn', ...(r.reply?.usage ? { usage: r.reply.usage } : {}) };
        api.script({ ...reply(content, options), ...(r.state ? { threadState: r.state } : {}) });
      }
      const headers = merged(merged(table.headers, threads.headers), r.headers);
      const body = JSON.stringify(withReplyIds(merged(table.base, r.set), ids));
      const res = await fetch(`${api.url}/v1/messages`, { method: 'POST', headers, body });
      const answer = await res.json().catch(() => null);
      ids.push(answer?.id);
      const error = answer?.error;
      const got = { status: res.status, type: error?.type, message: error?.message, code: error?.details?.error_code, unsupported: error?.details?.unsupported };
      const ok =
        got.status === want.status &&
        (want.status === 200 ||
          (got.type === want.type &&
            typeof got.message === 'string' &&
            got.message.includes(want.message) &&
            got.code === want.code &&
            JSON.stringify(got.unsupported) === JSON.stringify(want.unsupported)));
      if (!ok) mismatches.push(`${c.rule} (request ${n}): wanted ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
    }
  }
  assert.deepEqual(mismatches, []);
});
