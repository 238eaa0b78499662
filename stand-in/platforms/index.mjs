// The stand-in's platform doors: `startMockApi({ platform })` makes the server play one cloud
// platform's front end instead of api.anthropic.com. `platform` is a name or { type, …options }:
//
//   'bedrock'       POST /model/{model}/invoke, /model/{model}/invoke-with-response-stream (bedrock.mjs)
//   'vertex'        POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict,
//                   :streamRawPredict, and the token endpoint POST /token (vertex.mjs, google-oauth.mjs)
//   'foundry'       POST /anthropic/v1/messages (first-party.mjs)
//   'aws'           POST /v1/messages, SigV4 `aws-external-anthropic` or a workspace key (first-party.mjs)
//   'google-cloud'  POST /v1/projects/{p}/locations/{l}/workspaces/{w}/invoke/v1/messages, and POST /token
//
// Options (each has a default from TEST_CREDENTIALS in common.mjs): `region` (bedrock 'us-east-1',
// aws 'us-west-2': the region the stand-in plays, which a signature's scope must name),
// `credentials` ([{ accessKeyId, secretAccessKey, sessionToken? }]), `apiKeys` (Bedrock API keys;
// Foundry keys), `entraTokens` (Foundry), `workspaces` (aws: [{ id, region, apiKey }];
// google-cloud: [{ project, workspace }]), `recomputeSignature` (bedrock, true: false checks a
// SigV4 header's form, scope, date and key without recomputing its HMAC), `projects` (vertex), `serviceAccounts` ([{ client_email,
// public_key }], whose signed JWTs the token endpoint takes), `users` ([{ client_id, client_secret,
// refresh_token }]: gcloud users whose refresh tokens it takes), `subjectTokens` (external identities'
// tokens it exchanges), `impersonable` (service account emails whose tokens IAM Credentials'
// generateAccessToken gives for a token it issued), `tokenLifetimeSeconds` (3600).
//
// A door (`createDoor`) has: `name`; `admit(req, record, rawBytes, parsed, parseError)`, which
// checks the platform's path and caller and returns the first-party request ({ body, version }) for
// the API's rules, or throws an Answer (the platform's own refusal, or the token endpoint's reply)
// or a Refusal (an API-shaped one); `headers(record)` for answers; `error(status, error, record)`,
// the platform's shape of an API error (null: the API's shape); `stream` (null: server-sent
// events); `fault(name, record)`, what `{ platformError: name }` answers ('throttle',
// 'unavailable', 'server', 'expired', 'denied', and Bedrock's 'quota', 'not-ready', 'timeout',
// 'model-error'); `control`, which the server exposes as `api.platform` (`expireTokens()` on the
// Google platforms). Token requests are recorded in `api.requests` like the others (path `/token`).
// A record's `body` is what was sent (Bedrock's and Vertex's without `model`), `fullBody` the
// first-party request the API's rules judged, `platform` the door's name, and after a SigV4 check
// `caller` ({ accessKeyId, region, date }).

import { bedrockDoor } from './bedrock.mjs';
import { awsDoor, foundryDoor, googleCloudDoor } from './first-party.mjs';
import { createTokenIssuer } from './google-oauth.mjs';
import { vertexDoor } from './vertex.mjs';

export const PLATFORMS = ['bedrock', 'vertex', 'foundry', 'aws', 'google-cloud'];

/** The door for `platform` (a name or { type, …options }); `api` gives the server's URL. */
export function createDoor(platform, api) {
  const options = typeof platform === 'string' ? { type: platform } : platform;
  const google = () => createTokenIssuer({ serviceAccounts: options.serviceAccounts, users: options.users, subjectTokens: options.subjectTokens, impersonable: options.impersonable, lifetimeSeconds: options.tokenLifetimeSeconds, url: () => api.url });
  switch (options?.type) {
    case 'bedrock':
      return bedrockDoor(options);
    case 'vertex':
      return vertexDoor(options, google());
    case 'foundry':
      return foundryDoor(options);
    case 'aws':
      return awsDoor(options);
    case 'google-cloud':
      return googleCloudDoor(options, google());
    default:
      throw new Error(`mock-api: unknown platform ${JSON.stringify(options?.type)}; one of ${PLATFORMS.join(', ')}`);
  }
}

export { TEST_CREDENTIALS } from './common.mjs';
export { crc32, encodeFrame } from './event-stream.mjs';
export { verifySigV4, canonicalUri } from './sigv4.mjs';
