// `provider.accessToken` against the stand-in's doors: on Vertex AI and Claude on Google Cloud a
// function (here google-auth-library's, exchanging a service account's signed JWT at the
// stand-in's token endpoint) answers the bearer token, which is kept while fresh — with its
// expiry, or for a while as a plain string — and fetched again once when the platform answers
// 401, the request sent again with the new token; on Microsoft Foundry the function is asked on
// every request, as the official client's azureADTokenProvider. A function that throws or answers
// something else fails the run before anything is sent, and no token appears in any error.
import { leftTheMachine, serviceAccount, toLocalTokenEndpoint } from './platform-env.mjs'
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { GoogleAuth } from 'google-auth-library'
import { runWithTools, streamWithTools } from '../index.mjs'
import { reply, startMockApi, text, toolUse } from '../stand-in/index.mjs'
import { TEST_CREDENTIALS } from '../stand-in/platforms/index.mjs'
import { collect, freshName, orderTool } from './helpers.mjs'

after(() => assert.deepEqual(leftTheMachine, [], 'every connection stayed on 127.0.0.1'))

const GOOGLE = {
  vertex: {
    provider: { type: 'vertex', projectId: TEST_CREDENTIALS.googleProject, region: 'us-east5' },
    model: 'claude-sonnet-5-5@20261001',
  },
  'google-cloud': {
    provider: { type: 'google-cloud', projectId: TEST_CREDENTIALS.googleProject, workspaceId: TEST_CREDENTIALS.googleWorkspace },
    model: 'claude-sonnet-5-5',
  },
}

/**
 * A Google door that knows a fresh service account, and a token function: each call asks a new
 * google-auth-library client (so each call is a new token from the stand-in's token endpoint)
 * and answers `shape(token, client)`. `calls` counts the calls, `tokens` lists what they answered.
 */
async function googleDoor(t, type, shape = (token) => token) {
  const sa = serviceAccount()
  const api = await startMockApi({ platform: { type, serviceAccounts: [sa.account] } })
  t.after(() => api.close())
  sa.keyFile.token_uri = `${api.url}/token`
  const tokens = []
  const accessToken = async () => {
    const auth = new GoogleAuth({
      credentials: sa.keyFile,
      scopes: ['https://www.googleapis.com/auth/cloud-platform'],
      clientOptions: { transporterOptions: toLocalTokenEndpoint(api.url) },
    })
    const client = await auth.getClient()
    const { token } = await client.getAccessToken()
    tokens.push(token)
    return shape(token, client)
  }
  return { api, accessToken, tokens }
}

const sentTo = (api) => api.requests.filter((q) => q.path !== '/token')

for (const [type, g] of Object.entries(GOOGLE)) {
  test(`${type}: provider.accessToken answers the token; it is kept across rounds and runs while fresh`, async (t) => {
    // google-auth-library's client answers { token, res } and knows the expiry: the wrapper takes both.
    const { api, accessToken, tokens } = await googleDoor(t, type, (token, client) => ({ token, expiresAt: client.credentials.expiry_date }))
    const tool = freshName(`token_${type.replace('-', '_')}`)
    const calls = orderTool(tool)
    const options = { provider: { ...g.provider, accessToken }, baseURL: api.url, model: g.model, tools: [tool] }
    api.script(reply([toolUse(tool, { orderId: '4821' }, 'toolu_a1')]), reply([text('Shipped.')]))
    const r = await runWithTools('Where is order 4821?', options)
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Shipped.')
    assert.equal(calls.length, 1)

    api.script(reply([text('Looking.'), toolUse(tool, { orderId: '4821' }, 'toolu_a2')]), reply([text('Shipped, streamed.')]))
    const stream = streamWithTools('Where is order 4821?', options)
    const parts = await collect(stream)
    const streamed = await stream.result
    assert.equal(streamed.error, null, JSON.stringify(streamed.error))
    assert.ok(parts.some((p) => p.type === 'tool-call'))

    const sent = sentTo(api)
    assert.equal(sent.length, 4)
    // One token per run (each run holds its own function); every request carried it.
    assert.equal(tokens.length, 2, 'asked once per run, not once per request')
    assert.equal(sent[0].headers.authorization, `Bearer ${tokens[0]}`)
    assert.equal(sent[1].headers.authorization, `Bearer ${tokens[0]}`)
    assert.equal(sent[3].headers.authorization, `Bearer ${tokens[1]}`)
  })

  test(`${type}: a refused token is fetched again once and the request sent again with the new one`, async (t) => {
    // A plain string: no expiry known, kept until the platform refuses it.
    const { api, accessToken, tokens } = await googleDoor(t, type)
    const tool = freshName(`refresh_${type.replace('-', '_')}`)
    const calls = orderTool(tool, () => {
      // The token expires while the tool runs: the next request is refused with Google's 401.
      api.platform.expireTokens()
      return { status: 'shipped' }
    })
    api.script(reply([toolUse(tool, { orderId: '4821' }, 'toolu_r1')]), reply([text('Shipped after a refresh.')]))
    const r = await runWithTools('Where is order 4821?', { provider: { ...g.provider, accessToken }, baseURL: api.url, model: g.model, tools: [tool], maxRetries: 0 })
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Shipped after a refresh.')
    assert.equal(calls.length, 1)
    assert.equal(tokens.length, 2)
    const sent = sentTo(api)
    assert.deepEqual(sent.map((q) => q.headers.authorization), [`Bearer ${tokens[0]}`, `Bearer ${tokens[0]}`, `Bearer ${tokens[1]}`])
    assert.equal(sent[1].status, 401)
  })

  test(`${type}: a token refused again after the refresh is authentication_error; the token is never repeated`, async (t) => {
    const api = await startMockApi({ platform: type })
    t.after(() => api.close())
    const token = 'ya29.not-issued-by-the-stand-in-0123456789'
    let asked = 0
    const r = await runWithTools('Hi', {
      provider: { ...g.provider, accessToken: async () => (asked++, token) },
      baseURL: api.url,
      model: g.model,
      tools: [],
    })
    assert.equal(r.error?.code, 'authentication_error', JSON.stringify(r.error))
    assert.equal(r.error.status, 401)
    assert.equal(asked, 2, 'fetched once more after the 401, not again')
    assert.equal(sentTo(api).length, 2)
    assert.ok(!JSON.stringify(r).includes(token))
  })
}

test('Foundry asks provider.accessToken on every request (an Entra ID token provider), sent as a bearer', async (t) => {
  const api = await startMockApi({ platform: 'foundry' })
  t.after(() => api.close())
  process.env.ANTHROPIC_FOUNDRY_API_KEY = 'not-used-with-a-token-function'
  t.after(() => delete process.env.ANTHROPIC_FOUNDRY_API_KEY)
  const tool = freshName('entra_order')
  orderTool(tool)
  let asked = 0
  const accessToken = async () => {
    asked++
    return TEST_CREDENTIALS.entraToken
  }
  api.script(reply([toolUse(tool, { orderId: '4821' }, 'toolu_f1')]), reply([text('Shipped.')]))
  const r = await runWithTools('Where is order 4821?', { provider: { type: 'foundry', accessToken }, baseURL: api.url, model: 'claude-sonnet-5-5', tools: [tool] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(asked, 2, 'once per request')
  for (const q of api.requests) {
    assert.equal(q.headers.authorization, `Bearer ${TEST_CREDENTIALS.entraToken}`)
    assert.equal(q.headers['x-api-key'], undefined)
  }
})

test('a token function that throws, answers nothing usable, or is not a function fails the run before anything is sent', async (t) => {
  const api = await startMockApi({ platform: 'vertex' })
  t.after(() => api.close())
  const base = { baseURL: api.url, model: GOOGLE.vertex.model, tools: [] }
  const provider = (accessToken) => ({ ...GOOGLE.vertex.provider, accessToken })

  const threw = await runWithTools('Hi', { ...base, provider: provider(async () => { throw new Error('no Google credentials here') }) })
  assert.equal(threw.error?.code, 'authentication_error', JSON.stringify(threw.error))
  assert.match(threw.error.message, /provider\.accessToken failed: it threw "no Google credentials here"/)

  const odd = await runWithTools('Hi', { ...base, provider: provider(() => ({ access_token: 'ya29.in-the-wrong-field' })) })
  assert.equal(odd.error?.code, 'invalid_request', JSON.stringify(odd.error))
  assert.match(odd.error.message, /provider\.accessToken answered/)
  assert.ok(!odd.error.message.includes('ya29.in-the-wrong-field'))

  const fixed = await runWithTools('Hi', { ...base, provider: provider('ya29.a-string-not-a-function') })
  assert.equal(fixed.error?.code, 'invalid_request')
  assert.match(fixed.error.message, /provider\.accessToken must be a function/)
  assert.ok(!fixed.error.message.includes('ya29.a-string'))

  const both = await runWithTools('Hi', { ...base, authToken: 'ya29.x', provider: provider(async () => 'ya29.y') })
  assert.equal(both.error?.code, 'invalid_request')
  assert.match(both.error.message, /either provider\.accessToken or the authToken option/)

  assert.equal(api.requests.length, 0, 'nothing was sent')
})

test('a fetched token a platform echoes back in its error is redacted, streamed or not', async (t) => {
  const { api, accessToken, tokens } = await googleDoor(t, 'google-cloud')
  const g = GOOGLE['google-cloud']
  const options = { provider: { ...g.provider, accessToken }, baseURL: api.url, model: g.model, tools: [] }
  api.script({ status: 400, error: { type: 'invalid_request_error', message: 'messages: the bearer {echo:authorization} is not welcome here' } })
  const r = await runWithTools('Hi', options)
  assert.equal(r.error?.code, 'invalid_request', JSON.stringify(r.error))
  assert.ok(r.error.message.includes('is not welcome here') && r.error.message.includes('[redacted]'), r.error.message)
  assert.ok(!JSON.stringify(r).includes(tokens[0]), 'the token never appears')

  api.script({ status: 400, error: { type: 'invalid_request_error', message: 'streamed: {echo:authorization}' } })
  const stream = streamWithTools('Hi', options)
  const parts = await collect(stream)
  const streamed = await stream.result
  assert.equal(streamed.error?.code, 'invalid_request')
  for (const token of tokens) assert.ok(!JSON.stringify([parts, streamed]).includes(token), 'the token never appears in a part')
})
