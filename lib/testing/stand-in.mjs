// startStandIn: the strict stand-in of the Messages API (stand-in/, the server the package's own
// tests trust), started for one test with its replies scripted by the kit's helpers. It refuses
// every request the real API would refuse, with the API's own 4xx, before a reply is used.

import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { startMockApi } from '../../stand-in/server.mjs'
import { defaultModel } from '../../stand-in/default-model.mjs'
import { stepFor } from './steps.mjs'

const require = createRequire(import.meta.url)
const { asReply } = require('./replies.js')
const { describe } = require('../describe.js')

const PREFIX = 'anthropic-tool-calling/testing'
const OPTIONS = ['replies', 'apiKey', 'port', 'host']

/** An API error the run reports (HTTP 500 api_error), for a script that cannot answer. */
const scriptError = (message) => ({ status: 500, error: { type: 'api_error', message: `${PREFIX}: ${message}` } })

/** The handler that answers each valid request: the listed replies in order, a function's, or a model. */
function handlerFor(replies, model) {
  if (replies === undefined) return model ?? defaultModel
  if (typeof replies === 'function') {
    return async (body) => stepFor(asReply(await replies(body), 'replies (the function) returned no reply'), body)
  }
  const list = replies.map((r, i) => asReply(r, `replies[${i}]`))
  let next = 0
  return (body) => {
    const i = next++
    if (i < list.length) return stepFor(list[i], body)
    return scriptError(`reply ${i + 1} was asked for, but replies holds ${list.length}; add a reply for this request, or pass a function (request) => reply`)
  }
}

function checkOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`startStandIn: options must be an object { replies?, apiKey?, port?, host? }, got ${describe(options)}`)
  }
  const unknown = Object.keys(options).filter((k) => !OPTIONS.includes(k))
  if (unknown.length > 0) throw new TypeError(`startStandIn: unknown option ${unknown.join(', ')}; the options are ${OPTIONS.join(', ')}`)
  const { replies, apiKey, port, host } = options
  if (replies !== undefined && typeof replies !== 'function' && !Array.isArray(replies)) {
    throw new TypeError(`startStandIn: replies must be a list of replies (one a request, in order) or a function (request) => reply, got ${describe(replies)}`)
  }
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey.length < 8)) {
    throw new TypeError(`startStandIn: apiKey must be a string of 8 characters or more (a shorter one would be redacted out of every message), got ${describe(apiKey)}`)
  }
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    throw new TypeError(`startStandIn: port must be an integer from 0 to 65535 (0: any free port), got ${describe(port)}`)
  }
  if (host !== undefined && (typeof host !== 'string' || host.length === 0)) {
    throw new TypeError(`startStandIn: host must be a non-empty string such as "127.0.0.1", got ${describe(host)}`)
  }
}

/** Starts the stand-in for a test: `{ url, apiKey, requests, close }`. */
export async function startStandIn(options = {}) {
  checkOptions(options)
  return serve(options)
}

/**
 * The stand-in with the command line's settings too: `model` answers unscripted requests in the
 * default model's place (--demo: the order assistant of the examples), `logLevel: 'info'`
 * (--verbose) logs each request to stderr.
 */
export async function serve({ replies, apiKey = `sk-ant-test-${randomBytes(16).toString('hex')}`, port = 0, host = '127.0.0.1', model, logLevel = 'silent' }) {
  const api = await startMockApi({ apiKey, host, port, logLevel, handler: handlerFor(replies, model) })
  return {
    url: api.url,
    apiKey,
    /** The parsed body of every request received, in order, as sent (null for one that was not JSON). */
    get requests() {
      return api.requests.map((r) => r.body)
    },
    close: () => api.close(),
  }
}
