'use strict'
// A credential the caller's own function fetches (`provider.credentials`: AWS credentials, as
// `@aws-sdk/credential-providers` or Vercel's OIDC provider answer them; `provider.accessToken`:
// a Google or Entra ID access token, as google-auth-library answers it). The function stays in
// JS: the options carry a marker in its place, and the engine calls the wrapper made here when
// a request needs a credential it has not kept. The wrapper always resolves, with JSON: the
// value as `{ ok }`, or what the function threw as `{ failed }`.

const { describe } = require('./describe.js')

/** What the engine reads in place of a function (src/binding/options/credentials.rs). */
const FUNCTION = '[function]'

/**
 * Takes a function out of `provider[key]`: returns `{ provider, fetch }`, `provider` with the
 * marker in its place (the caller's object is not changed) and `fetch` the wrapper, or
 * `{ provider, fetch: null }` when there is no function to take.
 */
function takeFunction(provider, key) {
  if (provider === null || typeof provider !== 'object' || typeof provider[key] !== 'function') return { provider, fetch: null }
  const fn = provider[key]
  return { provider: { ...provider, [key]: FUNCTION }, fetch: wrap(fn, SHAPES[key] ?? ((value) => value)) }
}

/**
 * An access token as the engine reads it: a string as it is; an object's `token` with its
 * `expiresAt` (a Date, an ISO string or epoch milliseconds; google-auth-library's clients answer
 * `{ token, res }` and keep `credentials.expiry_date`) as milliseconds. Nothing else of the
 * object crosses (a client's `res` is a whole HTTP response).
 */
function tokenShape(value) {
  if (value === null || typeof value !== 'object') return value
  const at = value.expiresAt ?? value.expiry_date
  const expiresAt = at instanceof Date ? at.getTime() : typeof at === 'number' || typeof at === 'string' ? at : undefined
  return { token: value.token, expiresAt }
}

const SHAPES = { accessToken: tokenShape }

function wrap(fn, shape) {
  return async () => {
    try {
      return JSON.stringify({ ok: shape(await fn()) })
    } catch (thrown) {
      const said = thrown instanceof Error ? thrown.message : describe(thrown)
      return JSON.stringify({ failed: String(said) })
    }
  }
}

module.exports = { takeFunction }
