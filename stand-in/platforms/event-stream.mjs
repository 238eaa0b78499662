// AWS's event-stream framing, which Bedrock's invoke-with-response-stream answers in, written
// from AWS's description of the format:
//
//   total length (u32 BE) | headers length (u32 BE) | CRC32 of those 8 bytes (u32 BE)   the prelude
//   headers: { name length (u8) | name | type (u8) | value }…   a string is type 7, u16 BE length, bytes
//   payload
//   CRC32 of every byte before it (u32 BE)                                               the message CRC
//
// CRC32 is the IEEE one zlib uses. Each Messages API stream event goes out as a `chunk` event whose
// JSON payload is { bytes: base64(event JSON), p: padding }; pings are not sent, and message_stop
// carries `amazon-bedrock-invocationMetrics`. Frames are written in small slices of random size, as
// they can arrive from AWS, so a client that does not buffer across reads fails here.

import { randomInt } from 'node:crypto';
import { echoed } from '../echo.mjs';
import { paceEvents, sseEvents } from '../sse.mjs';

// The CRC32 table is built here (zlib.crc32 is only in newer Node releases than the package supports).
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The IEEE CRC32 of `bytes`. */
export function crc32(bytes) {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const STRING_TYPE = 7;

/** One frame: `headers` an object of string headers, `payload` a Buffer or a string. */
export function encodeFrame(headers, payload) {
  const parts = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(String(value), 'utf8');
    const head = Buffer.alloc(1 + n.length + 1 + 2);
    head.writeUInt8(n.length, 0);
    n.copy(head, 1);
    head.writeUInt8(STRING_TYPE, 1 + n.length);
    head.writeUInt16BE(v.length, 2 + n.length);
    parts.push(head, v);
  }
  const headerBytes = Buffer.concat(parts);
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  const total = 12 + headerBytes.length + body.length + 4;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(headerBytes.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  headerBytes.copy(frame, 12);
  body.copy(frame, 12 + headerBytes.length);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - 4)), total - 4);
  return frame;
}

/** A `chunk` frame carrying one stream event, with padding of random length. */
export function chunkFrame(event) {
  const padding = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.slice(0, randomInt(1, 40));
  const payload = JSON.stringify({ bytes: Buffer.from(JSON.stringify(event), 'utf8').toString('base64'), p: padding });
  return encodeFrame({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, payload);
}

/** An `exception` frame: `type` as the frame names it (camel case, e.g. `throttlingException`). */
export function exceptionFrame(type, message, extra = {}) {
  const payload = JSON.stringify({ message, ...extra });
  return encodeFrame({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, payload);
}

/** The exception frame type for an API error type a test scripts with `sseError`. */
const EXCEPTION_FOR = {
  overloaded_error: 'serviceUnavailableException',
  api_error: 'internalServerException',
  rate_limit_error: 'throttlingException',
  invalid_request_error: 'validationException',
  timeout_error: 'modelTimeoutException',
};

/**
 * Streams `message` as event-stream frames on `res`: the server's streaming entry for Bedrock
 * (same arguments as sse.mjs's streamMessage, same step options: pacing, `sseError` as an
 * exception frame, `sseCutAfter`, `sseStallAfter`). `headers(record)` gives the response headers.
 */
export function bedrockStreamer(headers) {
  return async function streamFrames(message, step, record, res, { defaultDelayMs, timers, whole = () => {} }) {
    const started = Date.now();
    const head = { ...headers(record), 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-content-type': 'application/json', ...(step.headers ?? {}) };
    /** A frame in slices of 1 to 64 bytes, each its own write. */
    const writeSliced = async (write, frame) => {
      for (let at = 0; at < frame.length;) {
        const n = Math.min(frame.length - at, randomInt(1, 65));
        if (!(await write(frame.subarray(at, at + n)))) return false;
        at += n;
      }
      return true;
    };
    await paceEvents(sseEvents(message).filter(([name]) => name !== 'ping'), step, record, res, {
      head,
      defaultDelayMs,
      timers,
      writeError: (write) => {
        const type = EXCEPTION_FOR[step.sseError.type] ?? step.sseError.type ?? 'internalServerException';
        record.sseEvents.push('exception');
        const text = echoed(step.sseError.message ?? 'The system encountered an unexpected error during processing. Try your request again.', record.headers);
        return writeSliced(write, exceptionFrame(type, text));
      },
      writeEvent: (name, data, write) => {
        if (name === 'message_stop') {
          const latency = Date.now() - started;
          data = {
            ...data,
            'amazon-bedrock-invocationMetrics': {
              inputTokenCount: message.usage?.input_tokens ?? 0,
              outputTokenCount: message.usage?.output_tokens ?? 0,
              invocationLatency: latency,
              firstByteLatency: Math.min(latency, 1),
            },
          };
          whole();
        }
        return writeSliced(write, chunkFrame(data));
      },
    });
  };
}
