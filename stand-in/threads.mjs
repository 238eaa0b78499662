// Threads (beta message-threads-2026-08-12): the conversation the API holds between turns, so a
// client sends only what is new. A request with `thread: { type: 'create' }` has its whole
// conversation (system, tools, messages and the reply) held under the reply's `id`; one with
// `{ type: 'continue', previous_message_id }` sends only the messages after that reply, which the
// server puts after what it holds before every usual rule applies to the whole conversation.
//
//   - each reply is continued at most once (`thread_already_continued`), by one request at a time
//     (`thread_continue_in_flight`); an id the server does not hold is `thread_not_found` (404);
//   - `system` and `tools` are the thread's: a continue leaves them out (or repeats them as they
//     were); a different value is `thread_fingerprint_mismatch`, naming the field;
//   - `messages: []` continues only a reply that did not finish its turn (pause_turn, compaction):
//     the reply that continues it joins that turn's assistant message, as a client joins them;
//   - a reply is held once it is whole: a stream cut before message_stop holds nothing, and the
//     reply it continued may be continued again; a reply a fallback model wrote (a
//     `fallback_message` usage iteration) is not held either, though it spent the one it continued;
//   - `thread_unsupported_request` (its `details.unsupported` naming why) for what a test says
//     Threads do not support (`refuse(names)`: a request field — `thinking`, `context_management`,
//     `cache_control` anywhere — refused where the request has it; any other name an organization
//     setting, refusing every thread request).
// Every refusal carries `error.details.error_code`, as the API's do. The held state lives in memory,
// per stand-in, at most `limit` conversations (HELD_LIMIT unless the stand-in is told otherwise;
// the oldest expire first, as the API's do: a continue of one is thread_not_found). `holdEndTurn:
// false` (the bench's) holds no reply that ended its turn: nobody there sends a conversation's next
// turn, and holding each finished run's whole conversation was most of the stand-in's heap.

import { Refusal, fail } from './errors.mjs';
import { onlyKeys } from './rules/fields.mjs';
import { blocksOf, has, isObject } from './values.mjs';

export const THREADS_BETA = 'message-threads-2026-08-12';

/** Conversations held at once by default; a continued reply keeps only a mark that it was. */
export const HELD_LIMIT = 20_000;
/** Stop reasons of a reply whose turn is not finished: `messages: []` continues it. */
const UNFINISHED = new Set(['pause_turn', 'compaction']);
/** Request fields Threads may refuse, by the name `details.unsupported` gives them. */
const FIELD_FEATURES = new Set(['thinking', 'context_management', 'cache_control']);

export const EMPTY_CONTINUE =
  'messages: at least one message is required (an empty list only continues a reply that stopped with pause_turn or compaction)';

function refuse(status, code, message, extra = {}) {
  throw new Refusal(status, message, undefined, { error_code: code, ...extra });
}

/** Whether the request uses `feature` (a name of `details.unsupported`). */
function uses(body, feature) {
  if (!FIELD_FEATURES.has(feature)) return true;
  if (feature === 'cache_control') return JSON.stringify(body).includes('"cache_control"');
  if (feature === 'thinking') return isObject(body.thinking) && body.thinking.type !== 'disabled';
  return has(body, feature) && body[feature] !== null;
}

/** The conversation held after `reply` answered `messages`: a reply to a final assistant message continues it. */
function withReply(messages, reply) {
  const last = messages.at(-1);
  if (isObject(last) && last.role === 'assistant') {
    const before = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : blocksOf(last);
    return [...messages.slice(0, -1), { role: 'assistant', content: [...before, ...reply.content] }];
  }
  return [...messages, { role: 'assistant', content: reply.content }];
}

/** The held threads of one stand-in (at most `limit` replies), and what its tests may do to them. */
export function createThreads({ limit = HELD_LIMIT, holdEndTurn = true } = {}) {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`heldThreads.limit: a whole number of at least 1, not ${limit}`);
  if (typeof holdEndTurn !== 'boolean') throw new TypeError(`heldThreads.holdEndTurn: true or false, not ${holdEndTurn}`);
  /** id → { system, tools, messages, unfinished, state: 'held' | 'continued' | 'in_flight' | 'lost', flight } */
  const held = new Map();
  let unsupported = [];

  function keep(id, entry) {
    held.delete(id);
    held.set(id, entry);
    if (held.size > limit) held.delete(held.keys().next().value);
  }

  return {
    /** How many replies are held (continued ones included). */
    get size() {
      return held.size;
    },
    /** The held conversation of reply `id` (its `messages`, `system`, `tools`, `state`), or undefined. */
    get: (id) => held.get(id),
    /** Makes Threads refuse what `names` name (see above); `[]` refuses nothing again. */
    refuse(names) {
      unsupported = [...names];
    },
    /** Puts the held reply `id` in `state`: 'lost' (forgotten), 'continued', 'in_flight' or 'held'. */
    set(id, state) {
      const entry = held.get(id);
      if (state === 'lost') held.delete(id);
      else if (entry) entry.state = state;
      else if (state !== 'held') keep(id, { state });
    },
    /** Forgets every thread and refusal. */
    clear() {
      held.clear();
      unsupported = [];
    },

    /**
     * The request's turn: null without `thread`, else `{ full, previous }` — the whole conversation
     * the rules check (the held one with this request's messages after it), and the reply it
     * continues. Throws the API's refusal.
     */
    open(body, betas) {
      if (!isObject(body) || !has(body, 'thread') || body.thread === null) return null;
      if (!betas.includes(THREADS_BETA)) fail('thread: Extra inputs are not permitted');
      const thread = body.thread;
      if (!isObject(thread)) fail('thread: Input should be a valid dictionary');
      if (thread.type !== 'create' && thread.type !== 'continue') {
        fail(`thread: Input tag '${thread.type}' found using 'type' does not match any of the expected tags: 'create', 'continue'`);
      }
      const { thread: _, ...full } = body;
      if (thread.type === 'create') {
        onlyKeys(thread, new Set(['type']), 'thread.create.');
      } else {
        onlyKeys(thread, new Set(['type', 'previous_message_id']), 'thread.continue.');
        if (!has(thread, 'previous_message_id')) fail('thread.continue.previous_message_id: Field required');
        if (typeof thread.previous_message_id !== 'string') fail('thread.continue.previous_message_id: Input should be a valid string');
      }
      const refused = unsupported.filter((name) => uses(body, name));
      if (refused.length > 0) {
        refuse(400, 'thread_unsupported_request', `thread: Threads do not support ${refused.join(', ')}. Send the full conversation without \`thread\`, or change that field.`, { unsupported: refused });
      }
      if (thread.type === 'create') return { full, previous: null };
      const id = thread.previous_message_id;
      const entry = held.get(id);
      if (!entry || entry.state === 'lost') {
        refuse(404, 'thread_not_found', `thread: No usable Thread state was found for previous_message_id ${JSON.stringify(id)}. Replay the full conversation with thread: {"type": "create"} to start a new Thread.`);
      }
      if (entry.state === 'continued') {
        refuse(400, 'thread_already_continued', `thread: The response ${id} has already been continued, and each response can be continued only once. Continue from the Thread's most recent response id.`);
      }
      if (entry.state === 'in_flight') {
        refuse(400, 'thread_continue_in_flight', `thread: Another request is still continuing from ${id}. Wait for it to complete and continue from its response id, or replay the full conversation with thread: {"type": "create"}.`);
      }
      const differ = ['system', 'tools'].filter((f) => has(body, f) && JSON.stringify(body[f]) !== JSON.stringify(entry[f]));
      if (differ.length > 0) {
        refuse(400, 'thread_fingerprint_mismatch', `thread: ${differ.map((f) => `\`${f}\``).join(' and ')} differ${differ.length === 1 ? 's' : ''} from the value stored with the Thread. Send the stored values, or replay the full conversation with thread: {"type": "create"} to change them.`);
      }
      if (!has(body, 'messages')) fail('messages: Field required');
      if (!Array.isArray(body.messages)) fail('messages: Input should be a valid list');
      if (body.messages.length === 0 && !entry.unfinished) fail(EMPTY_CONTINUE);
      for (const f of ['system', 'tools']) {
        if (!has(full, f) && entry[f] !== undefined) full[f] = entry[f];
      }
      full.messages = [...entry.messages, ...body.messages];
      return { full, previous: id };
    },

    /** The turn's request is being answered: the reply it continues is in flight until `end`. */
    begin(turn) {
      const entry = turn?.previous ? held.get(turn.previous) : undefined;
      if (entry) {
        entry.state = 'in_flight';
        entry.flight = turn;
      }
    },

    /**
     * The turn's reply is whole (sent, or streamed to its message_stop): the conversation with it is
     * held under its id, in `state` (a test's `threadState`, else 'held'), and the reply it continued
     * is spent.
     */
    hold(turn, message, state = 'held') {
      if (!turn || !isObject(message) || typeof message.id !== 'string' || !Array.isArray(message.content)) return;
      turn.held = true;
      const before = turn.previous ? held.get(turn.previous) : undefined;
      if (before) keep(turn.previous, { state: 'continued' });
      const fallback = Array.isArray(message.usage?.iterations) && message.usage.iterations.some((it) => it?.type === 'fallback_message');
      if (state === 'lost' || fallback || (!holdEndTurn && message.stop_reason === 'end_turn')) return;
      keep(message.id, {
        system: turn.full.system,
        tools: turn.full.tools,
        messages: withReply(turn.full.messages, message),
        unfinished: UNFINISHED.has(message.stop_reason),
        state,
      });
    },

    /** The turn's request is over: a reply it continued and did not replace may be continued again. */
    end(turn) {
      const entry = turn?.previous ? held.get(turn.previous) : undefined;
      if (entry && entry.flight === turn && entry.state === 'in_flight' && !turn.held) entry.state = 'held';
    },
  };
}

/**
 * A streamed reply put together from its events (message_start, the blocks and their deltas,
 * message_delta), for the thread to hold: null unless it reached message_stop.
 */
export function assembled(events) {
  let message = null;
  const json = new Map();
  for (const event of events) {
    if (!isObject(event)) continue;
    // A message_start may carry whole blocks already (a code-called tool's turn does).
    if (event.type === 'message_start' && isObject(event.message)) message = { ...event.message, content: Array.isArray(event.message.content) ? [...event.message.content] : [] };
    if (!message) continue;
    if (event.type === 'content_block_start') message.content[event.index] = { ...event.content_block };
    if (event.type === 'content_block_delta' && isObject(message.content[event.index])) {
      const block = message.content[event.index];
      const d = event.delta ?? {};
      if (d.type === 'text_delta') block.text = (block.text ?? '') + d.text;
      else if (d.type === 'thinking_delta') block.thinking = (block.thinking ?? '') + d.thinking;
      else if (d.type === 'signature_delta') block.signature = d.signature;
      else if (d.type === 'citations_delta') block.citations = [...(block.citations ?? []), d.citation];
      else if (d.type === 'input_json_delta') json.set(event.index, (json.get(event.index) ?? '') + d.partial_json);
      else if (d.type === 'compaction_delta') Object.assign(block, { content: d.content }, has(d, 'encrypted_content') ? { encrypted_content: d.encrypted_content } : {});
    }
    if (event.type === 'content_block_stop' && json.has(event.index)) {
      try {
        message.content[event.index].input = JSON.parse(json.get(event.index) || '{}');
      } catch {
        return null;
      }
    }
    if (event.type === 'message_delta') Object.assign(message, event.delta ?? {});
    if (event.type === 'message_stop') return message;
  }
  return null;
}
