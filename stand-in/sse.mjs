// Streaming: a reply as the Messages API's server-sent events, written with the step's pacing and
// its injected faults (an error event, a cut connection, a stall).

import { echoed } from './echo.mjs';
import { has, isObject } from './values.mjs';

const TEXT_CHUNKS = [3, 5, 2, 7, 4];
const JSON_CHUNKS = [6, 9, 4, 11];

/** `s` in small pieces of cycling sizes, split between code points (never inside a surrogate pair). */
function pieces(s, sizes) {
  const chars = Array.from(s);
  const out = [];
  for (let at = 0, k = 0; at < chars.length; k++) {
    const n = sizes[k % sizes.length];
    out.push(chars.slice(at, at + n).join(''));
    at += n;
  }
  return out;
}

/** A block's `content_block_start` payload and its deltas; unknown and result blocks come whole. */
function streamBlock(block) {
  if (!isObject(block)) return { start: block, deltas: [] };
  switch (block.type) {
    case 'text': {
      const start = { ...block, text: '' };
      const deltas = [];
      if (Array.isArray(block.citations)) {
        start.citations = [];
        for (const citation of block.citations) deltas.push({ type: 'citations_delta', citation });
      }
      for (const t of pieces(String(block.text ?? ''), TEXT_CHUNKS)) deltas.push({ type: 'text_delta', text: t });
      return { start, deltas };
    }
    case 'thinking': {
      const deltas = pieces(String(block.thinking ?? ''), TEXT_CHUNKS).map((t) => ({ type: 'thinking_delta', thinking: t }));
      deltas.push({ type: 'signature_delta', signature: block.signature });
      return { start: { ...block, thinking: '', signature: '' }, deltas };
    }
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use': {
      const json = JSON.stringify(block.input ?? {});
      const deltas = ['', ...pieces(json, JSON_CHUNKS)].map((partial_json) => ({ type: 'input_json_delta', partial_json }));
      return { start: { ...block, input: {} }, deltas };
    }
    case 'compaction': {
      // As the API streams it: the block starts without its summary, and one delta carries the
      // final `content` (and `encrypted_content`), to be assigned, not appended.
      const start = { type: block.type, content: null };
      for (const [key, value] of Object.entries(block)) if (key !== 'content' && key !== 'encrypted_content') start[key] = value;
      const delta = { type: 'compaction_delta', content: block.content ?? null };
      if (has(block, 'encrypted_content')) delta.encrypted_content = block.encrypted_content;
      return { start, deltas: [delta] };
    }
    default:
      return { start: block, deltas: [] };
  }
}

/**
 * The events of a streamed reply, as `[event name, data]`: message_start (empty content, no stop
 * reason, input usage), ping, per block content_block_start / _delta… / _stop (a ping after every
 * second block), message_delta (stop reason, stop_sequence, stop_details and container when the
 * message has them, cumulative usage with its `iterations`; beside them the message's
 * `context_management`), message_stop. With usage iterations (a compaction), message_start's input
 * tokens are the first iteration's, as the API sends them. `unknownDelta` injects a delta of that
 * type into the first block. Reassembled the way the official SDK's MessageStream does, the events
 * give back `message` exactly (same keys, same order; a compaction block's `encrypted_content`
 * comes last).
 */
export function sseEvents(message, { unknownDelta } = {}) {
  const start = { ...message, content: [], stop_reason: null, stop_sequence: null };
  if (has(start, 'stop_details')) start.stop_details = null;
  delete start.container;
  delete start.context_management;
  const { iterations, ...usage } = message.usage ?? {};
  start.usage = { ...usage, output_tokens: Math.min(1, message.usage?.output_tokens ?? 0) };
  if (Array.isArray(iterations) && isObject(iterations[0])) start.usage.input_tokens = iterations[0].input_tokens;
  const events = [['message_start', { type: 'message_start', message: start }], ['ping', { type: 'ping' }]];
  const unknown = (index) => ['content_block_delta', { type: 'content_block_delta', index, delta: { type: unknownDelta } }];
  if (unknownDelta && message.content.length === 0) events.push(unknown(0));
  message.content.forEach((block, index) => {
    const { start: first, deltas } = streamBlock(block);
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: first }]);
    if (unknownDelta && index === 0) events.push(unknown(0));
    for (const delta of deltas) events.push(['content_block_delta', { type: 'content_block_delta', index, delta }]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    if (index % 2 === 1) events.push(['ping', { type: 'ping' }]);
  });
  const delta = { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence };
  if (has(message, 'stop_details')) delta.stop_details = message.stop_details;
  if (has(message, 'container')) delta.container = message.container;
  const last = { type: 'message_delta', delta, usage: { ...message.usage } };
  if (has(message, 'context_management')) last.context_management = message.context_management;
  events.push(['message_delta', last]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}


export const sseFrame = (name, data) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

const SSE_ERROR_MESSAGES = {
  overloaded_error: 'Overloaded',
  api_error: 'Internal server error',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  invalid_request_error: 'Invalid request',
};

/**
 * Streams `message` as server-sent events on `res`, with the step's pacing (`streamDelayMs`, else
 * `defaultDelayMs`) and injected faults; pauses are timers kept in `timers` so close() can clear them.
 * `whole()` is called as message_stop is written: the reply is then whole (a thread holds it).
 */
export async function streamMessage(message, step, record, res, { defaultDelayMs, timers, whole = () => {} }) {
  const head = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': record.requestId, ...(step.headers ?? {}) };
  await paceEvents(sseEvents(message, { unknownDelta: step.unknownDelta }), step, record, res, {
    head,
    defaultDelayMs,
    timers,
    writeError: (write) => {
      const type = step.sseError.type ?? 'overloaded_error';
      const error = { type, message: step.sseError.message ?? SSE_ERROR_MESSAGES[type] ?? type };
      if (has(step.sseError, 'details')) error.details = step.sseError.details;
      record.sseEvents.push('error');
      return write(echoed(sseFrame('error', { type: 'error', error }), record.headers));
    },
    writeEvent: (name, data, write) => {
      // Held as its last event goes out, before the client can continue it.
      if (name === 'message_stop') whole();
      return write(sseFrame(name, data));
    },
  });
}

/**
 * Writes a stream's `events` on `res` (with `head` as its 200 response's headers), paced by the
 * step (`streamDelayMs`, else `defaultDelayMs`; pauses are timers kept in `timers`) and with its
 * injected faults: `sseError` (`writeError(write)` at `sseErrorAfter`), `sseCutAfter` (the
 * connection destroyed), `sseStallAfter` (open and silent). Each event is recorded in
 * `record.sseEvents` and written by `writeEvent(name, data, write)`; `write(chunk)` resolves
 * false once the client is gone. Both the SSE stream and Bedrock's event-stream frames use it.
 */
export async function paceEvents(events, step, record, res, { head, defaultDelayMs, timers, writeError, writeEvent }) {
  const delay = step.streamDelayMs ?? defaultDelayMs;
  const errorAt = has(step, 'sseError') ? (step.sseErrorAfter ?? 0) : -1;
  const cutAt = has(step, 'sseCutAfter') ? step.sseCutAfter : -1;
  const stallAt = has(step, 'sseStallAfter') ? step.sseStallAfter : -1;
  record.status = 200;
  record.stream = true;
  record.clientClosed = false;
  record.sseEvents = [];
  let cut = false;
  res.on('close', () => {
    if (!res.writableFinished && !cut) record.clientClosed = true;
  });
  res.writeHead(200, head);
  const write = async (chunk) => {
    if (res.destroyed) return false;
    if (!res.write(chunk)) await new Promise((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
    return !res.destroyed;
  };
  const pause = () => new Promise((resolve) => {
    if (delay <= 0) return setImmediate(resolve);
    const timer = setTimeout(() => { timers.delete(timer); resolve(); }, delay);
    timers.add(timer);
  });
  for (let i = 0; i <= events.length; i++) {
    if (i === errorAt) {
      if (await writeError(write)) res.end();
      return;
    }
    if (i === cutAt) {
      cut = true;
      res.socket?.destroy();
      return;
    }
    if (i === stallAt) return; // open and silent until the client gives up or close() runs
    if (i === events.length) break;
    if (i > 0) await pause();
    if (res.destroyed) return;
    const [name, data] = events[i];
    record.sseEvents.push(name);
    if (!(await writeEvent(name, data, write))) return;
  }
  res.end();
}
