'use strict'
// anthropic-tool-calling/testing: the strict stand-in of the Messages API for a developer's own
// tests, with helpers that script what the model says. The main entry never loads this file, and
// this file loads the server only when startStandIn is called.

const { text, toolUse, thinking, message, pauseTurn, rateLimited, overloaded, serverError, cutStream, slow } = require('./replies.js')

/**
 * Starts the stand-in on 127.0.0.1; resolves with `{ url, apiKey, requests, close }`. `replies`: a
 * list (one reply a request, in order) or a function `(request) => reply`; without it a default
 * model calls the offered tools the prompt names.
 */
async function startStandIn(options) {
  const { startStandIn: start } = await import('./stand-in.mjs')
  return start(options)
}

module.exports = { startStandIn, text, toolUse, thinking, message, pauseTurn, rateLimited, overloaded, serverError, cutStream, slow }
