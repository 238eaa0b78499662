// The `provider` option against the stand-in's platform doors (CONTRACT §14): Microsoft Foundry,
// Claude Platform on AWS and Amazon Bedrock (with a Bedrock API key; its streamed replies are AWS
// event-stream frames, written in small random slices) each run a tool round non-streamed and
// streamed, pass an API error on, retry what the API's twin would be retried, refuse missing
// settings and missing credentials before anything is sent, and never repeat a secret a server
// echoes. Vertex AI and Claude on Google Cloud run the same tool rounds with an access token the
// stand-in's token endpoint issued, passed as authToken (provider.accessToken and Application
// Default Credentials: access-token.test.mjs, google-adc.test.mjs). Each platform's own checks are
// the stand-in's (paths, credentials, body fields).
import { leftTheMachine, serviceAccount, toLocalTokenEndpoint } from './platform-env.mjs'
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { GoogleAuth } from 'google-auth-library'
import { runWithTools, streamWithTools } from '../index.mjs'
import { reply, startMockApi, text, toolUse } from '../stand-in/index.mjs'
import { TEST_CREDENTIALS } from '../stand-in/platforms/index.mjs'
import { collect, freshName, orderTool } from './helpers.mjs'

after(() => assert.deepEqual(leftTheMachine, [], 'every connection stayed on 127.0.0.1'))

const WORKSPACE = TEST_CREDENTIALS.awsWorkspace
const FIRST_PARTY_MODEL = 'claude-sonnet-5-5'
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-5-5-v1:0'

/** Each platform of this slice: the stand-in door, the run options that reach it, its secret. */
const PLATFORMS = {
  foundry: {
    secret: TEST_CREDENTIALS.foundryApiKey,
    echo: '{echo:x-api-key}',
    options: (api) => ({ provider: 'foundry', baseURL: api.url, apiKey: TEST_CREDENTIALS.foundryApiKey, model: FIRST_PARTY_MODEL }),
    path: '/anthropic/v1/messages',
    name: 'Microsoft Foundry',
  },
  aws: {
    secret: WORKSPACE.apiKey,
    echo: '{echo:authorization}',
    options: (api) => ({ provider: { type: 'aws', workspaceId: WORKSPACE.id }, baseURL: api.url, apiKey: WORKSPACE.apiKey, model: FIRST_PARTY_MODEL }),
    path: '/v1/messages',
    name: 'Claude Platform on AWS',
  },
  bedrock: {
    secret: TEST_CREDENTIALS.bedrockApiKey,
    echo: '{echo:authorization}',
    options: (api) => ({ provider: 'bedrock', baseURL: api.url, apiKey: TEST_CREDENTIALS.bedrockApiKey, model: BEDROCK_MODEL }),
    path: `/model/${BEDROCK_MODEL}/invoke`,
    name: 'Amazon Bedrock',
  },
}

async function door(t, platform) {
  const api = await startMockApi({ platform })
  t.after(() => api.close())
  return api
}

const broken = (api) => api.requests.filter((r) => r.broken).map((r) => r.broken)

for (const [platform, p] of Object.entries(PLATFORMS)) {
  test(`${platform}: a tool round, not streamed`, async (t) => {
    const api = await door(t, platform)
    const tool = freshName(`order_${platform.replace('-', '_')}`)
    const calls = orderTool(tool)
    api.script(reply([toolUse(tool, { orderId: '4821' }, 'toolu_p1')]), reply([text('Order 4821 has shipped.')]))
    const r = await runWithTools('Where is order 4821?', { ...p.options(api), tools: [tool] })
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Order 4821 has shipped.')
    assert.equal(calls.length, 1)
    assert.deepEqual(broken(api), [])
    assert.equal(api.requests.length, 2)
    for (const record of api.requests) assert.equal(record.path, p.path)
    const [first, second] = api.requests
    if (platform === 'bedrock') {
      // The version and no model or stream in the body; the whole history every time (no Threads).
      assert.equal(first.body.anthropic_version, '2026-10-21')
      for (const key of ['model', 'stream', 'thread']) assert.equal(key in second.body, false, key)
      assert.equal(second.body.messages.length, 3)
      assert.equal(first.headers.authorization, `Bearer ${p.secret}`)
      assert.equal(first.headers['anthropic-version'], undefined)
    } else {
      // The first-party API, Threads included: the second request continues the first's thread.
      assert.equal(first.body.model, FIRST_PARTY_MODEL)
      assert.equal(first.headers['anthropic-version'], '2026-10-21')
      assert.equal(first.body.thread?.type, 'create')
      assert.equal(second.body.thread?.type, 'continue')
      if (platform === 'aws') {
        assert.equal(first.headers.authorization, `Bearer ${p.secret}`)
        assert.equal(first.headers['anthropic-workspace-id'], WORKSPACE.id)
      } else {
        assert.equal(first.headers['x-api-key'], p.secret)
      }
    }
  })

  test(`${platform}: a tool round, streamed`, async (t) => {
    const api = await door(t, platform)
    const tool = freshName(`stream_order_${platform.replace('-', '_')}`)
    orderTool(tool)
    api.script(
      reply([text('Let me look.'), toolUse(tool, { orderId: '4821' }, 'toolu_p2')]),
      reply([text('Order 4821 has shipped, and it is on its way to you now.')]),
    )
    const stream = streamWithTools('Where is order 4821?', { ...p.options(api), tools: [tool] })
    const parts = await collect(stream)
    const result = await stream.result
    assert.equal(result.error, null, JSON.stringify(result.error))
    assert.equal(result.data.text, 'Order 4821 has shipped, and it is on its way to you now.')
    const types = parts.map((part) => part.type)
    for (const type of ['text-delta', 'tool-input-start', 'tool-input-delta', 'tool-call', 'tool-result', 'finish']) {
      assert.ok(types.includes(type), `${type} in ${types}`)
    }
    assert.deepEqual(broken(api), [])
    const streamed = platform === 'bedrock' ? `/model/${BEDROCK_MODEL}/invoke-with-response-stream` : p.path
    for (const record of api.requests) assert.equal(record.path, streamed)
  })

  test(`${platform}: an API error is passed on, named by the platform, the secret never repeated`, async (t) => {
    const api = await door(t, platform)
    api.script({ status: 400, error: { type: 'invalid_request_error', message: `messages: the key ${p.echo} is not welcome here` } })
    const r = await runWithTools('Hi', { ...p.options(api), tools: [] })
    assert.equal(r.data, null)
    assert.equal(r.error.code, 'invalid_request', JSON.stringify(r.error))
    assert.equal(r.error.status, 400)
    assert.ok(r.error.message.startsWith(`${p.name} answered HTTP 400`), r.error.message)
    assert.ok(r.error.message.includes('is not welcome here'), r.error.message)
    assert.ok(r.error.message.includes('[redacted]'), r.error.message)
    assert.ok(!JSON.stringify(r).includes(p.secret), `the secret leaked: ${r.error.message}`)
    if (platform === 'bedrock') assert.match(r.error.message, /ValidationException/)
    assert.equal(api.requests.length, 1)
  })

  test(`${platform}: a rate limit and an unavailable platform are retried`, async (t) => {
    const api = await door(t, platform)
    api.script({ platformError: 'unavailable' }, { platformError: platform === 'foundry' ? 'unavailable' : 'throttle' }, reply([text('Back again.')]))
    const r = await runWithTools('Hi', { ...p.options(api), tools: [] })
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Back again.')
    assert.equal(api.requests.length, 3)
    assert.ok(api.requests[0].status >= 500, `first answer ${api.requests[0].status}`)
    assert.ok(api.requests[1].status >= 429, `second answer ${api.requests[1].status}`)
    assert.deepEqual(api.requests.map((q) => q.retryCount), [0, 1, 2])
  })

  test(`${platform}: no credentials is authentication_error saying where they were looked for, nothing sent`, async (t) => {
    const api = await door(t, platform)
    api.script(reply([text('must not be asked')]))
    process.env.ANTHROPIC_API_KEY = 'sk-ant-never-for-a-platform'
    process.env.ANTHROPIC_AUTH_TOKEN = 'never-for-a-platform'
    // Signing needs a region: with one, what is missing is the credentials alone.
    process.env.AWS_REGION = 'us-east-1'
    t.after(() => {
      delete process.env.ANTHROPIC_API_KEY
      delete process.env.ANTHROPIC_AUTH_TOKEN
      delete process.env.AWS_REGION
    })
    const { apiKey: _key, ...options } = p.options(api)
    const r = await runWithTools('Hi', { ...options, tools: [] })
    assert.equal(r.error?.code, 'authentication_error', JSON.stringify(r.error))
    const where = { foundry: 'ANTHROPIC_FOUNDRY_API_KEY', aws: 'ANTHROPIC_AWS_API_KEY', bedrock: 'AWS_BEARER_TOKEN_BEDROCK' }[platform]
    assert.ok(r.error.message.includes(where), r.error.message)
    assert.ok(r.error.message.includes('apiKey'), r.error.message)
    assert.equal(api.requests.length, 0, 'nothing may be sent')
  })
}

test('the platform key is read from its environment variable at call time', async (t) => {
  const api = await door(t, 'bedrock')
  api.script(reply([text('Keyed by the environment.')]))
  process.env.AWS_BEARER_TOKEN_BEDROCK = TEST_CREDENTIALS.bedrockApiKey
  t.after(() => delete process.env.AWS_BEARER_TOKEN_BEDROCK)
  const r = await runWithTools('Hi', { provider: 'bedrock', baseURL: api.url, model: BEDROCK_MODEL, tools: [], apiVersion: '2023-06-01' })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(r.data.text, 'Keyed by the environment.')
  // The pin's legacy value goes in the body.
  assert.equal(api.requests[0].body.anthropic_version, 'bedrock-2023-05-31')
})

test('Bedrock maps errors by their AWS type: a quota 400 is rate_limited and retried, an expired token is authentication_error', async (t) => {
  const api = await door(t, 'bedrock')
  api.script({ platformError: 'quota' }, reply([text('Within quota now.')]))
  const ok = await runWithTools('Hi', { ...PLATFORMS.bedrock.options(api), tools: [] })
  assert.equal(ok.error, null, JSON.stringify(ok.error))
  assert.deepEqual(api.requests.map((q) => q.status), [400, 200])

  api.script({ platformError: 'quota' })
  const limited = await runWithTools('Hi', { ...PLATFORMS.bedrock.options(api), tools: [], maxRetries: 0 })
  assert.equal(limited.error.code, 'rate_limited')
  assert.equal(limited.error.status, 400)
  assert.match(limited.error.message, /^Amazon Bedrock answered HTTP 400 ServiceQuotaExceededException: Too many tokens/)
  assert.ok(limited.error.requestId, 'the x-amzn-requestid header')

  api.script({ platformError: 'expired' })
  const expired = await runWithTools('Hi', { ...PLATFORMS.bedrock.options(api), tools: [] })
  assert.equal(expired.error.code, 'authentication_error')
  assert.equal(api.requests.at(-1).retryCount, 0, 'an auth failure is not retried')

  api.script({ platformError: 'timeout' })
  const slow = await runWithTools('Hi', { ...PLATFORMS.bedrock.options(api), tools: [], maxRetries: 0 })
  assert.equal(slow.error.code, 'network_error')
})

test('a wrong Bedrock key is refused by the platform as UnrecognizedClientException', async (t) => {
  const api = await door(t, 'bedrock')
  const r = await runWithTools('Hi', { ...PLATFORMS.bedrock.options(api), apiKey: 'ABSK-not-a-known-key', tools: [] })
  assert.equal(r.error.code, 'authentication_error')
  assert.match(r.error.message, /UnrecognizedClientException/)
  // The advice points at the platform's credentials, not at ANTHROPIC_API_KEY.
  assert.doesNotMatch(r.error.message, /ANTHROPIC_API_KEY/)
  assert.match(r.error.message, /platform's credentials/)
  assert.equal(api.requests.length, 1)
})

test('missing settings are invalid_request naming the option and the variables; nothing is sent', async (t) => {
  const api = await door(t, 'aws')
  const cases = [
    [{ provider: 'bedrock', apiKey: 'k' }, ['provider.region', 'AWS_REGION', 'AWS_DEFAULT_REGION']],
    [{ provider: 'aws', apiKey: 'k' }, ['provider.region', 'AWS_REGION']],
    [{ provider: 'aws', apiKey: 'k', baseURL: api.url }, ['provider.workspaceId', 'ANTHROPIC_AWS_WORKSPACE_ID']],
    [{ provider: 'foundry', apiKey: 'k' }, ['provider.resource', 'ANTHROPIC_FOUNDRY_RESOURCE']],
    [{ provider: { type: 'vertex', region: 'global' }, authToken: 't', baseURL: api.url }, ['provider.projectId', 'ANTHROPIC_VERTEX_PROJECT_ID']],
    [{ provider: { type: 'google-cloud', projectId: 'p' }, authToken: 't', baseURL: api.url }, ['provider.workspaceId', 'ANTHROPIC_GOOGLE_CLOUD_WORKSPACE_ID']],
    [{ provider: 'azure' }, ['Option provider must be']],
  ]
  for (const [options, mentions] of cases) {
    const r = await runWithTools('Hi', { ...options, tools: [] })
    assert.equal(r.error?.code, 'invalid_request', JSON.stringify(r.error))
    for (const m of mentions) assert.ok(r.error.message.includes(m), `${JSON.stringify(options)}: ${r.error.message} should name ${m}`)
  }
  assert.equal(api.requests.length, 0)
  // A setting from the environment fills the gap.
  process.env.ANTHROPIC_AWS_WORKSPACE_ID = WORKSPACE.id
  t.after(() => delete process.env.ANTHROPIC_AWS_WORKSPACE_ID)
  api.script(reply([text('Found the workspace.')]))
  const r = await runWithTools('Hi', { provider: 'aws', apiKey: WORKSPACE.apiKey, baseURL: api.url, model: FIRST_PARTY_MODEL, tools: [] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(api.requests[0].headers['anthropic-workspace-id'], WORKSPACE.id)
})

test('Foundry takes an Entra ID token as authToken, sent as a bearer', async (t) => {
  const api = await door(t, 'foundry')
  api.script(reply([text('Signed in with Entra.')]))
  const r = await runWithTools('Hi', { provider: 'foundry', baseURL: api.url, authToken: TEST_CREDENTIALS.entraToken, model: FIRST_PARTY_MODEL, tools: [] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(api.requests[0].headers.authorization, `Bearer ${TEST_CREDENTIALS.entraToken}`)
  assert.equal(api.requests[0].headers['x-api-key'], undefined)
})

/** A Google platform's stand-in that knows a fresh service account, and an access token it issued. */
async function googleDoor(t, type) {
  const sa = serviceAccount()
  const api = await door(t, { type, serviceAccounts: [sa.account] })
  sa.keyFile.token_uri = `${api.url}/token`
  const auth = new GoogleAuth({
    credentials: sa.keyFile,
    scopes: ['https://www.googleapis.com/auth/cloud-platform'],
    clientOptions: { transporterOptions: toLocalTokenEndpoint(api.url) },
  })
  const token = await auth.getAccessToken()
  assert.equal(typeof token, 'string')
  return { api, token }
}

const GOOGLE = {
  vertex: {
    provider: { type: 'vertex', projectId: TEST_CREDENTIALS.googleProject, region: 'us-east5' },
    model: 'claude-sonnet-5-5@20261001',
    path: (stream) => `/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/us-east5/publishers/anthropic/models/claude-sonnet-5-5@20261001:${stream ? 'streamRawPredict' : 'rawPredict'}`,
  },
  'google-cloud': {
    provider: { type: 'google-cloud', projectId: TEST_CREDENTIALS.googleProject, workspaceId: TEST_CREDENTIALS.googleWorkspace },
    model: FIRST_PARTY_MODEL,
    path: () => `/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/global/workspaces/${TEST_CREDENTIALS.googleWorkspace}/invoke/v1/messages`,
  },
}

for (const [type, g] of Object.entries(GOOGLE)) {
  test(`${type}: tool rounds, not streamed and streamed, with an access token; an error passed on`, async (t) => {
    const { api, token } = await googleDoor(t, type)
    const tool = freshName(`order_${type.replace('-', '_')}`)
    orderTool(tool)
    const options = { provider: g.provider, baseURL: api.url, authToken: token, model: g.model, tools: [tool] }
    api.script(reply([toolUse(tool, { orderId: '4821' }, 'toolu_g1')]), reply([text('Shipped.')]))
    const r = await runWithTools('Where is order 4821?', options)
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Shipped.')
    const sent = api.requests.filter((q) => q.path !== '/token')
    assert.deepEqual(sent.map((q) => q.path), [g.path(false), g.path(false)])
    assert.equal(sent[0].headers.authorization, `Bearer ${token}`)
    if (type === 'vertex') {
      assert.equal(sent[0].body.anthropic_version, '2026-10-21')
      assert.equal('model' in sent[0].body, false)
      assert.equal('thread' in sent[1].body, false, 'Vertex has no Threads')
    } else {
      assert.equal(sent[0].body.model, FIRST_PARTY_MODEL)
      assert.equal(sent[1].body.thread?.type, 'continue')
    }

    api.script(reply([text('Looking.'), toolUse(tool, { orderId: '4821' }, 'toolu_g2')]), reply([text('Shipped, streamed.')]))
    const stream = streamWithTools('Where is order 4821?', options)
    const parts = await collect(stream)
    const result = await stream.result
    assert.equal(result.error, null, JSON.stringify(result.error))
    assert.equal(result.data.text, 'Shipped, streamed.')
    assert.ok(parts.some((p) => p.type === 'tool-call'))
    assert.equal(api.requests.at(-1).path, g.path(true))
    assert.deepEqual(broken(api), [])

    api.script({ status: 400, error: { type: 'invalid_request_error', message: 'tools: something is off' } })
    const refused = await runWithTools('Hi', { ...options, tools: [] })
    assert.equal(refused.error.code, 'invalid_request')
    assert.match(refused.error.message, /something is off/)
  })

  test(`${type}: a stale token is Google's 401, authentication_error, the token never repeated`, async (t) => {
    const { api, token } = await googleDoor(t, type)
    api.platform.expireTokens()
    const r = await runWithTools('Hi', { provider: g.provider, baseURL: api.url, authToken: token, model: g.model, tools: [] })
    assert.equal(r.error.code, 'authentication_error', JSON.stringify(r.error))
    assert.equal(r.error.status, 401)
    assert.ok(!JSON.stringify(r).includes(token))
  })
}
