// The stand-in's HTTP server: it records each request, refuses one that breaks the API's rules
// (rules/) with the real API's status and words, and answers a valid one with the next scripted
// step: a reply (JSON, or server-sent events when the request streams), an API error, a body as
// given, or a fault. A final answer to a request with a structured-output format must match its
// schema (conforms.mjs). See index.mjs for the step shapes.

import http from 'node:http';
import { cacheUsage } from './cache.mjs';
import { compactedUsage, compactionFor, pausedStep } from './compaction.mjs';
import { FORMAT_MISMATCH, answerMismatch } from './conforms.mjs';
import { contextManagementFor } from './context-editing.mjs';
import { echoed } from './echo.mjs';
import { ERROR_MESSAGES, ERROR_TYPES, Refusal, fail } from './errors.mjs';
import { fault } from './faults.mjs';
import { isRecorded, serveRecorded } from './recorded.mjs';
import { DEFAULT_USAGE, defaultStopReason, randomId, signed } from './replies.mjs';
import { CONTAINER_REQUIRED } from './rules/conversation.mjs';
import { checkHeaders, validateBody } from './rules/index.mjs';
import { streamMessage } from './sse.mjs';
import { assembled, createThreads } from './threads.mjs';
import { Answer } from './platforms/common.mjs';
import { createDoor } from './platforms/index.mjs';
import { has, isObject } from './values.mjs';

/** The real API's request size limit. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const NO_STEP_LEFT = 'mock-api: no scripted response left for this request';

/**
 * Reads the body, keeping at most MAX_BODY_BYTES; resolves null when the client went away. `bytes`:
 * the body as it arrived (a platform's signature covers the bytes, not their decoding).
 */
function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      done = true;
      const bytes = size > MAX_BODY_BYTES ? Buffer.alloc(0) : Buffer.concat(chunks);
      resolve({ tooLarge: size > MAX_BODY_BYTES, bytes, raw: bytes.toString('utf8') });
    });
    req.on('error', () => {
      if (!done) resolve(null);
      done = true;
    });
    req.on('close', () => {
      if (!done) resolve(null);
      done = true;
    });
  });
}

function parseRetryCount(value) {
  return value === undefined ? null : Number(Array.isArray(value) ? value[0] : value);
}

/**
 * Starts the stand-in. Options: `apiKey` (default 'sk-ant-test-key'; a list: each of its keys is
 * valid, and keys pushed onto it later too), `host` ('127.0.0.1'),
 * `port` (0 = any free port), `handler` (called when the script is empty), `logLevel`
 * ('silent' | 'info'; logs go to stderr), `streamDelayMs` (default pause between streamed events;
 * 0 = just yield to the event loop between them), `platform` (null: the Anthropic API; else the
 * cloud platform the server plays, a name or { type, …options }: platforms/index.mjs), `heldThreads`
 * ({ limit, holdEndTurn }: how many replies Threads hold at once, default threads.mjs' HELD_LIMIT,
 * the oldest expiring first; `holdEndTurn: false` holds no reply that ended its turn).
 */
export async function startMockApi({
  apiKey = 'sk-ant-test-key',
  host = '127.0.0.1',
  port = 0,
  handler = null,
  logLevel = 'silent',
  streamDelayMs = 0,
  platform = null,
  heldThreads = {},
} = {}) {
  const queue = [];
  /** Prompt-cache prefixes seen so far (see cacheUsage). */
  const cache = new Set();
  /** The conversations the API holds (threads.mjs), and each request's turn of one. */
  const threads = createThreads(heldThreads ?? {});
  const turns = new WeakMap();
  const sockets = new Set();
  const timers = new Set();
  const log = logLevel === 'silent' ? () => {} : (line) => process.stderr.write(`mock-api: ${line}\n`);

  const server = http.createServer();
  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 60_000;
  server.requestTimeout = 300_000;

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const api = {
    url: '',
    port: 0,
    server,
    requests: [],
    handler,
    /** The held threads (threads.mjs): `get(id)`, `set(id, state)`, `refuse(names)`, `size`. */
    threads,
    /** Appends steps; each valid POST /v1/messages consumes the next one. */
    script(...steps) {
      queue.push(...steps);
      return api;
    },
    /** How many scripted steps are still waiting. */
    get pending() {
      return queue.length;
    },
    /** Clears the script, the records, the handler, the prompt cache and the held threads. */
    reset() {
      queue.length = 0;
      api.requests.length = 0;
      api.handler = null;
      cache.clear();
      threads.clear();
    },
    /** Resolves once `predicate(api)` is true (checked every few ms); rejects after `timeoutMs`. */
    async waitFor(predicate, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(api)) {
        if (Date.now() > deadline) throw new Error(`mock-api: waited ${timeoutMs} ms for ${predicate}`);
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    },
    /** Resolves with the records once `n` requests have arrived; rejects after `timeoutMs`. */
    async waitForRequests(n, timeoutMs = 5000) {
      await api.waitFor(() => api.requests.length >= n, timeoutMs);
      return api.requests;
    },
    close,
  };
  /** The platform's front door (platforms/), or null for the Anthropic API's own. */
  const door = platform === null ? null : createDoor(platform, api);
  /** The door's controls for tests (e.g. `expireTokens()`), or null. */
  api.platform = door ? door.control : null;

  function headersFor(record, extra = {}) {
    return { 'content-type': 'application/json', ...(door ? door.headers(record) : { 'request-id': record.requestId }), ...extra };
  }

  /** Sends `payload`; `echo`: the text is an error's, which may echo the request (see echoed). */
  function send(res, record, status, payload, extraHeaders, echo = false) {
    if (res.destroyed || res.headersSent) return;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const body = echo ? echoed(text, record.headers) : text;
    record.status = status;
    res.writeHead(status, { ...headersFor(record, extraHeaders), 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  function sendError(res, record, status, error = {}, extraHeaders = {}) {
    const type = error.type ?? ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    const message = error.message ?? ERROR_MESSAGES[status] ?? `HTTP ${status}`;
    const shaped = door ? door.error(status, { ...error, message }, record) : null;
    if (shaped) return send(res, record, shaped.status, shaped.body, { ...shaped.headers, ...extraHeaders }, true);
    const headers = status === 429 ? { 'anthropic-ratelimit-requests-remaining': '0', ...extraHeaders } : extraHeaders;
    const body = { type, message, ...(has(error, 'details') ? { details: error.details } : {}) };
    send(res, record, status, { type: 'error', error: body, request_id: record.requestId }, headers, true);
  }

  /** The message a reply step sends; after a `compaction` (compaction.mjs) it starts with its block. */
  function messageFor(step, body, compaction = null) {
    const content = Array.isArray(step.content) ? step.content.map(signed) : step.content;
    const message = {
      id: typeof step.id === 'string' ? step.id : `${door?.idPrefix ?? 'msg_'}${randomId(24)}`,
      type: 'message',
      role: 'assistant',
      model: step.model ?? body?.model ?? 'claude-mock',
      content: compaction ? [compaction.block, ...content] : content,
      stop_reason: step.stop_reason ?? defaultStopReason(step.content),
      stop_sequence: step.stop_sequence ?? null,
    };
    if (has(step, 'stop_details')) message.stop_details = step.stop_details;
    message.usage = compaction ? compactedUsage(compaction, step.usage) : { ...DEFAULT_USAGE, ...cacheUsage(body, cache), ...(step.usage ?? {}) };
    if (has(step, 'container')) message.container = step.container;
    const managed = has(step, 'context_management') ? step.context_management : contextManagementFor(body);
    if (managed !== undefined) message.context_management = managed;
    return message;
  }

  /**
   * The compaction a reply step gets (null when the request asks for none or is below the
   * trigger, or when the step scripts its own compaction block).
   */
  function compactionOf(step, body) {
    if (Array.isArray(step.content) && step.content.some((b) => isObject(b) && b.type === 'compaction')) return null;
    return Array.isArray(step.content) ? compactionFor(body) : null;
  }

  /** Checks a step's expectations of the request; returns the refusal message, or null. */
  function unmet(step, body) {
    if (!has(step, 'requireContainer')) return null;
    const sent = isObject(body?.container) ? body.container.id : body?.container;
    if (sent === undefined || sent === null) return CONTAINER_REQUIRED;
    if (sent !== step.requireContainer) return `container: Container '${sent}' not found. This conversation continues container '${step.requireContainer}'.`;
    return null;
  }

  /** Answers a step `{ platformError: name }` as the platform would (platforms/index.mjs). */
  function platformFault(name, record, res) {
    const answer = door ? door.fault(name, record) : null;
    if (answer instanceof Answer) return send(res, record, answer.status, answer.body, answer.headers);
    if (answer instanceof Refusal) return sendError(res, record, answer.status, { type: answer.type, message: answer.message });
    return sendError(res, record, 500, { type: 'api_error', message: `mock-api: no platform error ${JSON.stringify(name)} on ${door?.name ?? 'the Anthropic API'}` });
  }

  /** What a fault needs of the server. */
  const faultContext = { headersFor, messageFor, answer, sendError, timers };
  /** Holds a whole reply in the thread of the request it answers (threads.mjs). */
  function hold(record, message, state) {
    threads.hold(turns.get(record), message, state);
  }
  /** What a recorded step needs of the server. */
  const recordedContext = { headersFor, sendError, timers, streamDelayMs, hold, assembled };

  /** Answers with `step`; `scripted`: it came off the script (a paused compaction puts it back). */
  async function answer(step, body, record, req, res, scripted = false) {
    try {
      while (typeof step === 'function') step = await step(body, record);
    } catch (err) {
      return sendError(res, record, 500, { type: 'api_error', message: `mock-api: a scripted step threw: ${err?.message ?? err}` });
    }
    if (!isObject(step)) {
      return sendError(res, record, 500, { type: 'api_error', message: `mock-api: a scripted step must be an object or a function, got ${JSON.stringify(step)}` });
    }
    const why = unmet(step, body);
    if (why !== null) record.broken = { message: why };
    if (why !== null) return sendError(res, record, 400, { type: 'invalid_request_error', message: why });
    if (has(step, 'fault')) return fault(faultContext, step, body, record, req, res);
    if (has(step, 'platformError')) return platformFault(step.platformError, record, res);
    if (isRecorded(step)) return serveRecorded(recordedContext, step, body, record, res);
    if (has(step, 'content')) {
      const compaction = compactionOf(step, body);
      // A compaction that pauses is the whole reply; the step answers the continuation (the
      // request that sends this reply back).
      if (compaction?.pause && scripted) queue.unshift(step);
      const answered = compaction?.pause ? pausedStep(compaction) : step;
      const message = messageFor(answered, body, compaction);
      const misfit = answered.ignoresFormat === true ? null : answerMismatch(body, message);
      if (misfit !== null) record.broken = { message: FORMAT_MISMATCH + misfit };
      if (misfit !== null) return sendError(res, record, 500, { type: 'api_error', message: FORMAT_MISMATCH + misfit });
      // What was answered, for tests that hold a client's view (a trace) to the reply's id.
      record.reply = message;
      const whole = () => hold(record, message, step.threadState);
      if (body?.stream === true) return (door?.stream ?? streamMessage)(message, answered, record, res, { defaultDelayMs: streamDelayMs, timers, whole });
      whole();
      return send(res, record, 200, message, answered.headers);
    }
    if (has(step, 'body')) return send(res, record, step.status ?? 200, step.body, step.headers, true);
    if (has(step, 'status') && step.status >= 300 && step.status < 400) {
      const headers = Object.fromEntries(Object.entries(step.headers ?? {}).map(([k, v]) => [k, echoed(String(v), record.headers)]));
      return send(res, record, step.status, '', headers);
    }
    if (has(step, 'status')) return sendError(res, record, step.status, step.error, step.headers);
    return sendError(res, record, 500, { type: 'api_error', message: `mock-api: unknown step shape: ${JSON.stringify(step)}` });
  }

  server.on('request', async (req, res) => {
    const record = {
      method: req.method,
      path: req.url,
      headers: { ...req.headers },
      body: null,
      rawBody: '',
      retryCount: parseRetryCount(req.headers['x-stainless-retry-count']),
      status: null,
      requestId: `req_${randomId(24)}`,
      /** The `anthropic-beta` header, split on commas. */
      betas: String(req.headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim()).filter(Boolean),
      /** The request's `container` (a string id), once the body is read. */
      container: undefined,
      /** `performance.now()` when the request arrived: tests read the waits between retries. */
      receivedAt: performance.now(),
    };
    api.requests.push(record);
    res.on('finish', () => log(`${record.method} ${record.path} -> ${record.status ?? 'fault'}`));

    const read = await readBody(req);
    if (read === null) return; // the client went away while sending
    if (read.tooLarge) {
      return sendError(res, record, 413, { message: `Request exceeds the maximum allowed number of bytes (${MAX_BODY_BYTES}).` }, { connection: 'close' });
    }
    record.rawBody = read.raw;
    let parsed;
    let parseError = null;
    let turn = null;
    try {
      parsed = JSON.parse(read.raw);
      record.body = parsed;
      if (isObject(parsed)) record.container = parsed.container;
    } catch (err) {
      parseError = err;
    }

    try {
      let version;
      if (door) {
        // The platform's front door: its path and caller, then the first-party request it carries.
        record.platform = door.name;
        ({ body: parsed, version } = door.admit(req, record, read.bytes, parsed, parseError));
      } else {
        const pathname = req.url.split('?')[0];
        if (pathname !== '/v1/messages') throw new Refusal(404, `mock-api: no route ${req.method} ${pathname}; only POST /v1/messages exists`);
        if (req.method !== 'POST') throw new Refusal(405, `mock-api: method ${req.method} is not allowed on /v1/messages; use POST`);
        version = checkHeaders(req, apiKey);
        if (parseError) fail(`There was an error parsing the body of your request: ${parseError.message}`);
      }
      turn = threads.open(parsed, record.betas);
      validateBody(turn ? turn.full : parsed, record.betas, version);
    } catch (err) {
      if (err instanceof Answer) {
        if (err.status >= 400) record.broken = { message: err.message };
        return send(res, record, err.status, err.body, err.headers);
      }
      if (!(err instanceof Refusal)) {
        return sendError(res, record, 500, { type: 'api_error', message: `mock-api: internal error while validating: ${err?.message ?? err}` });
      }
      record.broken = { message: err.message, code: err.details?.error_code };
      const extra = err.status === 405 ? { allow: 'POST' } : {};
      return sendError(res, record, err.status, { type: err.type, message: err.message, details: err.details }, extra);
    }
    // The model reads the whole conversation: with a thread, the held one and this request's messages.
    const full = turn ? turn.full : parsed;
    record.fullBody = full;
    if (turn) {
      turns.set(record, turn);
      threads.begin(turn);
      res.on('close', () => threads.end(turn));
    }

    let step;
    const scripted = queue.length > 0;
    if (scripted) step = queue.shift();
    else if (typeof api.handler === 'function') step = api.handler;
    else {
      record.broken = { message: NO_STEP_LEFT };
      return sendError(res, record, 500, { type: 'api_error', message: NO_STEP_LEFT });
    }
    return answer(step, full, record, req, res, scripted);
  });

  let closing = null;
  /** Stops the server and destroys every socket (keep-alive, hanging, stalled); never hangs. */
  function close() {
    if (closing) return closing;
    closing = new Promise((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const fallback = setTimeout(resolve, 2000);
      fallback.unref();
      server.close(() => {
        clearTimeout(fallback);
        resolve();
      });
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections?.();
    });
    return closing;
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  api.port = address.port;
  api.url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  return api;
}
