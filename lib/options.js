'use strict'
// A run's options as JS reads them before anything crosses into Rust: the ones that stay in JS
// (`signal`, `context`, the hooks — Rust's list of them, with what each must be) are checked and
// taken out; the prompt, the rest of the options and the environment the engine reads go to the
// engine as one JSON request. Every failure here is worded by Rust, like every other failure.

const binding = require('../binding.js')
const { describe } = require('./describe.js')
// lib/credentials.js is loaded by the first run whose `provider` is an object.
let credentials

/** The options JS keeps (JS values the engine has no use for) and what each must be. */
const JS_ONLY = binding.jsOnlyOptions()
const JS_ONLY_NAMES = new Set(JS_ONLY.map(({ name }) => name))

/** The environment variables every run's engine reads (the Anthropic API's connection, and approvals' secret). */
const ENV = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'ANTHROPIC_TOOL_CALLING_SECRET']

/** And those a run on a cloud platform reads besides (the `provider` option; CONTRACT §14). */
const PLATFORM_ENV = [
  'AWS_BEARER_TOKEN_BEDROCK',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_PROFILE',
  'ANTHROPIC_BEDROCK_BASE_URL',
  'ANTHROPIC_AWS_BASE_URL',
  'ANTHROPIC_AWS_API_KEY',
  'ANTHROPIC_AWS_WORKSPACE_ID',
  'ANTHROPIC_FOUNDRY_API_KEY',
  'ANTHROPIC_FOUNDRY_RESOURCE',
  'ANTHROPIC_VERTEX_PROJECT_ID',
  'CLOUD_ML_REGION',
  'ANTHROPIC_GOOGLE_CLOUD_PROJECT',
  'GOOGLE_CLOUD_PROJECT',
  'ANTHROPIC_GOOGLE_CLOUD_LOCATION',
  'ANTHROPIC_GOOGLE_CLOUD_WORKSPACE_ID',
  // Where Google's Application Default Credentials are looked for, and AWS's shared files.
  'GOOGLE_APPLICATION_CREDENTIALS',
  'CLOUDSDK_CONFIG',
  'HOME',
  'APPDATA',
  'GCE_METADATA_HOST',
  'GCE_METADATA_IP',
  'METADATA_SERVER_DETECTION',
]

function isAbortSignal(value) {
  return value !== null && typeof value === 'object' && typeof value.aborted === 'boolean' && typeof value.addEventListener === 'function'
}

/** One check for each kind of JS-only option Rust names. */
const IS_KIND = { any: () => true, abort_signal: isAbortSignal, hook: (value) => typeof value === 'function' }

/**
 * Checks and splits the options of a run. Returns a failed RunResult (`{ data: null, error }`,
 * nothing sent) for options JS refuses, else `{ signal, context, hooks, request, timed, output, telemetry, model, provider, credentials }`:
 * `hooks` is null when no hook is given, `request` the JSON of `{ prompt, options, env }` for the
 * engine, `timed` whether the run has a `toolTimeoutMs`, `output` the `output` Standard Schema's
 * props (null for none, or a JSON Schema), `telemetry`, `model` and `provider` those options as given (the engine
 * checks them; tracing reads them), `credentials` the wrapped `provider.credentials` or `provider.accessToken` function or null.
 * process.env is read now, at each call: the cloud platforms' variables only with a `provider` or
 * `everyPlatform` (resumeRun: the provider is the log's).
 */
function readOptions(prompt, options, everyPlatform = false) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    return binding.jsFailure('options_not_an_object', describe(options))
  }
  const given = options || {}
  // Read as `const { signal, context, …hooks, ...rest } = given` reads: the options JS keeps
  // first (own or inherited), then every other own key, in order, each getter once.
  const kept = {}
  for (const { name } of JS_ONLY) kept[name] = given[name]
  const rest = {}
  for (const key of Object.keys(given)) {
    if (JS_ONLY_NAMES.has(key)) continue
    // An own `__proto__` key is an option like any other (refused as unknown), never a prototype.
    if (key === '__proto__') Object.defineProperty(rest, key, { value: given[key], enumerable: true, writable: true, configurable: true })
    else rest[key] = given[key]
  }
  const hooks = {}
  let hooked = false
  for (const { name, kind } of JS_ONLY) {
    const value = kept[name]
    if (value !== undefined && value !== null && !IS_KIND[kind](value)) return binding.jsFailure('bad_option', describe(value), name)
    if (kind === 'hook') {
      hooks[name] = value
      hooked = hooked || typeof value === 'function'
    }
  }
  let output = null
  if (rest.output !== undefined && rest.output !== null) {
    // lib/output.js is loaded by the first run with an `output`.
    const read = require('./output.js').readOutput(rest.output)
    if (read.failed) return read.failed
    rest.output = read.json
    output = read.standard
  }
  // In a stored thread, `{ approvals }` as the prompt resumes a pause: the history is the store's.
  if (rest.thread !== undefined && rest.thread !== null && prompt !== null && typeof prompt === 'object' && !Array.isArray(prompt) && Object.keys(prompt).length === 1 && 'approvals' in prompt && rest.approvals === undefined) {
    rest.approvals = prompt.approvals
    prompt = []
  }
  if (rest.store !== undefined && rest.store !== null) {
    // A store crosses as its handle; anything else as a value the engine refuses, naming it.
    rest.store = require('./store.js').handleOf(rest.store) ?? -1
  }
  // A `provider.credentials` or `provider.accessToken` function stays in JS (lib/credentials.js);
  // the engine calls it.
  let taken = { fetch: null }
  if (rest.provider !== null && typeof rest.provider === 'object') {
    const { takeFunction } = (credentials ??= require('./credentials.js'))
    taken = takeFunction(rest.provider, 'credentials')
    if (taken.fetch === null) taken = takeFunction(rest.provider, 'accessToken')
    if (taken.fetch !== null) rest.provider = taken.provider
  }
  // The environment the engine reads, now: the cloud platforms' variables only for a run that names
  // a `provider` (none of them applies to the Anthropic API, the default), as each read of
  // process.env costs a call into Node (~0.3 µs; all of them were a fifth of a plain run's JS).
  const env = {}
  for (const name of ENV) env[name] = process.env[name]
  // A run taken over (`everyPlatform`) has the provider its log keeps, which the call may not repeat.
  if (everyPlatform || (rest.provider !== undefined && rest.provider !== null)) for (const name of PLATFORM_ENV) env[name] = process.env[name]
  let request
  try {
    request = JSON.stringify({ prompt, options: rest, env })
  } catch (e) {
    return binding.jsFailure('not_json', String(e.message))
  }
  const timed = rest.toolTimeoutMs !== undefined && rest.toolTimeoutMs !== null
  return { signal: kept.signal, context: kept.context, hooks: hooked ? hooks : null, request, timed, output, telemetry: rest.telemetry, model: rest.model, provider: rest.provider, credentials: taken.fetch }
}

/** The run's failure when the JS layer itself fails: `unknown_error`, worded by Rust, with what was thrown. */
function internalFailure(thrown) {
  const detail = String(thrown && thrown.message)
  let failed
  try {
    failed = binding.jsFailure('internal', detail)
  } catch {
    // The addon itself is what failed (a worker shutting down, say): the run still resolves.
    failed = { data: null, error: { code: 'unknown_error', message: `Internal error in anthropic-tool-calling: ${detail}. Please report it.` } }
  }
  failed.error.cause = thrown
  return failed
}

module.exports = { readOptions, internalFailure }
