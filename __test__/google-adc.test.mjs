
test('an external account (workload identity federation) exchanges a file\'s or a URL\'s token at its token_url', async (t) => {
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
