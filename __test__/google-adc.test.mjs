// Google Application Default Credentials, read by the engine itself: a service account's key file
// named by GOOGLE_APPLICATION_CREDENTIALS (its RS256 JWT exchanged at the key's token_uri, the
// stand-in's token endpoint, which checks the signature), gcloud's user credentials in
// CLOUDSDK_CONFIG (the refresh token exchanged), and the metadata server (GCE_METADATA_HOST, here
// a local server); the project taken from the key file when no option or variable names one;
// a token kept across runs; no credentials at all refused before anything is sent, saying where
// they were looked for, and no private key or token in any error.
import { leftTheMachine, serviceAccount, toLocalTokenEndpoint } from './platform-env.mjs'
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GoogleAuth } from 'google-auth-library'
import { runWithTools, streamWithTools } from '../index.mjs'
import { reply, startMockApi, text, toolUse } from '../stand-in/index.mjs'
import { TEST_CREDENTIALS } from '../stand-in/platforms/index.mjs'
import { collect, freshName, orderTool } from './helpers.mjs'

after(() => assert.deepEqual(leftTheMachine, [], 'every connection stayed on 127.0.0.1'))

const GOOGLE = {
  vertex: {
    // No projectId: the key file's project_id is the run's.
    provider: { type: 'vertex', region: 'us-east5' },
    model: 'claude-sonnet-5-5@20261001',
    path: `/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/us-east5/publishers/anthropic/models/claude-sonnet-5-5@20261001:rawPredict`,
  },
  'google-cloud': {
    provider: { type: 'google-cloud', workspaceId: TEST_CREDENTIALS.googleWorkspace },
    model: 'claude-sonnet-5-5',
    path: `/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/global/workspaces/${TEST_CREDENTIALS.googleWorkspace}/invoke/v1/messages`,
  },
}

/** Sets environment variables for one test (undefined: unset). */
function withEnv(t, vars) {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  const set = (values) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
  set(vars)
  t.after(() => set(before))
}

const scratch = () => mkdtempSync(join(tmpdir(), 'atc-adc-'))
const sentTo = (api) => api.requests.filter((q) => q.path !== '/token')
const tokenRequests = (api) => api.requests.filter((q) => q.path === '/token')

for (const [type, g] of Object.entries(GOOGLE)) {
  test(`${type}: a service account key file (GOOGLE_APPLICATION_CREDENTIALS) signs a JWT exchanged at its token_uri; its token is kept across runs`, async (t) => {
    const sa = serviceAccount()
    const api = await startMockApi({ platform: { type, serviceAccounts: [sa.account] } })
    t.after(() => api.close())
    sa.keyFile.token_uri = `${api.url}/token`
    const file = join(scratch(), 'key.json')
    writeFileSync(file, JSON.stringify(sa.keyFile))
    withEnv(t, { GOOGLE_APPLICATION_CREDENTIALS: file })
    const tool = freshName(`adc_${type.replace('-', '_')}`)
    const calls = orderTool(tool)
    const options = { provider: g.provider, baseURL: api.url, model: g.model, tools: [tool] }
    api.script(reply([toolUse(tool, { orderId: '4821' }, 'toolu_adc1')]), reply([text('Shipped.')]))
    const r = await runWithTools('Where is order 4821?', options)
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Shipped.')
    assert.equal(calls.length, 1)
    assert.equal(tokenRequests(api).length, 1, 'one exchange at the token endpoint')
    assert.equal(tokenRequests(api)[0].status, 200, 'the stand-in verified the JWT')
    const sent = sentTo(api)
    assert.equal(sent[0].path, g.path)
    assert.match(sent[0].headers.authorization, /^Bearer ya29\.standin\./)

    api.script(reply([text('Looking.'), toolUse(tool, { orderId: '4821' }, 'toolu_adc2')]), reply([text('Shipped, streamed.')]))
    const stream = streamWithTools('Where is order 4821?', options)
    await collect(stream)
    const streamed = await stream.result
    assert.equal(streamed.error, null, JSON.stringify(streamed.error))
    assert.equal(tokenRequests(api).length, 1, 'the token was kept for the next run')
    assert.equal(sentTo(api).at(-1).headers.authorization, sent[0].headers.authorization)

    // Refused by the platform (expired there): fetched again once, the request sent again.
    api.platform.expireTokens()
    api.script(reply([text('Fresh token.')]))
    const again = await runWithTools('Hi', { ...options, tools: [] })
    assert.equal(again.error, null, JSON.stringify(again.error))
    assert.equal(tokenRequests(api).length, 2)
  })
}

test('vertex: gcloud user credentials (CLOUDSDK_CONFIG/application_default_credentials.json) exchange their refresh token', async (t) => {
  const user = { client_id: 'standin-client.apps.googleusercontent.com', client_secret: 'standin-client-secret-0001', refresh_token: '1//standin-refresh-token-0001' }
  const api = await startMockApi({ platform: { type: 'vertex', users: [user] } })
  t.after(() => api.close())
  const dir = scratch()
  writeFileSync(join(dir, 'application_default_credentials.json'), JSON.stringify({ type: 'authorized_user', ...user, quota_project_id: TEST_CREDENTIALS.googleProject, token_uri: `${api.url}/token` }))
  withEnv(t, { CLOUDSDK_CONFIG: dir })
  api.script(reply([text('Hello, user.')]))
  const r = await runWithTools('Hi', { provider: { type: 'vertex', region: 'global' }, baseURL: api.url, model: 'claude-sonnet-5-5@20261001', tools: [] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(tokenRequests(api).length, 1)
  assert.match(sentTo(api)[0].path, new RegExp(`/projects/${TEST_CREDENTIALS.googleProject}/locations/global/`))
  assert.equal(sentTo(api)[0].headers['x-goog-user-project'], TEST_CREDENTIALS.googleProject, 'the quota project, as Google\'s libraries send it')

  // A refresh token the endpoint does not know: authentication_error quoting the endpoint, no secret.
  // (Another folder: the first file's token is kept for the process.)
  const revoked = scratch()
  writeFileSync(join(revoked, 'application_default_credentials.json'), JSON.stringify({ type: 'authorized_user', ...user, refresh_token: '1//revoked-refresh-token', token_uri: `${api.url}/token` }))
  process.env.CLOUDSDK_CONFIG = revoked
  const refused = await runWithTools('Hi', { provider: { type: 'vertex', region: 'global', projectId: 'p' }, baseURL: api.url, model: 'claude-sonnet-5-5@20261001', tools: [] })
  assert.equal(refused.error?.code, 'authentication_error', JSON.stringify(refused.error))
  assert.match(refused.error.message, /invalid_grant/)
  const all = JSON.stringify(refused)
  for (const secret of ['1//revoked-refresh-token', user.client_secret]) assert.ok(!all.includes(secret), `${secret} in ${all}`)
  assert.equal(sentTo(api).length, 1, 'nothing more was sent to the platform')
})

test('google-cloud: the metadata server (GCE_METADATA_HOST) answers the token when no file is found', async (t) => {
  const sa = serviceAccount()
  const api = await startMockApi({ platform: { type: 'google-cloud', serviceAccounts: [sa.account] } })
  t.after(() => api.close())
  sa.keyFile.token_uri = `${api.url}/token`
  const auth = new GoogleAuth({ credentials: sa.keyFile, scopes: ['https://www.googleapis.com/auth/cloud-platform'], clientOptions: { transporterOptions: toLocalTokenEndpoint(api.url) } })
  const asked = []
  const metadata = http.createServer(async (req, res) => {
    asked.push({ url: req.url, flavor: req.headers['metadata-flavor'] })
    if (req.headers['metadata-flavor'] !== 'Google' || !req.url.startsWith('/computeMetadata/v1/instance/service-accounts/default/token')) {
      res.writeHead(403).end('Missing Metadata-Flavor:Google header.')
      return
    }
    const token = await auth.getAccessToken()
    res.writeHead(200, { 'content-type': 'application/json', 'metadata-flavor': 'Google' })
    res.end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }))
  })
  await new Promise((done) => metadata.listen(0, '127.0.0.1', done))
  t.after(() => metadata.close())
  withEnv(t, { GCE_METADATA_HOST: `127.0.0.1:${metadata.address().port}`, METADATA_SERVER_DETECTION: undefined })
  api.script(reply([text('Hello from the instance.')]))
  const r = await runWithTools('Hi', { provider: { type: 'google-cloud', projectId: TEST_CREDENTIALS.googleProject, workspaceId: TEST_CREDENTIALS.googleWorkspace }, baseURL: api.url, model: 'claude-sonnet-5-5', tools: [] })
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(asked.length, 1)
  assert.equal(asked[0].flavor, 'Google')
  assert.match(asked[0].url, /scopes=https:\/\/www\.googleapis\.com\/auth\/cloud-platform/)
})

test('no Google credentials at all: authentication_error saying where they were looked for, nothing sent, the metadata probe bounded on loopback', async (t) => {
  const api = await startMockApi({ platform: 'vertex' })
  t.after(() => api.close())
  // platform-env.mjs points GCE_METADATA_HOST at a closed loopback port; the probe is made.
  withEnv(t, { METADATA_SERVER_DETECTION: undefined, CLOUDSDK_CONFIG: scratch() })
  const started = Date.now()
  const r = await runWithTools('Hi', { provider: { type: 'vertex', region: 'global', projectId: 'p' }, baseURL: api.url, model: 'claude-sonnet-5-5@20261001', tools: [] })
  assert.equal(r.error?.code, 'authentication_error', JSON.stringify(r.error))
  for (const where of ['authToken', 'provider.accessToken', 'GOOGLE_APPLICATION_CREDENTIALS', 'application_default_credentials.json', 'metadata server at 127.0.0.1:9']) {
    assert.ok(r.error.message.includes(where), `${r.error.message} should name ${where}`)
  }
  assert.ok(Date.now() - started < 10_000, 'bounded')
  assert.equal(api.requests.length, 0, 'nothing was sent')

  // A key the token endpoint does not know: its refusal is passed on, the private key never.
  const sa = serviceAccount()
  sa.keyFile.token_uri = `${api.url}/token`
  const file = join(scratch(), 'unknown-key.json')
  writeFileSync(file, JSON.stringify(sa.keyFile))
  withEnv(t, { GOOGLE_APPLICATION_CREDENTIALS: file })
  const unknown = await runWithTools('Hi', { provider: { type: 'vertex', region: 'global' }, baseURL: api.url, model: 'claude-sonnet-5-5@20261001', tools: [] })
  assert.equal(unknown.error?.code, 'authentication_error', JSON.stringify(unknown.error))
  assert.match(unknown.error.message, /invalid_grant/)
  const keyBody = sa.keyFile.private_key.split('\n')[1]
  assert.ok(!JSON.stringify(unknown).includes(keyBody), 'the private key never appears')
  assert.equal(sentTo(api).length, 0)
})

test("an external account (workload identity federation) exchanges a file's or a URL's token at its token_url", async (t) => {
  const oidc = 'eyJhbGciOiJSUzI1NiJ9.standin-oidc-subject-token.sig'
  const api = await startMockApi({ platform: { type: 'vertex', subjectTokens: [oidc] } })
  t.after(() => api.close())
  const dir = scratch()
  writeFileSync(join(dir, 'oidc-token'), `${oidc}\n`)
  const account = (credential_source) => ({
    type: 'external_account',
    audience: '//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/vercel',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    token_url: `${api.url}/token`,
    credential_source,
  })
  const fromFile = join(dir, 'external-file.json')
  writeFileSync(fromFile, JSON.stringify(account({ file: join(dir, 'oidc-token') })))
  withEnv(t, { GOOGLE_APPLICATION_CREDENTIALS: fromFile })
  const options = { provider: { type: 'vertex', region: 'global', projectId: TEST_CREDENTIALS.googleProject }, baseURL: api.url, model: 'claude-sonnet-5-5@20261001', tools: [] }
  api.script(reply([text('Federated.')]))
  const r = await runWithTools('Hi', options)
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(tokenRequests(api).length, 1)
  assert.equal(tokenRequests(api)[0].status, 200)

  // A URL source answering JSON, with the headers the file names.
  const served = []
  const idp = http.createServer((req, res) => {
    served.push(req.headers['x-idp'])
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id_token: oidc }))
  })
  await new Promise((done) => idp.listen(0, '127.0.0.1', done))
  t.after(() => idp.close())
  const fromUrl = join(dir, 'external-url.json')
  const url = `http://127.0.0.1:${idp.address().port}/token`
  writeFileSync(fromUrl, JSON.stringify(account({ url, headers: { 'x-idp': 'yes' }, format: { type: 'json', subject_token_field_name: 'id_token' } })))
  process.env.GOOGLE_APPLICATION_CREDENTIALS = fromUrl
  api.script(reply([text('Federated by URL.')]))
  const byUrl = await runWithTools('Hi', options)
  assert.equal(byUrl.error, null, JSON.stringify(byUrl.error))
  assert.deepEqual(served, ['yes'])

  // A subject token the service does not take: invalid_grant, the token never quoted.
  const stranger = join(dir, 'external-stranger.json')
  writeFileSync(join(dir, 'other-token'), 'eyJ.not-a-known-subject.sig')
  writeFileSync(stranger, JSON.stringify(account({ file: join(dir, 'other-token') })))
  process.env.GOOGLE_APPLICATION_CREDENTIALS = stranger
  const refused = await runWithTools('Hi', options)
  assert.equal(refused.error?.code, 'authentication_error', JSON.stringify(refused.error))
  assert.match(refused.error.message, /invalid_grant/)
  assert.ok(!JSON.stringify(refused).includes('not-a-known-subject'))
})

test('service account impersonation: an external account naming one, and a gcloud impersonated_service_account file; a refusal says so without a secret', async (t) => {
  const oidc = 'eyJhbGciOiJSUzI1NiJ9.standin-oidc-subject-token.sig'
  const user = { client_id: 'standin-client.apps.googleusercontent.com', client_secret: 'standin-client-secret-0001', refresh_token: '1//standin-refresh-token-0001' }
  const target = 'agent@standin-project.iam.gserviceaccount.com'
  const api = await startMockApi({ platform: { type: 'vertex', subjectTokens: [oidc], users: [user], impersonable: [target] } })
  t.after(() => api.close())
  const dir = scratch()
  writeFileSync(join(dir, 'oidc-token'), oidc)
  const impersonation = (email) => `${api.url}/v1/projects/-/serviceAccounts/${email}:generateAccessToken`
  const isImpersonation = (q) => q.path.endsWith(':generateAccessToken')
  const options = { provider: { type: 'vertex', region: 'global', projectId: TEST_CREDENTIALS.googleProject }, baseURL: api.url, model: 'claude-sonnet-5-5@20261001', tools: [] }
  const bearerOfLastCall = () => sentTo(api).filter((q) => !isImpersonation(q)).at(-1).headers.authorization.replace(/^Bearer /, '')

  // An external account: the federated token is traded for the service account's, which the request carries.
  const external = join(dir, 'external-impersonating.json')
  writeFileSync(external, JSON.stringify({
    type: 'external_account',
    audience: '//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/vercel',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    token_url: `${api.url}/token`,
    service_account_impersonation_url: impersonation(target),
    service_account_impersonation: { token_lifetime_seconds: 1800 },
    credential_source: { file: join(dir, 'oidc-token') },
  }))
  withEnv(t, { GOOGLE_APPLICATION_CREDENTIALS: external })
  api.script(reply([text('As the service account.')]))
  const r = await runWithTools('Hi', options)
  assert.equal(r.error, null, JSON.stringify(r.error))
  const asked = api.requests.find(isImpersonation)
  assert.ok(asked, 'generateAccessToken was asked')
  assert.deepEqual(asked.body, { scope: ['https://www.googleapis.com/auth/cloud-platform'], lifetime: '1800s' })
  assert.equal(api.platform.subjectOf(bearerOfLastCall()), target, 'the request carried the impersonated token')

  // gcloud's impersonated_service_account file, a user's refresh token as its source.
  const gcloud = join(dir, 'impersonated.json')
  writeFileSync(gcloud, JSON.stringify({
    type: 'impersonated_service_account',
    service_account_impersonation_url: impersonation(target),
    source_credentials: { type: 'authorized_user', ...user, token_uri: `${api.url}/token` },
    delegates: [],
  }))
  process.env.GOOGLE_APPLICATION_CREDENTIALS = gcloud
  api.script(reply([text('As the service account, for a user.')]))
  const viaUser = await runWithTools('Hi', options)
  assert.equal(viaUser.error, null, JSON.stringify(viaUser.error))
  assert.equal(api.platform.subjectOf(bearerOfLastCall()), target)

  // A service account the caller may not impersonate: authentication_error naming the permission; no secret in it.
  const denied = join(dir, 'impersonated-denied.json')
  writeFileSync(denied, JSON.stringify({
    type: 'impersonated_service_account',
    service_account_impersonation_url: impersonation('stranger@standin-project.iam.gserviceaccount.com'),
    source_credentials: { type: 'authorized_user', ...user, token_uri: `${api.url}/token` },
  }))
  process.env.GOOGLE_APPLICATION_CREDENTIALS = denied
  const before = sentTo(api).filter((q) => !isImpersonation(q)).length
  const refused = await runWithTools('Hi', options)
  assert.equal(refused.error?.code, 'authentication_error', JSON.stringify(refused.error))
  assert.match(refused.error.message, /PERMISSION_DENIED.*iam\.serviceAccounts\.getAccessToken/)
  for (const secret of [user.client_secret, user.refresh_token]) assert.ok(!JSON.stringify(refused).includes(secret))
  assert.equal(sentTo(api).filter((q) => !isImpersonation(q)).length, before, 'nothing was sent to the platform')
})
