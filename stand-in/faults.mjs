// Faults a scripted step can inject: a reset or hanging connection, an HTML gateway page, JSON
// that is broken, of the wrong shape, truncated or stalled, a huge body, or a delayed answer.

import { reply, text } from './replies.mjs';

const HTML_PAGE =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n' +
  '<body><center><h1>502 Bad Gateway</h1></center><hr><center>mock-api proxy</center></body></html>\n';

/**
 * Answers with the step's `fault` instead of a well-formed reply. `ctx` is the server's:
 * `headersFor(record)`, `messageFor(step, body)`, `answer(step, …)` (for `delay`'s `then`),
 * `sendError(res, record, status, error)` and the `timers` close() clears.
 */
export function fault(ctx, step, body, record, req, res) {
  const { headersFor, messageFor, answer, sendError, timers } = ctx;
  const socket = req.socket;
  record.status = null;
  switch (step.fault) {
    case 'reset':
      socket.destroy();
      return;
    case 'hang':
      return; // the socket stays open until the client gives up or close() runs
    case 'html':
      res.writeHead(step.status ?? 200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(HTML_PAGE) });
      res.end(HTML_PAGE);
      return;
    case 'badjson': {
      const bad = '{"type":"message",';
      res.writeHead(200, { ...headersFor(record), 'content-length': Buffer.byteLength(bad) });
      res.end(bad);
      return;
    }
    case 'wrong-shape': {
      const shape = JSON.stringify(step.body ?? { hello: 1 });
      res.writeHead(200, { ...headersFor(record), 'content-length': Buffer.byteLength(shape) });
      res.end(shape);
      return;
    }
    case 'truncated':
    case 'stall-body': {
      const full = Buffer.from(JSON.stringify(messageFor(reply([text('This body never arrives in full.')]), body)));
      const half = full.subarray(0, Math.floor(full.length / 2));
      res.writeHead(200, { ...headersFor(record), 'content-length': full.length + (step.fault === 'truncated' ? 1000 : 0) });
      if (step.fault === 'truncated') res.write(half, () => socket.destroy());
      else res.write(half); // and never finish: the socket stays open until the client gives up or close()
      return;
    }
    case 'huge':
      return streamHuge(ctx, step, body, record, res);
    case 'delay': {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) answer(step.then, body, record, req, res);
      }, step.ms ?? 0);
      timers.add(timer);
      res.on('close', () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
      return;
    }
    default:
      return sendError(res, record, 500, { type: 'api_error', message: `mock-api: unknown fault ${JSON.stringify(step.fault)}` });
  }
}

/** A valid message of `bytes` (default 50 MB), written in chunks with backpressure. */
function streamHuge({ headersFor, messageFor }, step, body, record, res) {
  const size = step.bytes ?? 50 * 1024 * 1024;
  const message = messageFor(reply([text('')]), body);
  const [before, after] = JSON.stringify(message).split('"text":""');
  const head = Buffer.from(`${before}"text":"`);
  const tail = Buffer.from(`"${after}`);
  let left = Math.max(0, size - head.length - tail.length);
  const chunk = Buffer.alloc(256 * 1024, 'a');
  const headers = headersFor(record);
  if (!step.chunked) headers['content-length'] = head.length + left + tail.length;
  res.writeHead(200, headers);
  res.write(head);
  const pump = () => {
    while (left > 0) {
      if (res.destroyed) return; // the client went away
      const n = Math.min(left, chunk.length);
      left -= n;
      if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end(tail);
  };
  pump();
}
