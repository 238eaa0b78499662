// Recorded replies: a real Messages API response served exactly as it was recorded, so a test
// replays what the API really sent (blocks, keys and usage the builders would never produce)
// instead of what we think it sends. The request is still checked against every rule first.
//
//   { recorded: <message object> }            answers a non-streamed request with that JSON
//   { recordedEvents: [<event objects>] }     answers a streamed one: each event, in order, as
//                                             `event: <its type>\ndata: <its JSON>\n\n`
//
// A recording is one of the two; a request that streams scripted with a JSON recording (or the
// other way round) is a test bug, answered with a 500 saying so rather than converted: a
// conversion would be ours, not the API's.

import { sseFrame } from './sse.mjs';
import { has, isObject } from './values.mjs';

/** Whether a step is a recording (handled here, not by the builders' path). */
export const isRecorded = (step) => has(step, 'recorded') || has(step, 'recordedEvents');

/** Why a recorded step cannot answer this request, or null. */
function mismatch(step, streams) {
  if (has(step, 'recorded') && has(step, 'recordedEvents')) {
    return 'a recorded step holds either `recorded` (a JSON message) or `recordedEvents` (a stream), not both';
  }
  if (has(step, 'recorded')) {
    if (!isObject(step.recorded)) return `\`recorded\` must be a message object, got ${JSON.stringify(step.recorded)}`;
    if (streams) return 'the request streams (stream: true) but the step is a JSON recording (`recorded`); script `recordedEvents` for a streamed request';
    return null;
  }
  const events = step.recordedEvents;
  if (!Array.isArray(events) || events.length === 0) return '`recordedEvents` must be a non-empty list of event objects';
  const bad = events.findIndex((e) => !isObject(e) || typeof e.type !== 'string');
  if (bad >= 0) return `\`recordedEvents[${bad}]\` is not an event object with a string \`type\`: ${JSON.stringify(events[bad])}`;
  if (!streams) return 'the request does not stream but the step is a streamed recording (`recordedEvents`); script `recorded` for a non-streamed request';
  return null;
}

/**
 * Answers `body` with the recorded step. `ctx` is the server's: `headersFor(record)`,
 * `sendError(res, record, status, error)`, the `timers` close() clears, the server's
 * `streamDelayMs` (a step's own `streamDelayMs` wins), the pause between two events, and
 * `hold(record, message, state)` with `assembled(events)`: a thread holds the recorded reply once
 * it is whole, as it holds a built one.
 */
export async function serveRecorded(ctx, step, body, record, res) {
  const why = mismatch(step, body?.stream === true);
  if (why !== null) return ctx.sendError(res, record, 500, { type: 'api_error', message: `mock-api: ${why}` });
  if (has(step, 'recorded')) {
    const text = JSON.stringify(step.recorded);
    ctx.hold(record, step.recorded, step.threadState);
    record.status = 200;
    res.writeHead(200, { ...ctx.headersFor(record), 'content-length': Buffer.byteLength(text) });
    return res.end(text);
  }
  const delay = step.streamDelayMs ?? ctx.streamDelayMs;
  record.status = 200;
  record.stream = true;
  record.clientClosed = false;
  record.sseEvents = [];
  res.on('close', () => {
    if (!res.writableFinished) record.clientClosed = true;
  });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': record.requestId });
  for (const [i, event] of step.recordedEvents.entries()) {
    if (i > 0) await pause(delay, ctx.timers);
    if (res.destroyed) return;
    record.sseEvents.push(event.type);
    // Held as its last event goes out, before the client can continue it.
    if (event.type === 'message_stop') ctx.hold(record, ctx.assembled(step.recordedEvents), step.threadState);
    if (!res.write(sseFrame(event.type, event))) {
      await new Promise((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
    }
  }
  if (!res.destroyed) res.end();
}

/** A pause between two events: a timer close() can clear, or just a turn of the event loop. */
function pause(ms, timers) {
  return new Promise((resolve) => {
    if (ms <= 0) return setImmediate(resolve);
    const timer = setTimeout(() => { timers.delete(timer); resolve(); }, ms);
    timers.add(timer);
  });
}
