// Secrets never echo, and approval secrets are strong. An API, or a gateway in front of it, that
// writes the request's credentials into its error text (the stand-in's {echo:NAME}) does not get
// the key, the auth token, a `headers` value or the approval secret into error.message, the
// error's JSON, a stream part, the UI message stream or a log line, streamed or not. An approval
// secret shorter than 32 characters is refused before anything is sent.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { registerTool, runWithTools, streamWithTools } from '../index.mjs'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { KEY, at, startApi, approvalSecretInEnv, freshName, SECRET_ENV as ENV } from './helpers.mjs'
import { textOf } from './secrets.mjs'

const TOKEN = 'gateway-token-7c1e5a90b3d2f486aa'
/** A `headers` value that is a credential. */
const HEADER_SECRET = 'hdr-secret-4b8d2f6a1c3e5079'
/** A `headers` value too short to be one: it is left as it is. */
const SHORT_HEADER = 'web'
/** Never sent: the stand-in "echoes" it only because the script writes it in. */
const APPROVAL_SECRET = 'approval-secret-0f1e2d3c4b5a69788796a5b4c3d2e1f0'
const SECRETS = { 'API key': KEY, 'auth token': TOKEN, 'headers value': HEADER_SECRET, 'approval secret': APPROVAL_SECRET }
const ECHO = 'invalid x-api-key {echo:x-api-key}; authorization {echo:authorization}; x-gateway-secret {echo:x-gateway-secret}; x-source {echo:x-source}'

// The suite decides where the approval secret comes from: none from the environment unless a test sets it.
approvalSecretInEnv(undefined)

/** No secret occurs in any of `things` (results, parts, bodies, log text). */
function assertClean(where, ...things) {
  for (const thing of things) {
    const seen = textOf(thing)
    for (const [what, secret] of Object.entries(SECRETS)) {
      const at = seen.indexOf(secret)
      if (at !== -1) assert.fail(`the ${what} leaked into ${where}: …${seen.slice(Math.max(0, at - 80), at)}<SECRET>…`)
    }
  }
}

/** Options with the key (or only the auth token), two `headers` values and the approval secret. */
function echoed(api, { token = false } = {}) {
  return {
    ...(token ? { authToken: TOKEN } : { apiKey: KEY }),
    baseURL: api.url,
    headers: { 'x-gateway-secret': HEADER_SECRET, 'x-source': SHORT_HEADER },
    approvalSecret: APPROVAL_SECRET,
    maxRetries: 0,
  }
}

/**
 * Meets `step` three times: runWithTools, streamWithTools read part by part, and streamWithTools
 * as a UI message stream whose error chunk carries error.message (onError). Checks that none of
 * them holds a secret and returns the three errors' messages.
 */
async function everyWay(api, step, options) {
  api.script(step, step, step)
  const plain = await runWithTools('Hi', options)
  assert.equal(plain.data, null)
  assertClean('runWithTools', plain, plain.error.message, JSON.stringify(plain.error))

  const stream = streamWithTools('Hi', options)
  const parts = []
  for await (const part of stream) parts.push(part)
  const finish = parts.at(-1)
  assert.equal(finish.type, 'finish')
  assert.notEqual(finish.result.error, null)
  assertClean('the stream parts', parts, await stream.result)

  const ui = streamWithTools('Hi', options)
  const body = await ui.toUIMessageStreamResponse({ onError: (error) => error.message }).text()
  assert.match(body, /"type":"error"/)
  assertClean('the UI message stream', body, await ui.result)
  assert.equal(api.requests.length, 3)
  return [plain.error.message, finish.result.error.message, (await ui.result).error.message]
}

test('an HTTP error that echoes the key, the auth token, a headers value and the approval secret passes none on', async (t) => {
  for (const token of [false, true]) {
    const api = await startApi(t, token ? { apiKey: TOKEN } : {})
    const step = { status: 401, error: { type: 'authentication_error', message: `${ECHO}; approval ${APPROVAL_SECRET}` } }
    const messages = await everyWay(api, step, echoed(api, { token }))
    const credential = token ? 'authorization Bearer [redacted]' : 'invalid x-api-key [redacted]'
    for (const message of messages) {
      assert.match(message, /^The Anthropic API answered HTTP 401 authentication_error: /)
      for (const part of [credential, 'x-gateway-secret [redacted]', `x-source ${SHORT_HEADER}`, 'approval [redacted]']) {
        assert.ok(message.includes(part), `${part} not in ${message}`)
      }
    }
    // The streamed attempts asked for a stream and got the error as JSON instead.
    assert.deepEqual(api.requests.map((r) => r.body.stream === true), [false, true, true])
  }
})

test('an error event after HTTP 200 that echoes them, plainly or in JSON escapes, passes none on', async (t) => {
  for (const echo of [ECHO, ECHO.replaceAll('{echo:', '{echo-escaped:')]) {
    const api = await startApi(t)
    const step = { ...reply([text('Hello there, this part is shown.')]), sseError: { type: 'authentication_error', message: echo }, sseErrorAfter: 3 }
    api.script(step, step)
    const stream = streamWithTools('Hi', echoed(api))
    const parts = []
    for await (const part of stream) parts.push(part)
    const { error } = await stream.result
    assert.equal(error.code, 'authentication_error')
    assert.match(error.message, /in the stream after HTTP 200/)
    assert.ok(error.message.includes('invalid x-api-key [redacted]'), error.message)
    assertClean('the stream parts', parts, error)
    const ui = streamWithTools('Hi', echoed(api))
    const body = await ui.toUIMessageStreamResponse({ onError: (e) => e.message }).text()
    assert.match(body, /\[redacted\]/)
    assertClean('the UI message stream', body)
  }
})

test('an echo written in JSON escapes (sk\\u002dant…) is caught after decoding', async (t) => {
  const api = await startApi(t)
  // The API's error shape, and a gateway's own JSON, which is quoted instead.
  for (const body of [
    '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key {echo-escaped:x-api-key}"}}',
    '{"detail":"invalid x-api-key {echo-escaped:x-api-key}"}',
  ]) {
    api.reset()
    const messages = await everyWay(api, { status: 401, body }, echoed(api))
    for (const message of messages) {
      assert.match(message, /\[redacted\]/)
      assert.ok(!message.includes('\\u0073\\u006b'), message)
    }
  }
})

test('a page that is not JSON is quoted without the secrets, even where the quote is cut', async (t) => {
  const api = await startApi(t)
  // The key starts inside the 80 characters quoted and ends after them.
  const page = `<html>${'x'.repeat(60)}{echo:x-api-key}</html>`
  const messages = await everyWay(api, { status: 502, headers: { 'content-type': 'text/html' }, body: page }, echoed(api))
  for (const message of messages) {
    assert.ok(message.includes('xxx[redac'), message)
    assert.ok(!message.includes('sk-ant'), message)
  }
})

test('log lines (ANTHROPIC_TOOL_CALLING_LOG=debug) hold no secret, not even in an echoed request id', () => {
  const script = fileURLToPath(new URL('./fixtures/echoed-run.mjs', import.meta.url))
  const secrets = JSON.stringify({ key: KEY, header: HEADER_SECRET, approval: APPROVAL_SECRET })
  const env = { ...process.env, ANTHROPIC_TOOL_CALLING_LOG: 'debug' }
  const child = spawnSync(process.execPath, [script, secrets], { env, encoding: 'utf8', timeout: 30_000 })
  assert.equal(child.status, 0, child.stderr)
  const lines = child.stderr.split('\n').filter(Boolean)
  const failed = lines.filter((l) => l.includes('api attempt: failed'))
  assert.equal(failed.length, 4, lines.join('\n'))
  assert.ok(failed.some((l) => l.includes('req_[redacted]')), failed.join('\n'))
  assertClean('the log', child.stderr)
  const { plain, parts } = JSON.parse(child.stdout)
  assert.equal(plain.error.code, 'authentication_error')
  assert.equal(parts.at(-1).result.error.code, 'authentication_error')
  assertClean('the results', child.stdout)
})

test('a headers value "Bearer <token>" whose token alone is echoed passes it on nowhere, streamed or not: error, finish part, toolCalls, log lines', () => {
  const token = 'cf-aig-token-5d2e8a1b7c3f9064e1'
  const script = fileURLToPath(new URL('./fixtures/token-echo-run.mjs', import.meta.url))
  const env = { ...process.env, ANTHROPIC_TOOL_CALLING_LOG: 'debug' }
  const child = spawnSync(process.execPath, [script, JSON.stringify({ key: KEY, token })], { env, encoding: 'utf8', timeout: 30_000 })
  assert.equal(child.status, 0, child.stderr)
  const { plain, parts, streamed } = JSON.parse(child.stdout)
  for (const [what, result] of [['runWithTools', plain], ['streamWithTools', streamed]]) {
    assert.equal(result.error.code, 'authentication_error', JSON.stringify(result.error))
    assert.match(result.error.message, /invalid gateway token \[redacted\] \(sent as \[redacted\]\)/, what)
    assert.equal(result.error.toolCalls.length, 1, `${what}: the round that ran is in toolCalls`)
  }
  assert.equal(parts.at(-1).type, 'finish')
  assert.match(parts.at(-1).result.error.message, /\[redacted\]/)
  assert.ok(child.stderr.includes('api attempt: failed'), 'the log has the failed attempt')
  for (const [where, text] of [['the results', child.stdout], ['the log', child.stderr]]) {
    const at = text.indexOf(token)
    assert.equal(at, -1, `the token leaked into ${where}: …${text.slice(Math.max(0, at - 80), at)}<TOKEN>…`)
  }
})

// --- strong approval secrets --------------------------------------------------------------------

/** A tool that needs approval, under a name no other test uses. */
function refundTool() {
  const name = freshName('secret_refund')
  const runs = []
  registerTool({
    definition: { name, description: 'Refund an order', input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
    needsApproval: true,
    execute: async (input) => {
      runs.push(input)
      return `refunded ${input.orderId}`
    },
  })
  return { name, runs }
}

/** Refused as a short secret: invalid_request naming both and saying how to make one. */
function assertShort(result, secret) {
  assert.equal(result.data, null)
  assert.equal(result.error.code, 'invalid_request', JSON.stringify(result.error))
  for (const part of ['approvalSecret', 'ANTHROPIC_TOOL_CALLING_SECRET', 'openssl rand -hex 32', `is ${secret.length} characters long`, 'Nothing was sent']) {
    assert.ok(result.error.message.includes(part), `${part} not in ${result.error.message}`)
  }
  assert.ok(!result.error.message.includes(secret), result.error.message)
}

test('an approval secret of 31 characters is invalid_request naming both and openssl rand -hex 32; nothing is sent', async (t) => {
  const api = await startApi(t)
  const refund = refundTool()
  const short = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d'
  assert.equal(short.length, 31)
  api.script(reply([toolUse(refund.name, { orderId: '1' })]))
  // With a tool that needs it, and without one: a short secret given is always a mistake.
  for (const tools of [[refund.name], []]) {
    assertShort(await runWithTools('Refund order 1', at(api, { tools, approvalSecret: short })), short)
    assertShort(await streamWithTools('Refund order 1', at(api, { tools, approvalSecret: short })).result, short)
    process.env[ENV] = short
    try {
      const r = await runWithTools('Refund order 1', at(api, { tools }))
      assertShort(r, short)
      assert.match(r.error.message, /^ANTHROPIC_TOOL_CALLING_SECRET is 31 characters long/)
    } finally {
      delete process.env[ENV]
    }
  }
  assert.equal(api.requests.length, 0, 'nothing was sent')
  assert.equal(refund.runs.length, 0)
})

test('an approval secret of 32 characters is accepted: the run pauses and resumes with it', async (t) => {
  const api = await startApi(t)
  const refund = refundTool()
  const secret = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'
  assert.equal(secret.length, 32)
  api.script(reply([toolUse(refund.name, { orderId: '2' }, 'toolu_strong')]), reply([text('Refunded.')]))
  const options = at(api, { tools: [refund.name], approvalSecret: secret })
  const paused = await runWithTools('Refund order 2', options)
  assert.equal(paused.error, null, JSON.stringify(paused.error))
  assert.equal(paused.data.stopReason, 'approval_required')
  const { approvalId } = paused.data.pendingApprovals[0]
  const done = await runWithTools(paused.data.messages, { ...options, approvals: [{ approvalId, approved: true }] })
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(done.data.text, 'Refunded.')
  assert.deepEqual(refund.runs, [{ orderId: '2' }])
  assert.equal(api.requests.length, 2)
})

test('without a secret, the refusal says how to make one', async (t) => {
  const api = await startApi(t)
  const refund = refundTool()
  const r = await runWithTools('Refund order 3', at(api, { tools: [refund.name] }))
  assert.equal(r.error.code, 'invalid_request')
  for (const part of ['approvalSecret', 'ANTHROPIC_TOOL_CALLING_SECRET', 'at least 32 characters', 'openssl rand -hex 32']) {
    assert.ok(r.error.message.includes(part), `${part} not in ${r.error.message}`)
  }
  assert.equal(api.requests.length, 0)
})
