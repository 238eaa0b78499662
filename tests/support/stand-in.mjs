// The strict stand-in (stand-in/) for the Rust integration tests: one child process per test
// binary, driven over its stdin and stdout, one JSON object a line (tests/support/stand_in.rs is
// the other end). It hosts a stand-in for each test that asks for one, each on its own port of
// 127.0.0.1, so a test pays for no node start of its own.
//
// Each line in is a command, answered by exactly one line out, in order:
//   { "op": "start", "keys": [...], "steps": [...] }  a new stand-in taking these API keys (or auth
//        tokens), scripted with these steps in the stand-in's own shapes (stand-in/index.mjs);
//        answers { "id", "url", "now" } (`now`: performance.now(), the clock of `receivedAt`)
//   { "op": "requests", "id" }             every request so far, as recorded (below)
//   { "op": "accept", "id", "credential" } takes one more key or token as valid
//   { "op": "set_thread", "id", "thread", "state" }  api.threads.set(thread, state)
//   { "op": "refuse", "id", "names" }      api.threads.refuse(names)
//   { "op": "held", "id", "thread" }       the conversation held under `thread` (null: none)
//   { "op": "close", "id" }                stops that stand-in
// When stdin ends (the test binary is done, or died) every stand-in closes and the process exits.

import { createInterface } from 'node:readline';
import { startMockApi } from '../../stand-in/server.mjs';
/** A request as the Rust side reads it: what arrived, how it was answered, the rule it broke. */
function recordOut(r) {
  return {
    method: r.method,
    path: r.path,
    headers: r.headers,
    rawBody: r.rawBody,
    body: r.body ?? null,
    retryCount: Number.isFinite(r.retryCount) ? r.retryCount : null,
    receivedAt: r.receivedAt,
    betas: r.betas,
    streamed: r.stream === true,
    clientClosed: r.clientClosed === true,
    fullBody: r.fullBody ?? r.body ?? null,
    replyId: r.reply?.id ?? null,
    requestId: r.requestId,
    broken: r.broken ?? null,
  };
}

function held(api, id) {
  const entry = api.threads.get(id);
  if (!entry || entry.state === 'continued') return null;
  return { system: entry.system ?? null, tools: entry.tools ?? null, messages: entry.messages };
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
/** id → { api, keys }: `keys` is the list each request is checked against, so one added counts at once. */
const running = new Map();
let next = 0;

async function run(command) {
  if (command.op === 'start') {
    const keys = [...command.keys];
    const api = await startMockApi({ apiKey: keys, host: '127.0.0.1', port: 0 });
    api.script(...command.steps);
    const id = ++next;
    running.set(id, { api, keys });
    return { id, url: api.url, now: performance.now() };
  }
  const one = running.get(command.id);
  if (!one) return { error: `no stand-in ${command.id}` };
  const { api, keys } = one;
  switch (command.op) {
    case 'requests':
      return api.requests.map(recordOut);
    case 'accept':
      keys.push(command.credential);
      return true;
    case 'set_thread':
      api.threads.set(command.thread, command.state);
      return true;
    case 'refuse':
      api.threads.refuse(command.names);
      return true;
    case 'held':
      return held(api, command.thread);
    case 'close':
      running.delete(command.id);
      // Not awaited: the answer need not wait for hanging sockets to go.
      api.close();
      return true;
    default:
      return { error: `unknown command ${JSON.stringify(command)}` };
  }
}

for await (const line of lines) {
  if (line.trim() === '') continue;
  try {
    say(await run(JSON.parse(line)));
  } catch (err) {
    say({ error: String(err?.stack ?? err) });
  }
}
await Promise.all([...running.values()].map(({ api }) => api.close()));
process.exit(0);
