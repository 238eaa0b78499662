// The API key appears nowhere but the auth header. Shared by the suites that check it along the
// way (schema conformance, wire faults, worker threads, soak).
import assert from 'node:assert/strict'
import { KEY } from './helpers.mjs'

const AUTH_HEADERS = new Set(['x-api-key', 'authorization'])

/** Throws when `key` occurs in `text`, naming `where` and a little context. */
export function assertKeyAbsent(text, where, key = KEY) {
  if (typeof text !== 'string' || text.length === 0) return
  const at = text.indexOf(key)
  if (at !== -1) {
    assert.fail(`the API key leaked into ${where}: …${text.slice(Math.max(0, at - 80), at)}<KEY>…`)
  }
}

/** Any value (a result, an error, a cause) as text, Errors with name, message and stack. */
export function textOf(value) {
  if (typeof value === 'string') return value
  const seen = new WeakSet()
  try {
    return (
      JSON.stringify(value, (_k, v) => {
        if (v instanceof Error) return { name: v.name, message: v.message, stack: v.stack, cause: v.cause }
        if (typeof v === 'bigint') return String(v)
        if (v !== null && typeof v === 'object') {
          if (seen.has(v)) return '[circular]'
          seen.add(v)
        }
        return v
      }) ?? ''
    )
  } catch {
    return String(value)
  }
}

/** The key occurs in none of `things` (results, errors, log text). */
export function assertNoKeyIn(where, ...things) {
  for (const thing of things) assertKeyAbsent(textOf(thing), where)
}

/**
 * Every request the stand-in recorded: the key is in its auth header (so the check below means
 * something) and in nothing else: not the path, not a non-auth header, not the body (raw or
 * parsed). Returns how many records were checked.
 */
export function assertRecordsClean(api, key = KEY) {
  for (const [i, record] of api.requests.entries()) {
    const auth = record.headers['x-api-key'] ?? record.headers.authorization ?? ''
    assert.ok(String(auth).includes(key), `request ${i} carries the key in its auth header`)
    assertKeyAbsent(record.path, `the path of request ${i}`, key)
    for (const [name, value] of Object.entries(record.headers)) {
      if (!AUTH_HEADERS.has(name)) assertKeyAbsent(String(value), `header ${name} of request ${i}`, key)
    }
    assertKeyAbsent(record.rawBody, `the body of request ${i}`, key)
    if (record.body !== null) assertKeyAbsent(JSON.stringify(record.body), `the parsed body of request ${i}`, key)
  }
  return api.requests.length
}
