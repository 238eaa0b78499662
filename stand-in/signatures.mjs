// Signed thinking: the stand-in signs the thinking and redacted_thinking blocks it sends, so a
// block that comes back changed (or forged) is refused, as the real API refuses it.

import { createHmac } from 'node:crypto';

/**
 * The key the stand-in signs thinking blocks with. Fixed, so a block built in one process is valid
 * for a stand-in running in another (the CLI); the real API's signatures are opaque too.
 */
const SIGNING_KEY = 'mock-api-thinking-signing-key';

/** The signature of a thinking block: base64 of HMAC-SHA256 over its text. */
export function signThinking(thinkingText) {
  return createHmac('sha256', SIGNING_KEY).update(`thinking\0${thinkingText}`).digest('base64');
}

/** Whether a thinking block carries the signature the stand-in gave its text. */
export function validSignature(block) {
  return typeof block.signature === 'string' && typeof block.thinking === 'string' && block.signature === signThinking(block.thinking);
}

/** Signed redacted data: base64 of the payload followed by its 32-byte HMAC. */
export function signRedacted(payload) {
  const bytes = Buffer.from(payload, 'utf8');
  const mac = createHmac('sha256', SIGNING_KEY).update('redacted\0').update(bytes).digest();
  return Buffer.concat([bytes, mac]).toString('base64');
}

/** Whether `data` is redacted data the stand-in signed (base64, payload then a valid HMAC). */
export function validRedactedData(data) {
  if (typeof data !== 'string' || data.length === 0) return false;
  const raw = Buffer.from(data, 'base64');
  if (raw.length < 32 || raw.toString('base64') !== data) return false;
  const payload = raw.subarray(0, raw.length - 32);
  const mac = createHmac('sha256', SIGNING_KEY).update('redacted\0').update(payload).digest();
  return mac.equals(raw.subarray(raw.length - 32));
}
