'use strict'
// A credential the caller's own function fetches (`provider.credentials`: AWS credentials, as
// `@aws-sdk/credential-providers` or Vercel's OIDC provider answer them). The function stays in
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
  return { provider: { ...provider, [key]: FUNCTION }, fetch: wrap(fn) }
}

function wrap(fn) {
  return async () => {
    try {
      return JSON.stringify({ ok: await fn() })
    } catch (thrown) {
      const said = thrown instanceof Error ? thrown.message : describe(thrown)
      return JSON.stringify({ failed: String(said) })
    }
  }
}

module.exports = { takeFunction }
