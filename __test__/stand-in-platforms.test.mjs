// The stand-in's cloud platform doors, proven with the official clients before they judge the
// engine: @anthropic-ai/bedrock-sdk, vertex-sdk, foundry-sdk, aws-sdk and google-cloud-sdk each
// send a plain message, a streamed one and a tool round to the stand-in on 127.0.0.1, and get a
// refusal they surface as the real platform's. Then what no official client sends: a body changed
// after signing, a scope of another region or an old date, Bedrock bodies with model / thread /
// no version, a bad JWT at the token endpoint, and the event-stream frames checked by AWS's own
// decoder (a flipped byte fails a CRC).
import { leftTheMachine, NodeSha256, serviceAccount, toLocalTokenEndpoint } from './platform-env.mjs';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { AnthropicFoundry } from '@anthropic-ai/foundry-sdk';
import { AnthropicAws } from '@anthropic-ai/aws-sdk';
import { AnthropicGoogleCloud } from '@anthropic-ai/google-cloud-sdk';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { GoogleAuth, Impersonated, UserRefreshClient } from 'google-auth-library';
import { reply, startMockApi, text, toolUse } from '../stand-in/index.mjs';
import { TEST_CREDENTIALS, encodeFrame } from '../stand-in/platforms/index.mjs';

const [LONG_TERM, TEMPORARY] = TEST_CREDENTIALS.aws;
const WORKSPACE = TEST_CREDENTIALS.awsWorkspace;
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-5-5-v1:0';
const FIRST_PARTY_MODEL = 'claude-sonnet-5-5';
const VERTEX_MODEL = 'claude-sonnet-5-5@20261001';
const TOOLS = [{ name: 'get_order_status', description: 'Looks up an order', input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } }];
const ASK = [{ role: 'user', content: 'Where is order 4821?' }];

const servers = [];
async function standIn(platform) {
  const api = await startMockApi({ platform });
  servers.push(api);
  return api;
}
after(async () => {
  await Promise.all(servers.map((api) => api.close()));
  assert.deepEqual(leftTheMachine, [], 'every connection stayed on 127.0.0.1');
});

const errorOf = async (promise) => {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected the call to fail');
};

/**
 * The same three calls on every platform: a plain message, a streamed one, and a tool round (a
 * tool_use, then the tool_result sent back). `extra`: what each request adds (Vertex's model
 * stays in the path). Returns the records of the stand-in.
 */
async function threeCalls(api, client, model) {
  api.script(reply([text('Hello from the cloud.')]));
  const plain = await client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
  assert.equal(plain.content[0].text, 'Hello from the cloud.');
  assert.equal(plain.stop_reason, 'end_turn');

  api.script(reply([text('Streamed hello, in pieces.')]));
  const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi again' }] });
  const deltas = [];
  stream.on('text', (t) => deltas.push(t));
  const streamed = await stream.finalMessage();
  assert.equal(streamed.content[0].text, 'Streamed hello, in pieces.');
  assert.ok(deltas.length > 1, 'the text came in several deltas');

  api.script(reply([toolUse('get_order_status', { orderId: '4821' }, 'toolu_01Order')]), reply([text('Order 4821 has shipped.')]));
  const first = await client.messages.create({ model, max_tokens: 256, tools: TOOLS, messages: ASK });
  assert.equal(first.stop_reason, 'tool_use');
  const call = first.content.find((b) => b.type === 'tool_use');
  assert.deepEqual(call.input, { orderId: '4821' });
  const messages = [...ASK, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'shipped' }] }];
  const final = await client.messages.stream({ model, max_tokens: 256, tools: TOOLS, messages }).finalMessage();
  assert.equal(final.content[0].text, 'Order 4821 has shipped.');
  for (const record of api.requests) assert.equal(record.broken, undefined, `refused: ${JSON.stringify(record.broken)}`);
  return api.requests.slice(-4);
}

// ---- Amazon Bedrock -------------------------------------------------------------------------------

const bedrock = (api, extra = {}) =>
  new AnthropicBedrock({ baseURL: api.url, awsRegion: 'us-east-1', awsAccessKey: LONG_TERM.accessKeyId, awsSecretKey: LONG_TERM.secretAccessKey, maxRetries: 0, ...extra });

test('bedrock: bedrock-sdk signs with SigV4 and gets JSON and event-stream answers, a tool round too', async () => {
  const api = await standIn('bedrock');
  const records = await threeCalls(api, bedrock(api), BEDROCK_MODEL);
  const [plain, streamed] = api.requests;
  assert.equal(plain.path, `/model/${BEDROCK_MODEL}/invoke`);
  assert.equal(streamed.path, `/model/${BEDROCK_MODEL}/invoke-with-response-stream`);
  assert.match(plain.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIASTANDINTESTKEY01\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=[^ ]*host;[^ ]*x-amz-date/);
  assert.equal(plain.body.anthropic_version, '2026-10-21');
  assert.equal(plain.body.model, undefined);
  assert.equal(streamed.sseEvents.includes('ping'), false, 'Bedrock sends no pings');
  assert.equal(records[3].fullBody.stream, true);
  assert.equal(records[2].fullBody.messages.length, 1);
});

test('bedrock: a temporary key signs with its session token, and a Bedrock API key goes as a bearer', async () => {
  const api = await standIn('bedrock');
  await threeCalls(api, bedrock(api, { awsAccessKey: TEMPORARY.accessKeyId, awsSecretKey: TEMPORARY.secretAccessKey, awsSessionToken: TEMPORARY.sessionToken }), BEDROCK_MODEL);
  assert.equal(api.requests[0].headers['x-amz-security-token'], TEMPORARY.sessionToken);
  api.reset();
  const keyed = new AnthropicBedrock({ baseURL: api.url, apiKey: TEST_CREDENTIALS.bedrockApiKey, maxRetries: 0 });
  await threeCalls(api, keyed, BEDROCK_MODEL);
  assert.equal(api.requests[0].headers.authorization, `Bearer ${TEST_CREDENTIALS.bedrockApiKey}`);
});

test('bedrock: a wrong secret, an unknown key, a session token withheld, another region: 403 as AWS answers', async () => {
  const api = await standIn('bedrock');
  const ask = (client) => errorOf(client.messages.create({ model: BEDROCK_MODEL, max_tokens: 16, messages: ASK }));
  const badSecret = await ask(bedrock(api, { awsSecretKey: 'not-the-secret' }));
  assert.equal(badSecret.status, 403);
  assert.equal(badSecret.constructor.name, 'PermissionDeniedError');
  assert.match(badSecret.headers.get('x-amzn-errortype'), /^InvalidSignatureException:/);
  assert.match(badSecret.message, /The request signature we calculated does not match/);
  assert.ok(badSecret.headers.get('x-amzn-requestid'));

  const unknown = await ask(bedrock(api, { awsAccessKey: 'AKIAUNKNOWNKEY000000' }));
  assert.match(unknown.headers.get('x-amzn-errortype'), /^UnrecognizedClientException:/);
  assert.match(unknown.message, /The security token included in the request is invalid/);
  const noToken = await ask(bedrock(api, { awsAccessKey: TEMPORARY.accessKeyId, awsSecretKey: TEMPORARY.secretAccessKey }));
  assert.match(noToken.headers.get('x-amzn-errortype'), /^UnrecognizedClientException:/);
  const region = await ask(bedrock(api, { awsRegion: 'eu-west-1' }));
  assert.equal(region.status, 403);
  assert.match(region.message, /Credential should be scoped to a valid region/);
  const badKey = await ask(new AnthropicBedrock({ baseURL: api.url, apiKey: 'ABSKbm90LWEta2V5', maxRetries: 0 }));
  assert.equal(badKey.status, 403);
  assert.equal(api.pending, 0);
});

test('bedrock: the platform refuses a pre-4.7 model under 2026-10-21, a first-party id, the old API version, a thread', async () => {
  const api = await standIn('bedrock');
  const client = bedrock(api);
  const refused = async (params, pattern) => {
    const err = await errorOf(client.messages.create({ max_tokens: 16, messages: ASK, ...params }));
    assert.equal(err.status, 400, err.message);
    assert.equal(err.constructor.name, 'BadRequestError');
    assert.match(err.headers.get('x-amzn-errortype'), /^ValidationException:/);
    assert.match(err.message, pattern);
  };
  await refused({ model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' }, /anthropic_version "2026-10-21" is not supported for this model/);
  await refused({ model: 'claude-sonnet-5-5' }, /The provided model identifier is invalid/);
  await refused({ model: BEDROCK_MODEL, thread: { type: 'create' } }, /extraneous key \[thread\] is not permitted/);
  await refused({ model: BEDROCK_MODEL, temperature: 0.5 }, /temperature: Extra inputs are not permitted/);
  const pinned = bedrock(api, { defaultHeaders: { 'anthropic-version': '2023-06-01' } });
  const err = await errorOf(pinned.messages.create({ model: BEDROCK_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(err.status, 400);
  assert.match(err.message, /anthropic_version: "2023-06-01" is not a valid enum value/);
  // The legacy value Bedrock documents, and an older model under it: served.
  const legacy = bedrock(api, { defaultHeaders: { 'anthropic-version': 'bedrock-2023-05-31' } });
  api.script(reply([text('Old but fine.')]));
  const old = await legacy.messages.create({ model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', max_tokens: 16, temperature: 0.5, messages: ASK });
  assert.equal(old.content[0].text, 'Old but fine.');
});

test('bedrock: throttling, an outage and an exception frame mid-stream reach the client as AWS sends them', async () => {
  const api = await standIn('bedrock');
  const client = bedrock(api);
  api.script({ platformError: 'throttle' }, { platformError: 'unavailable' });
  const throttled = await errorOf(client.messages.create({ model: BEDROCK_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(throttled.status, 429);
  assert.match(throttled.headers.get('x-amzn-errortype'), /^ThrottlingException:/);
  const down = await errorOf(client.messages.create({ model: BEDROCK_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(down.status, 503);
  api.script({ platformError: 'expired' }, { platformError: 'not-ready' }, { status: 500, error: { message: 'scripted' } });
  const expired = await errorOf(client.messages.create({ model: BEDROCK_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(expired.status, 403);
  assert.match(expired.headers.get('x-amzn-errortype'), /^ExpiredTokenException:/);
  assert.equal(expired.error.Message, 'The security token included in the request is expired');
  const notReady = await errorOf(client.messages.create({ model: BEDROCK_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(notReady.status, 429);
  assert.match(notReady.headers.get('x-amzn-errortype'), /^ModelNotReadyException:/);
  // An API error a test scripts goes out in Bedrock's shape.
  const scripted = await errorOf(client.messages.create({ model: BEDROCK_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(scripted.status, 500);
  assert.deepEqual(scripted.error, { message: 'scripted' });
  assert.match(scripted.headers.get('x-amzn-errortype'), /^InternalServerException:/);
  api.script({ ...reply([text('This stream breaks off.')]), sseError: { type: 'overloaded_error', message: 'Bedrock is unable to process your request.' }, sseErrorAfter: 3 });
  const broken = await errorOf(client.messages.stream({ model: BEDROCK_MODEL, max_tokens: 16, messages: ASK }).finalMessage());
  assert.match(String(broken.message), /serviceUnavailableException|Bedrock is unable to process your request/);
  assert.deepEqual(api.requests.at(-1).sseEvents.at(-1), 'exception');
});

// ---- Google Vertex AI --------------------------------------------------------------------------

/** A stand-in for a Google platform that knows a fresh service account, and a GoogleAuth for it. */
async function googleStandIn(type) {
  const sa = serviceAccount();
  const ready = await standIn({ type, serviceAccounts: [sa.account] });
  sa.keyFile.token_uri = `${ready.url}/token`;
  const googleAuth = new GoogleAuth({
    credentials: sa.keyFile,
    scopes: ['https://www.googleapis.com/auth/cloud-platform'],
    clientOptions: { transporterOptions: toLocalTokenEndpoint(ready.url) },
  });
  return { api: ready, sa, googleAuth };
}

const vertex = (api, googleAuth, extra = {}) =>
  new AnthropicVertex({ baseURL: `${api.url}/v1`, region: 'us-east5', projectId: TEST_CREDENTIALS.googleProject, googleAuth, maxRetries: 0, ...extra });

test('vertex: vertex-sdk exchanges a signed JWT at the token endpoint, then rawPredict and streamRawPredict', async () => {
  const { api, googleAuth } = await googleStandIn('vertex');
  const records = await threeCalls(api, vertex(api, googleAuth), VERTEX_MODEL);
  const base = `/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/us-east5/publishers/anthropic/models/${VERTEX_MODEL}`;
  assert.equal(api.requests[0].path, '/token', 'the first request is the token exchange');
  assert.equal(api.requests[1].path, `${base}:rawPredict`);
  assert.equal(api.requests[2].path, `${base}:streamRawPredict`);
  assert.match(api.requests[1].headers.authorization, /^Bearer ya29\.standin\./);
  assert.equal(api.requests[1].body.anthropic_version, '2026-10-21');
  assert.equal(api.requests[1].body.model, undefined);
  assert.ok(api.requests[2].sseEvents.includes('ping'), 'Vertex streams as the Messages API, pings too');
  assert.equal(records.length, 4);
  assert.equal(api.platform.tokensIssued, 1, 'one token served every call');
});

test('vertex: an expired token is 401 UNAUTHENTICATED, a project not granted 403, a thread or the old version 400', async () => {
  const { api, googleAuth } = await googleStandIn('vertex');
  const client = vertex(api, googleAuth);
  api.script(reply([text('First.')]));
  await client.messages.create({ model: VERTEX_MODEL, max_tokens: 16, messages: ASK });
  api.platform.expireTokens();
  const expired = await errorOf(client.messages.create({ model: VERTEX_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(expired.status, 401);
  assert.equal(expired.constructor.name, 'AuthenticationError');
  assert.equal(expired.error.error.status, 'UNAUTHENTICATED');
  assert.match(expired.headers.get('www-authenticate'), /^Bearer realm="https:\/\/accounts\.google\.com\/"/);

  const fresh = await googleStandIn('vertex');
  const other = vertex(fresh.api, fresh.googleAuth, { projectId: 'someone-elses-project' });
  const denied = await errorOf(other.messages.create({ model: VERTEX_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(denied.status, 403);
  assert.match(denied.message, /Permission 'aiplatform\.endpoints\.predict' denied on resource/);

  const good = vertex(fresh.api, fresh.googleAuth);
  const thread = await errorOf(good.messages.create({ model: VERTEX_MODEL, max_tokens: 16, messages: ASK, thread: { type: 'create' } }));
  assert.equal(thread.status, 400);
  assert.equal(thread.error.error.type, 'invalid_request_error');
  assert.match(thread.message, /thread: Extra inputs are not permitted/);
  const pinned = vertex(fresh.api, fresh.googleAuth, { defaultHeaders: { 'anthropic-version': '2023-06-01' } });
  const version = await errorOf(pinned.messages.create({ model: VERTEX_MODEL, max_tokens: 16, messages: ASK }));
  assert.match(version.message, /anthropic_version: Input should be 'vertex-2023-10-16' or '2026-10-21'/);
  const legacy = vertex(fresh.api, fresh.googleAuth, { defaultHeaders: { 'anthropic-version': 'vertex-2023-10-16' } });
  fresh.api.script(reply([text('Legacy is served.')]));
  assert.equal((await legacy.messages.create({ model: VERTEX_MODEL, max_tokens: 16, messages: ASK })).content[0].text, 'Legacy is served.');
  fresh.api.script({ platformError: 'throttle' });
  const throttled = await errorOf(good.messages.create({ model: VERTEX_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(throttled.status, 429);
  assert.equal(throttled.error.error.status, 'RESOURCE_EXHAUSTED');
});

test('the token endpoint refuses a JWT signed by another key, for another audience, long-lived, or without the scope', async () => {
  const { api, sa } = await googleStandIn('vertex');
  const stranger = serviceAccount();
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: sa.keyFile.client_email, scope: 'https://www.googleapis.com/auth/cloud-platform', aud: `${api.url}/token`, iat: now, exp: now + 3600 };
  const jwt = (key, over = {}) => {
    const head = Buffer.from(JSON.stringify({ alg: 'RS256' })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ ...claims, ...over })).toString('base64url');
    return `${head}.${body}.${createSign('RSA-SHA256').update(`${head}.${body}`).sign(key).toString('base64url')}`;
  };
  const exchange = async (assertion, grant = 'urn:ietf:params:oauth:grant-type:jwt-bearer') => {
    const res = await fetch(`${api.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: grant, assertion }),
    });
    return { status: res.status, body: await res.json() };
  };
  const ok = await exchange(jwt(sa.privateKey));
  assert.equal(ok.status, 200);
  assert.equal(ok.body.token_type, 'Bearer');
  assert.equal(ok.body.expires_in, 3600);
  assert.deepEqual(await exchange(jwt(stranger.privateKey)), { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } });
  assert.match((await exchange(jwt(sa.privateKey, { aud: 'https://example.com/token' }))).body.error_description, /audience/);
  assert.match((await exchange(jwt(sa.privateKey, { exp: now + 7200 }))).body.error_description, /short-lived token/);
  assert.match((await exchange(jwt(sa.privateKey, { iat: now - 7200, exp: now - 3600 }))).body.error_description, /short-lived token/);
  assert.equal((await exchange(jwt(sa.privateKey, { scope: 'email' }))).body.error, 'invalid_scope');
  assert.equal((await exchange(jwt(sa.privateKey), 'client_credentials')).body.error, 'unsupported_grant_type');
  // A token it did not issue, and a Google API key, are not bearer tokens of the platform.
  const path = `/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/global/publishers/anthropic/models/${VERTEX_MODEL}:rawPredict`;
  const forged = await fetch(`${api.url}${path}`, { method: 'POST', headers: { authorization: 'Bearer ya29.forged', 'content-type': 'application/json' }, body: '{}' });
  assert.equal(forged.status, 401);
  const keyed = await fetch(`${api.url}${path}?key=AIzaStandIn`, { method: 'POST', headers: { authorization: `Bearer ${ok.body.access_token}`, 'content-type': 'application/json' }, body: '{}' });
  assert.match((await keyed.json()).error.message, /API keys are not supported by this API/);
});

test("the token endpoint exchanges a gcloud user's refresh token as google-auth-library sends it, and refuses a wrong one", async () => {
  const user = { client_id: 'standin-client.apps.googleusercontent.com', client_secret: 'standin-client-secret-0001', refresh_token: '1//standin-refresh-token-0001' };
  const api = await standIn({ type: 'vertex', users: [user] });
  const auth = (over = {}) =>
    new GoogleAuth({
      credentials: { type: 'authorized_user', ...user, ...over },
      scopes: ['https://www.googleapis.com/auth/cloud-platform'],
      clientOptions: { transporterOptions: toLocalTokenEndpoint(api.url) },
    });
  const token = await auth().getAccessToken();
  assert.match(token, /^ya29\.standin\./);
  assert.equal(api.requests[0].path, '/token');
  assert.equal(api.platform.tokensIssued, 1);
  await assert.rejects(auth({ refresh_token: '1//revoked' }).getAccessToken(), /invalid_grant/);
  await assert.rejects(auth({ client_secret: 'wrong' }).getAccessToken(), /invalid_client/);
});

/** google-auth-library's client for an external account (a CI's pool) reading `credential_source`, at the stand-in. */
function externalAccount(api, credential_source, more = {}) {
  return new GoogleAuth({
    credentials: {
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/ci',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${api.url}/token`,
      credential_source,
      ...more,
    },
    scopes: ['https://www.googleapis.com/auth/cloud-platform'],
    clientOptions: { transporterOptions: toLocalTokenEndpoint(api.url) },
  });
}

test("the token endpoint exchanges an external identity's token as google-auth-library sends it (workload identity federation)", async () => {
  const oidc = 'eyJhbGciOiJSUzI1NiJ9.standin-oidc-subject-token.sig';
  const api = await standIn({ type: 'vertex', subjectTokens: [oidc] });
  const dir = mkdtempSync(join(tmpdir(), 'atc-wif-'));
  writeFileSync(join(dir, 'token'), oidc);
  const auth = (file) => externalAccount(api, { file });
  assert.match(await auth(join(dir, 'token')).getAccessToken(), /^ya29\.standin\./);
  writeFileSync(join(dir, 'other'), 'eyJ.unknown.sig');
  await assert.rejects(auth(join(dir, 'other')).getAccessToken(), /invalid_grant/);
});

test("IAM Credentials' generateAccessToken impersonates a service account as google-auth-library asks it (an external account's, a user's)", async () => {
  const oidc = 'eyJhbGciOiJSUzI1NiJ9.standin-oidc-subject-token.sig';
  const user = { client_id: 'standin-client.apps.googleusercontent.com', client_secret: 'standin-client-secret-0001', refresh_token: '1//standin-refresh-token-0001' };
  const target = 'agent@standin-project.iam.gserviceaccount.com';
  const api = await standIn({ type: 'vertex', subjectTokens: [oidc], users: [user], impersonable: [target] });
  const dir = mkdtempSync(join(tmpdir(), 'atc-imp-'));
  writeFileSync(join(dir, 'token'), oidc);
  const impersonation = (email) => `${api.url}/v1/projects/-/serviceAccounts/${email}:generateAccessToken`;
  const external = (email) => externalAccount(api, { file: join(dir, 'token') }, { service_account_impersonation_url: impersonation(email) });
  const token = await external(target).getAccessToken();
  assert.match(token, /^ya29\.standin\./);
  assert.deepEqual(api.requests.map((q) => q.path), ['/token', `/v1/projects/-/serviceAccounts/${target}:generateAccessToken`]);
  assert.equal(api.platform.subjectOf(token), target, 'the token stands for the impersonated service account');
  await assert.rejects(external('stranger@standin-project.iam.gserviceaccount.com').getAccessToken(), /iam\.serviceAccounts\.getAccessToken/);

  // gcloud's impersonated_service_account file is google-auth-library's Impersonated client: a user's token as the source.
  const transporterOptions = toLocalTokenEndpoint(api.url);
  const impersonated = new Impersonated({
    sourceClient: new UserRefreshClient({ clientId: user.client_id, clientSecret: user.client_secret, refreshToken: user.refresh_token, transporterOptions }),
    targetPrincipal: target,
    targetScopes: ['https://www.googleapis.com/auth/cloud-platform'],
    lifetime: 1800,
    endpoint: api.url,
    transporterOptions,
  });
  const asUser = await impersonated.getAccessToken();
  assert.equal(api.platform.subjectOf(asUser.token), target);

  // Without a token the issuer gave: Google's 401.
  const unauthenticated = await fetch(impersonation(target), { method: 'POST', headers: { authorization: 'Bearer ya29.forged', 'content-type': 'application/json' }, body: JSON.stringify({ scope: ['https://www.googleapis.com/auth/cloud-platform'] }) });
  assert.equal(unauthenticated.status, 401);
  assert.equal((await unauthenticated.json()).error.status, 'UNAUTHENTICATED');
});

// ---- The first-party API behind a cloud's door: Foundry, Claude Platform on AWS, Claude on Google Cloud

/** A tool round as a thread: the first turn creates it, the second sends only the tool result. */
async function threadRound(api, client, model) {
  api.script(reply([toolUse('get_order_status', { orderId: '4821' }, 'toolu_01Thread')]), reply([text('Shipped, by thread.')]));
  const thread = client.beta.messages.thread({ model, max_tokens: 256, tools: TOOLS });
  const first = await thread.send(ASK[0]);
  assert.equal(first.stop_reason, 'tool_use');
  const second = await thread.stream({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Thread', content: 'shipped' }] }).finalMessage();
  assert.equal(second.content[0].text, 'Shipped, by thread.');
  const [create, cont] = api.requests.slice(-2);
  assert.deepEqual(create.body.thread, { type: 'create' });
  assert.deepEqual(cont.body.thread, { type: 'continue', previous_message_id: first.id });
  assert.equal(cont.body.messages.length, 1, 'the continue sends only the new message');
  assert.equal(cont.fullBody.messages.length, 3, 'the stand-in holds the rest');
  for (const record of api.requests) assert.equal(record.broken, undefined, `refused: ${JSON.stringify(record.broken)}`);
}

test('foundry: foundry-sdk with a resource key and with an Entra ID token, threads included; a wrong key is Azure 401', async () => {
  const api = await standIn('foundry');
  const client = new AnthropicFoundry({ baseURL: `${api.url}/anthropic/`, apiKey: TEST_CREDENTIALS.foundryApiKey, maxRetries: 0 });
  await threeCalls(api, client, FIRST_PARTY_MODEL);
  assert.equal(api.requests[0].path, '/anthropic/v1/messages');
  assert.equal(api.requests[0].headers['x-api-key'], TEST_CREDENTIALS.foundryApiKey);
  assert.equal(api.requests[0].headers['anthropic-version'], '2026-10-21');
  await threadRound(api, client, FIRST_PARTY_MODEL);

  let calls = 0;
  const entra = new AnthropicFoundry({ baseURL: `${api.url}/anthropic/`, azureADTokenProvider: async () => (calls++, TEST_CREDENTIALS.entraToken), maxRetries: 0 });
  api.reset();
  await threeCalls(api, entra, FIRST_PARTY_MODEL);
  assert.equal(api.requests[0].headers.authorization, `Bearer ${TEST_CREDENTIALS.entraToken}`);
  assert.equal(calls, 4, 'the token provider is asked on every request');

  const badToken = new AnthropicFoundry({ baseURL: `${api.url}/anthropic/`, azureADTokenProvider: async () => 'not-a-token', maxRetries: 0 });
  assert.equal((await errorOf(badToken.messages.create({ model: FIRST_PARTY_MODEL, max_tokens: 16, messages: ASK }))).status, 401);
  const wrong = new AnthropicFoundry({ baseURL: `${api.url}/anthropic/`, apiKey: 'not-the-key', maxRetries: 0 });
  const err = await errorOf(wrong.messages.create({ model: FIRST_PARTY_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(err.status, 401);
  assert.equal(err.constructor.name, 'AuthenticationError');
  assert.equal(err.error.error.code, '401');
  assert.match(err.error.error.message, /Access denied due to invalid subscription key/);
  api.script({ platformError: 'throttle' });
  const throttled = await errorOf(client.messages.create({ model: FIRST_PARTY_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(throttled.status, 429);
});

const awsClient = (api, extra = {}) =>
  new AnthropicAws({
    baseURL: api.url, awsRegion: WORKSPACE.region, awsAccessKey: LONG_TERM.accessKeyId, awsSecretAccessKey: LONG_TERM.secretAccessKey,
    workspaceId: WORKSPACE.id, maxRetries: 0, ...extra,
  });

test('aws: aws-sdk signs for aws-external-anthropic with the workspace header, or sends the workspace key; threads too', async () => {
  const api = await standIn('aws');
  await threeCalls(api, awsClient(api), FIRST_PARTY_MODEL);
  const [first] = api.requests;
  assert.equal(first.path, '/v1/messages');
  assert.equal(first.headers['anthropic-workspace-id'], WORKSPACE.id);
  assert.match(first.headers.authorization, /Credential=AKIASTANDINTESTKEY01\/\d{8}\/us-west-2\/aws-external-anthropic\/aws4_request, SignedHeaders=[^ ]*anthropic-workspace-id/);
  await threadRound(api, awsClient(api), FIRST_PARTY_MODEL);
  api.reset();
  await threeCalls(api, new AnthropicAws({ baseURL: api.url, apiKey: WORKSPACE.apiKey, workspaceId: WORKSPACE.id, maxRetries: 0 }), FIRST_PARTY_MODEL);
  assert.equal(api.requests[0].headers.authorization, `Bearer ${WORKSPACE.apiKey}`);
});

test('aws: a bad signature or key is 401 authentication_error; another workspace 404; another region 401', async () => {
  const api = await standIn('aws');
  const ask = (client) => errorOf(client.messages.create({ model: FIRST_PARTY_MODEL, max_tokens: 16, messages: ASK }));
  const bad = await ask(awsClient(api, { awsSecretAccessKey: 'not-the-secret' }));
  assert.equal(bad.status, 401);
  assert.equal(bad.constructor.name, 'AuthenticationError');
  assert.equal(bad.error.error.type, 'authentication_error');
  assert.match(bad.error.error.message, /^InvalidSignatureException: The request signature we calculated does not match/);
  assert.equal((await ask(new AnthropicAws({ baseURL: api.url, apiKey: 'sk-ant-wrong', workspaceId: WORKSPACE.id, maxRetries: 0 }))).status, 401);
  const elsewhere = await ask(awsClient(api, { workspaceId: 'wrkspc_01NotHere' }));
  assert.equal(elsewhere.status, 404);
  assert.equal(elsewhere.error.error.type, 'not_found_error');
  const region = await ask(awsClient(api, { awsRegion: 'eu-west-1' }));
  assert.equal(region.status, 401);
  assert.match(region.message, /Credential should be scoped to a valid region/);
  const body = await ask(awsClient(api, { defaultHeaders: { 'anthropic-version': '2099-01-01' } }));
  assert.equal(body.status, 400);
});

const googleCloud = (api, googleAuth, extra = {}) =>
  new AnthropicGoogleCloud({
    baseURL: `${api.url}/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/global/workspaces/${TEST_CREDENTIALS.googleWorkspace}/invoke`,
    googleAuth, maxRetries: 0, ...extra,
  });

test('google-cloud: google-cloud-sdk with a Google token on the workspace path, threads included; refusals in Google shape', async () => {
  const { api, googleAuth } = await googleStandIn('google-cloud');
  await threeCalls(api, googleCloud(api, googleAuth), FIRST_PARTY_MODEL);
  const sent = api.requests[1];
  assert.equal(api.requests[0].path, '/token');
  assert.equal(sent.path, `/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/global/workspaces/${TEST_CREDENTIALS.googleWorkspace}/invoke/v1/messages`);
  assert.match(sent.headers.authorization, /^Bearer ya29\.standin\./);
  assert.equal(sent.headers['anthropic-workspace-id'], undefined);
  assert.equal(sent.headers['x-api-key'], undefined);
  await threadRound(api, googleCloud(api, googleAuth), FIRST_PARTY_MODEL);

  const other = new AnthropicGoogleCloud({
    baseURL: `${api.url}/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/global/workspaces/wrkspc_01NotOurs/invoke`, googleAuth, maxRetries: 0,
  });
  const denied = await errorOf(other.messages.create({ model: FIRST_PARTY_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(denied.status, 403);
  assert.equal(denied.error.error.status, 'PERMISSION_DENIED');
  assert.match(denied.message, /Permission 'claude\.messages\.create' denied/);
  api.platform.expireTokens();
  const expired = await errorOf(googleCloud(api, googleAuth).messages.create({ model: FIRST_PARTY_MODEL, max_tokens: 16, messages: ASK }));
  assert.equal(expired.status, 401);
  assert.equal(expired.constructor.name, 'AuthenticationError');
  const forged = googleCloud(api, undefined, { googleAuth: undefined, bearerTokenProvider: async () => 'ya29.forged' });
  assert.equal((await errorOf(forged.messages.create({ model: FIRST_PARTY_MODEL, max_tokens: 16, messages: ASK }))).status, 401);
});

// ---- What no official client sends: checked on the wire ------------------------------------------

/**
 * A Bedrock request signed by smithy's SigV4 signer (the one the AWS SDKs use): the stand-in
 * recomputes the signature on its own, so this cross-checks the two. `change(request)` may alter
 * the request after signing.
 */
async function signedPost(api, path, body, { region = 'us-east-1', service = 'bedrock', creds = LONG_TERM, signingDate, change } = {}) {
  const url = new URL(`${api.url}${path}`);
  const signer = new SignatureV4({ service, region, credentials: creds, sha256: NodeSha256 });
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const request = {
    method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {},
    headers: { host: url.host, 'content-type': 'application/json', accept: 'application/json', 'anthropic-beta': 'a-beta-2026-01-01' }, body: text,
  };
  const signed = await signer.sign(request, signingDate ? { signingDate } : {});
  const sent = { headers: { ...signed.headers }, body: text };
  delete sent.headers.host;
  change?.(sent);
  return fetch(url, { method: 'POST', headers: sent.headers, body: sent.body });
}

const BODY = { anthropic_version: '2026-10-21', max_tokens: 16, messages: ASK };
const INVOKE = `/model/${BEDROCK_MODEL}/invoke`;

test('bedrock on the wire: smithy-signed requests pass, an ARN with %2F too; a body or header changed after signing does not', async () => {
  const api = await standIn('bedrock');
  api.script(reply([text('Signed by smithy.')]), reply([text('An ARN.')]));
  const ok = await signedPost(api, INVOKE, BODY);
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.equal((await ok.json()).content[0].text, 'Signed by smithy.');
  assert.match(ok.headers.get('x-amzn-bedrock-input-token-count'), /^\d+$/);
  // The path is sent encoded, and signed encoded once more: %2F becomes %252F in the canonical URI.
  const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-5-5-v1:0';
  const viaArn = await signedPost(api, `/model/${encodeURIComponent(arn)}/invoke`, BODY);
  assert.equal(viaArn.status, 200, await viaArn.clone().text());

  const tampered = await signedPost(api, INVOKE, BODY, { change: (r) => { r.body = JSON.stringify({ ...BODY, max_tokens: 4096 }); } });
  assert.equal(tampered.status, 403);
  assert.match(tampered.headers.get('x-amzn-errortype'), /^InvalidSignatureException:/);
  assert.match((await tampered.json()).Message, /The Canonical String for this request should have been/);
  const header = await signedPost(api, INVOKE, BODY, { change: (r) => { r.headers['anthropic-beta'] = 'another-beta'; } });
  assert.equal(header.status, 403);
  const dropped = await signedPost(api, INVOKE, BODY, { change: (r) => { delete r.headers['x-amz-date']; } });
  assert.equal(dropped.status, 403);
  const unsigned = await fetch(`${api.url}${INVOKE}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
  assert.equal(unsigned.status, 403);
  assert.match(unsigned.headers.get('x-amzn-errortype'), /^MissingAuthenticationTokenException:/);
  assert.equal(api.pending, 0);
});

test('bedrock on the wire: a scope of another region or service, or a signature older than 5 minutes, is refused', async () => {
  const api = await standIn('bedrock');
  const message = async (res) => (await res.json()).Message;
  const region = await signedPost(api, INVOKE, BODY, { region: 'us-west-2' });
  assert.equal(region.status, 403);
  assert.match(await message(region), /Credential should be scoped to a valid region/);
  const service = await signedPost(api, INVOKE, BODY, { service: 'aws-external-anthropic' });
  assert.match(await message(service), /Credential should be scoped to correct service: 'bedrock'/);
  const old = await signedPost(api, INVOKE, BODY, { signingDate: new Date(Date.now() - 10 * 60 * 1000) });
  assert.equal(old.status, 403);
  assert.match(await message(old), /^Signature expired: \d{8}T\d{6}Z is now earlier than/);
  const temporary = await signedPost(api, INVOKE, BODY, { creds: { accessKeyId: TEMPORARY.accessKeyId, secretAccessKey: TEMPORARY.secretAccessKey } });
  assert.match(temporary.headers.get('x-amzn-errortype'), /^UnrecognizedClientException:/);
});

test('bedrock on the wire: model, stream or thread in the body, no anthropic_version, a bad anthropic_beta, a raw / in the id', async () => {
  const api = await standIn('bedrock');
  const refusal = async (body, path = INVOKE) => {
    const res = await signedPost(api, path, body);
    return { status: res.status, type: res.headers.get('x-amzn-errortype')?.split(':')[0], message: (await res.json()).message };
  };
  const malformed = (what) => `Malformed input request: ${what}, please reformat your input and try again.`;
  assert.deepEqual(await refusal({ ...BODY, model: BEDROCK_MODEL }), { status: 400, type: 'ValidationException', message: malformed('#: extraneous key [model] is not permitted') });
  assert.deepEqual(await refusal({ ...BODY, stream: true }), { status: 400, type: 'ValidationException', message: malformed('#: extraneous key [stream] is not permitted') });
  assert.deepEqual(await refusal({ ...BODY, thread: { type: 'create' } }), { status: 400, type: 'ValidationException', message: malformed('#: extraneous key [thread] is not permitted') });
  const { anthropic_version: _v, ...noVersion } = BODY;
  assert.deepEqual(await refusal(noVersion), { status: 400, type: 'ValidationException', message: malformed('#: required key [anthropic_version] not found') });
  assert.equal((await refusal({ ...BODY, anthropic_beta: 'one,two' })).status, 400);
  // The API's own rules still apply, in Bedrock's shape.
  const pairing = await refusal({ ...BODY, messages: [...ASK, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'x', input: {} }] }, { role: 'user', content: 'no result' }] });
  assert.equal(pairing.type, 'ValidationException');
  assert.match(pairing.message, /tool_use/);
  const slash = await signedPost(api, '/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile/x/invoke', BODY);
  assert.equal(slash.status, 404);
  assert.match(slash.headers.get('x-amzn-errortype'), /^UnknownOperationException:/);
  assert.ok(api.requests.every((r) => r.broken), 'each of them counts as refused');
});

/** Splits an event-stream body into its frames by the prelude's total length. */
function frames(bytes) {
  const out = [];
  for (let at = 0; at < bytes.length;) {
    const total = bytes.readUInt32BE(at);
    out.push(bytes.subarray(at, at + total));
    at += total;
  }
  return out;
}

test("bedrock's stream is real event-stream frames: AWS's decoder reads every one, and a flipped byte fails a CRC", async () => {
  const api = await standIn('bedrock');
  const codec = new EventStreamCodec((b) => Buffer.from(b).toString('utf8'), (s) => new Uint8Array(Buffer.from(s, 'utf8')));
  api.script(reply([text('Framed.'), toolUse('get_order_status', { orderId: '4821' })]));
  const res = await signedPost(api, `/model/${BEDROCK_MODEL}/invoke-with-response-stream`, { ...BODY, tools: TOOLS });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/vnd.amazon.eventstream');
  assert.equal(res.headers.get('x-amzn-bedrock-content-type'), 'application/json');
  const bytes = Buffer.from(await res.arrayBuffer());
  const events = frames(bytes).map((frame) => {
    const message = codec.decode(frame);
    assert.equal(message.headers[':event-type'].value, 'chunk');
    assert.equal(message.headers[':message-type'].value, 'event');
    assert.equal(message.headers[':content-type'].value, 'application/json');
    const payload = JSON.parse(Buffer.from(message.body).toString('utf8'));
    assert.equal(typeof payload.p, 'string');
    return JSON.parse(Buffer.from(payload.bytes, 'base64').toString('utf8'));
  });
  assert.equal(events[0].type, 'message_start');
  assert.equal(events.at(-1).type, 'message_stop');
  assert.equal(typeof events.at(-1)['amazon-bedrock-invocationMetrics'].invocationLatency, 'number');
  assert.ok(!events.some((e) => e.type === 'ping'));

  const frame = encodeFrame({ ':event-type': 'chunk', ':message-type': 'event', 'x-note': 'ünïcode' }, '{"bytes":"e30="}');
  const decoded = codec.decode(frame);
  assert.equal(decoded.headers['x-note'].value, 'ünïcode');
  assert.equal(Buffer.from(decoded.body).toString('utf8'), '{"bytes":"e30="}');
  const inPayload = Buffer.from(frame);
  inPayload[inPayload.length - 6] ^= 0x01;
  assert.throws(() => codec.decode(inPayload), /checksum/i);
  const inPrelude = Buffer.from(frame);
  inPrelude[5] ^= 0x01;
  assert.throws(() => codec.decode(inPrelude), /checksum/i);
});

test('vertex on the wire: model or anthropic_beta in the body, no anthropic_version, stream against the method: 400 in the API shape', async () => {
  const { api, googleAuth } = await googleStandIn('vertex');
  const token = await googleAuth.getAccessToken();
  const base = `${api.url}/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/global/publishers/anthropic/models/${VERTEX_MODEL}`;
  const send = async (method, body) => {
    const res = await fetch(`${base}:${method}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.json();
    return { status: res.status, type: json.error?.type, message: json.error?.message };
  };
  const body = { anthropic_version: 'vertex-2023-10-16', max_tokens: 16, messages: ASK };
  assert.deepEqual(await send('rawPredict', { ...body, model: VERTEX_MODEL }), { status: 400, type: 'invalid_request_error', message: 'model: Extra inputs are not permitted' });
  assert.deepEqual(await send('rawPredict', { ...body, anthropic_beta: ['x'] }), { status: 400, type: 'invalid_request_error', message: 'anthropic_beta: Extra inputs are not permitted' });
  const { anthropic_version: _v, ...noVersion } = body;
  assert.deepEqual(await send('rawPredict', noVersion), { status: 400, type: 'invalid_request_error', message: 'anthropic_version: Field required' });
  assert.equal((await send('rawPredict', { ...body, stream: true })).status, 400);
  assert.equal((await send('streamRawPredict', { ...body, stream: false })).status, 400);
  const unknownModel = await fetch(`${api.url}/v1/projects/${TEST_CREDENTIALS.googleProject}/locations/global/publishers/anthropic/models/gpt-9:rawPredict`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(unknownModel.status, 404);
  assert.equal((await unknownModel.json()).error.status, 'NOT_FOUND');
});
