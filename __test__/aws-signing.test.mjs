// AWS Signature Version 4 on Amazon Bedrock and Claude Platform on AWS, against the stand-in's
// doors, which recompute every signature independently: credentials given as an object, from a
// function (sync or async, asked again only when they near their expiry), from the environment
// and from a shared credentials file with AWS_PROFILE (AWS's default chain); a wrong secret
// refused by the signature check; no credentials at all refused before anything is sent; and
// no secret key or session token in any error.
import { leftTheMachine } from './platform-env.mjs'
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runWithTools, streamWithTools } from '../index.mjs'
import { reply, startMockApi, text, toolUse } from '../stand-in/index.mjs'
import { TEST_CREDENTIALS } from '../stand-in/platforms/index.mjs'
import { collect, freshName, orderTool } from './helpers.mjs'

after(() => assert.deepEqual(leftTheMachine, [], 'every connection stayed on 127.0.0.1'))

const [LONG_TERM, TEMPORARY] = TEST_CREDENTIALS.aws
const WORKSPACE = TEST_CREDENTIALS.awsWorkspace

/** Each signed platform: the door's region (a signature's scope must name it) and its run options. */
const PLATFORMS = {
  bedrock: { region: 'us-east-1', service: 'bedrock', options: (api) => ({ provider: { type: 'bedrock', region: 'us-east-1' }, baseURL: api.url, model: 'us.anthropic.claude-sonnet-5-5-v1:0' }) },
  aws: {
    region: 'us-west-2',
    service: 'aws-external-anthropic',
    options: (api) => ({ provider: { type: 'aws', region: 'us-west-2', workspaceId: WORKSPACE.id }, baseURL: api.url, model: 'claude-sonnet-5-5' }),
  },
}

async function door(t, platform) {
  const api = await startMockApi({ platform })
  t.after(() => api.close())
  return api
}

/** Sets environment variables for one test. */
function withEnv(t, vars) {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  Object.assign(process.env, vars)
  t.after(() => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  })
}

function assertSigned(record, p, accessKeyId) {
  assert.deepEqual(record.broken ?? null, null)
  assert.equal(record.caller?.accessKeyId, accessKeyId, 'the stand-in verified the signature')
  assert.equal(record.caller.region, p.region)
  assert.match(record.headers.authorization, new RegExp(`^AWS4-HMAC-SHA256 Credential=${accessKeyId}/\\d{8}/${p.region}/${p.service}/aws4_request, SignedHeaders=`))
  assert.match(record.headers['x-amz-content-sha256'], /^[0-9a-f]{64}$/)
}

function assertNoSecret(error) {
  const all = JSON.stringify(error)
  for (const c of TEST_CREDENTIALS.aws) {
    assert.ok(!all.includes(c.secretAccessKey), 'the secret key never appears')
    if (c.sessionToken) assert.ok(!all.includes(c.sessionToken), 'the session token never appears')
  }
}

for (const [platform, p] of Object.entries(PLATFORMS)) {
  test(`${platform}: a tool round signed with credentials given as an object, not streamed`, async (t) => {
    const api = await door(t, platform)
    const tool = freshName(`signed_${platform}`)
    const calls = orderTool(tool)
    api.script(reply([toolUse(tool, { orderId: '4821' }, 'toolu_s1')]), reply([text('Order 4821 has shipped.')]))
    // Given credentials win over the platform's key variables.
    withEnv(t, { AWS_BEARER_TOKEN_BEDROCK: 'ABSK-env-key-not-used', ANTHROPIC_AWS_API_KEY: 'sk-ant-env-key-not-used' })
    const options = p.options(api)
    options.provider.credentials = { accessKeyId: LONG_TERM.accessKeyId, secretAccessKey: LONG_TERM.secretAccessKey }
    const r = await runWithTools('Where is order 4821?', { ...options, tools: [tool] })
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Order 4821 has shipped.')
    assert.equal(calls.length, 1)
    assert.equal(api.requests.length, 2)
    for (const record of api.requests) assertSigned(record, p, LONG_TERM.accessKeyId)
    assert.equal(api.requests[0].headers['x-amz-security-token'], undefined)
    if (platform === 'aws') assert.match(api.requests[0].headers.authorization, /anthropic-workspace-id/)
  })

  test(`${platform}: a tool round streamed, with temporary credentials from an async function asked once`, async (t) => {
    const api = await door(t, platform)
    const tool = freshName(`signed_stream_${platform}`)
    orderTool(tool)
    api.script(reply([text('Let me look.'), toolUse(tool, { orderId: '4821' }, 'toolu_s2')]), reply([text('Order 4821 is on its way.')]))
    let asked = 0
    const options = p.options(api)
    options.provider.credentials = async () => {
      asked++
      await new Promise((resolve) => setTimeout(resolve, 5))
      return { ...TEMPORARY, expiration: new Date(Date.now() + 3600_000) }
    }
    const stream = streamWithTools('Where is order 4821?', { ...options, tools: [tool] })
    const parts = await collect(stream)
    const result = await stream.result
    assert.equal(result.error, null, JSON.stringify(result.error))
    assert.equal(result.data.text, 'Order 4821 is on its way.')
    assert.ok(parts.some((part) => part.type === 'tool-result'))
    assert.equal(api.requests.length, 2)
    for (const record of api.requests) {
      assertSigned(record, p, TEMPORARY.accessKeyId)
      assert.equal(record.headers['x-amz-security-token'], TEMPORARY.sessionToken)
    }
    assert.equal(asked, 1, 'credentials are kept until shortly before they expire')
  })

  test(`${platform}: a wrong secret is refused by the signature check as authentication_error, no secret in it`, async (t) => {
    const api = await door(t, platform)
    const options = p.options(api)
    const wrong = 'wrong/secret/access/key/that/must/never/show'
    options.provider.credentials = () => ({ accessKeyId: LONG_TERM.accessKeyId, secretAccessKey: wrong })
    const r = await runWithTools('Hi', { ...options, tools: [] })
    assert.equal(r.error?.code, 'authentication_error', JSON.stringify(r.error))
    assert.match(r.error.message, /signature/i)
    assert.ok(!JSON.stringify(r.error).includes(wrong), r.error.message)
    assert.equal(api.requests.length, 1, 'an auth failure is not retried')
  })

  test(`${platform}: no credentials anywhere is authentication_error naming where they were looked for, nothing sent`, async (t) => {
    const api = await door(t, platform)
    api.script(reply([text('must not be asked')]))
    const started = Date.now()
    const r = await runWithTools('Hi', { ...p.options(api), tools: [] })
    assert.equal(r.error?.code, 'authentication_error', JSON.stringify(r.error))
    for (const where of ['apiKey', 'provider.credentials', 'AWS_ACCESS_KEY_ID', 'AWS_PROFILE', 'instance']) {
      assert.ok(r.error.message.includes(where), `${r.error.message} should name ${where}`)
    }
    assert.ok(r.error.message.includes(platform === 'bedrock' ? 'AWS_BEARER_TOKEN_BEDROCK' : 'ANTHROPIC_AWS_API_KEY'), r.error.message)
    assert.equal(api.requests.length, 0, 'nothing may be sent')
    assert.ok(Date.now() - started < 10_000, 'the lookup is bounded')
  })
}

test('the default chain reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, and the region AWS_REGION', async (t) => {
  const api = await door(t, 'bedrock')
  withEnv(t, { AWS_ACCESS_KEY_ID: TEMPORARY.accessKeyId, AWS_SECRET_ACCESS_KEY: TEMPORARY.secretAccessKey, AWS_SESSION_TOKEN: TEMPORARY.sessionToken, AWS_REGION: 'us-east-1' })
  api.script(reply([text('Signed from the environment.')]))
  const r = await runWithTools('Hi', { provider: 'bedrock', baseURL: api.url, model: 'us.anthropic.claude-sonnet-5-5-v1:0', tools: [] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assertSigned(api.requests[0], PLATFORMS.bedrock, TEMPORARY.accessKeyId)
  assert.equal(api.requests[0].headers['x-amz-security-token'], TEMPORARY.sessionToken)
})

test('a profile of the shared credentials file, chosen by AWS_PROFILE, with its region from the config file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'atc-aws-profile-'))
  writeFileSync(join(dir, 'credentials'), `[other]\naws_access_key_id = AKIAOTHERNOTKNOWN001\naws_secret_access_key = nope\n\n[ops]\naws_access_key_id = ${LONG_TERM.accessKeyId}\naws_secret_access_key = ${LONG_TERM.secretAccessKey}\n`)
  writeFileSync(join(dir, 'config'), '[profile ops]\nregion = us-west-2\n')
  withEnv(t, { AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'), AWS_CONFIG_FILE: join(dir, 'config'), AWS_PROFILE: 'ops', ANTHROPIC_AWS_API_KEY: 'sk-ant-profile-wins-over-this-key' })
  for (const platform of ['aws', 'bedrock']) {
    const api = await door(t, platform === 'aws' ? 'aws' : { type: 'bedrock', region: 'us-west-2' })
    api.script(reply([text('Signed from the profile.')]))
    const model = platform === 'aws' ? 'claude-sonnet-5-5' : 'us.anthropic.claude-sonnet-5-5-v1:0'
    const provider = platform === 'aws' ? { type: 'aws', workspaceId: WORKSPACE.id } : 'bedrock'
    const r = await runWithTools('Hi', { provider, baseURL: api.url, model, tools: [] })
    assert.equal(r.error, null, `${platform}: ${JSON.stringify(r.error)}`)
    assertSigned(api.requests[0], { ...PLATFORMS[platform], region: 'us-west-2' }, LONG_TERM.accessKeyId)
  }
})

test('Bedrock signed: an error maps by its AWS type and is retried, each attempt signed anew', async (t) => {
  const api = await door(t, 'bedrock')
  const options = PLATFORMS.bedrock.options(api)
  options.provider.credentials = { ...LONG_TERM }
  api.script({ platformError: 'throttle' }, reply([text('Not throttled now.')]))
  const ok = await runWithTools('Hi', { ...options, tools: [] })
  assert.equal(ok.error, null, JSON.stringify(ok.error))
  assert.equal(api.requests.length, 2)
  for (const record of api.requests) assertSigned(record, PLATFORMS.bedrock, LONG_TERM.accessKeyId)
  api.script({ platformError: 'throttle' })
  const limited = await runWithTools('Hi', { ...options, tools: [], maxRetries: 0 })
  assert.equal(limited.error.code, 'rate_limited')
  assert.match(limited.error.message, /ThrottlingException/)
})

test('a credentials function that throws, or answers something else, fails the run before anything is sent', async (t) => {
  const api = await door(t, 'bedrock')
  const options = PLATFORMS.bedrock.options(api)
  const threw = await runWithTools('Hi', { ...options, provider: { ...options.provider, credentials: async () => { throw new Error('no session: log in again') } }, tools: [] })
  assert.equal(threw.error?.code, 'authentication_error', JSON.stringify(threw.error))
  assert.match(threw.error.message, /provider\.credentials failed: it threw "no session: log in again"/)
  const odd = await runWithTools('Hi', { ...options, provider: { ...options.provider, credentials: () => ({ accessKeyId: 'AKIA-only' }) }, tools: [] })
  assert.equal(odd.error?.code, 'invalid_request', JSON.stringify(odd.error))
  assert.match(odd.error.message, /accessKeyId and secretAccessKey/)
  const bad = await runWithTools('Hi', { ...options, provider: { ...options.provider, credentials: 'AKIA' }, tools: [] })
  assert.equal(bad.error?.code, 'invalid_request', JSON.stringify(bad.error))
  assert.match(bad.error.message, /provider\.credentials/)
  assert.equal(api.requests.length, 0)
  assertNoSecret(threw.error)
})

test("the platforms' own base-URL variables: ANTHROPIC_BEDROCK_BASE_URL and ANTHROPIC_AWS_BASE_URL, below baseURL", async (t) => {
  const bedrock = await door(t, 'bedrock')
  const aws = await door(t, 'aws')
  withEnv(t, { ANTHROPIC_BEDROCK_BASE_URL: bedrock.url, ANTHROPIC_AWS_BASE_URL: aws.url })
  bedrock.script(reply([text('Reached through ANTHROPIC_BEDROCK_BASE_URL.')]))
  const b = await runWithTools('Hi', { provider: 'bedrock', apiKey: TEST_CREDENTIALS.bedrockApiKey, model: 'us.anthropic.claude-sonnet-5-5-v1:0', tools: [] })
  assert.equal(b.error, null, JSON.stringify(b.error))
  assert.equal(bedrock.requests.length, 1)
  aws.script(reply([text('Reached through ANTHROPIC_AWS_BASE_URL.')]))
  const a = await runWithTools('Hi', { provider: { type: 'aws', workspaceId: WORKSPACE.id }, apiKey: WORKSPACE.apiKey, model: 'claude-sonnet-5-5', tools: [] })
  assert.equal(a.error, null, JSON.stringify(a.error))
  assert.equal(aws.requests.length, 1)
  // baseURL wins over the variable.
  const other = await door(t, 'bedrock')
  other.script(reply([text('Reached through baseURL.')]))
  const o = await runWithTools('Hi', { provider: 'bedrock', baseURL: other.url, apiKey: TEST_CREDENTIALS.bedrockApiKey, model: 'us.anthropic.claude-sonnet-5-5-v1:0', tools: [] })
  assert.equal(o.error, null, JSON.stringify(o.error))
  assert.equal(other.requests.length, 1)
  assert.equal(bedrock.requests.length, 1)
})
