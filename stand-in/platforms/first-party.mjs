// The platforms that run the first-party Messages API (Threads included) behind their own front
// door: Microsoft Foundry (`/anthropic/v1/messages`), Claude Platform on AWS (`/v1/messages`) and
// Claude on Google Cloud (`/v1/projects/{p}/locations/{l}/workspaces/{w}/invoke/v1/messages`).
// Each door checks its path and its caller, then hands the request to the API's own rules
// (anthropic-version header, content type, body), which answer in the API's shape as usual.
//
//   foundry: `x-api-key` with the resource's key, or `Authorization: Bearer` with an Entra ID
//     token; anything else is Azure's 401 `{ error: { code: '401', message } }`. (Azure's
//     `api-key` header is not taken: no Anthropic client or document uses it.)
//   aws: a SigV4 signature for service `aws-external-anthropic` in the stand-in's region, or a
//     workspace API key as `Authorization: Bearer`; a failure is the API's 401
//     authentication_error (quoting the signature check as AWS does). `anthropic-workspace-id` is
//     required (400), must name a known workspace (404), of the stand-in's region and, with a key,
//     the key's own (403 permission_error).
//   google-cloud: a bearer token from the local token endpoint (Google's 401 otherwise, a Google
//     API key refused too); the project and workspace of the path must be known (Google's 403).

import { Refusal } from '../errors.mjs';
import { checkVersion } from '../rules/versions.mjs';
import { Answer, TEST_CREDENTIALS, bearerOf, firstPartyHeaders, pathOf } from './common.mjs';
import { googleDoorParts, googleError, requireGoogleToken } from './google-oauth.mjs';
import { SignatureRefusal, verifySigV4 } from './sigv4.mjs';

const azureError = (status, message, headers = {}) => new Answer(status, { error: { code: String(status), message } }, headers);
const AZURE_DENIED =
  'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription ' +
  'and use a correct regional API endpoint for your resource.';

const requestIdHeaders = (record) => ({ 'request-id': record.requestId });

/** Microsoft Foundry. `options`: apiKeys, entraTokens. */
export function foundryDoor(options = {}) {
  const apiKeys = options.apiKeys ?? [TEST_CREDENTIALS.foundryApiKey];
  const entraTokens = options.entraTokens ?? [TEST_CREDENTIALS.entraToken];
  return {
    name: 'foundry',
    admit(req, record, raw, parsed, parseError) {
      if (pathOf(req) !== '/anthropic/v1/messages') throw azureError(404, 'Resource not found');
      if (req.method !== 'POST') throw azureError(405, `Method ${req.method} is not allowed.`);
      const key = req.headers['x-api-key'];
      const bearer = bearerOf(req);
      const allowed = key !== undefined ? apiKeys.includes(key) : bearer !== undefined && entraTokens.includes(bearer);
      if (!allowed) throw azureError(401, AZURE_DENIED);
      return { body: parsed, version: firstPartyHeaders(req, parseError, checkVersion) };
    },
    headers: requestIdHeaders,
    error: () => null,
    stream: null,
    fault(name) {
      if (name === 'throttle') return azureError(429, 'Rate limit is exceeded. Try again in 1 seconds.', { 'retry-after': '1' });
      if (name === 'unavailable') return azureError(503, 'The service is temporarily unavailable.');
      if (name === 'expired') return azureError(401, AZURE_DENIED);
      return null;
    },
    control: {},
  };
}

/** Claude Platform on AWS. `options`: region ('us-west-2'), credentials, workspaces ([{ id, region, apiKey }]). */
export function awsDoor(options = {}) {
  const region = options.region ?? TEST_CREDENTIALS.awsWorkspace.region;
  const credentials = options.credentials ?? TEST_CREDENTIALS.aws;
  const workspaces = options.workspaces ?? [TEST_CREDENTIALS.awsWorkspace];
  return {
    name: 'aws',
    admit(req, record, raw, parsed, parseError) {
      if (pathOf(req) !== '/v1/messages') throw new Refusal(404, `Not found: ${pathOf(req)}`);
      if (req.method !== 'POST') throw new Refusal(405, `Method ${req.method} is not allowed on /v1/messages; use POST`);
      const bearer = bearerOf(req);
      let keyOf = null;
      if (bearer !== undefined) {
        keyOf = workspaces.find((w) => w.apiKey === bearer);
        if (!keyOf) throw new Refusal(401, 'invalid x-api-key');
      } else {
        try {
          record.caller = verifySigV4(req, raw, { service: 'aws-external-anthropic', region, credentials });
        } catch (err) {
          if (err instanceof SignatureRefusal) throw new Refusal(401, `${err.type}: ${err.message}`);
          throw err;
        }
      }
      const id = req.headers['anthropic-workspace-id'];
      if (id === undefined || id === '') throw new Refusal(400, 'anthropic-workspace-id: header is required');
      const workspace = workspaces.find((w) => w.id === id);
      if (!workspace) throw new Refusal(404, `Workspace '${id}' not found.`);
      if (workspace.region !== region) throw new Refusal(403, `Workspace '${id}' is in ${workspace.region}; it can only be reached through that region's endpoint.`);
      if (keyOf && keyOf.id !== id) throw new Refusal(403, `This API key does not have access to workspace '${id}'.`);
      return { body: parsed, version: firstPartyHeaders(req, parseError, checkVersion) };
    },
    headers: requestIdHeaders,
    error: () => null,
    stream: null,
    fault(name) {
      if (name === 'throttle') return new Refusal(429, 'Number of request tokens has exceeded your per-minute rate limit');
      if (name === 'unavailable') return new Refusal(529, 'Overloaded');
      if (name === 'expired') return new Refusal(401, 'The security token included in the request is expired');
      return null;
    },
    control: { region },
  };
}

const GOOGLE_CLOUD_ROUTE = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/workspaces\/([^/]+)\/invoke\/v1\/messages$/;

/** Claude on Google Cloud. `options`: workspaces ([{ project, workspace }]); the issuer is the caller's. */
export function googleCloudDoor(options, issuer) {
  const workspaces = options.workspaces ?? [{ project: TEST_CREDENTIALS.googleProject, workspace: TEST_CREDENTIALS.googleWorkspace }];
  return {
    name: 'google-cloud',
    admit(req, record, raw, parsed, parseError) {
      const own = issuer.serve(req, raw);
      if (own) throw own;
      const route = GOOGLE_CLOUD_ROUTE.exec(pathOf(req));
      if (!route) throw googleError(404, 'NOT_FOUND', `The requested URL ${pathOf(req)} was not found on this server.`);
      if (req.method !== 'POST') throw googleError(405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed.`);
      requireGoogleToken(req, issuer, bearerOf(req));
      const [, project, location, workspace] = route.map((part) => decodeURIComponent(part));
      if (!workspaces.some((w) => w.project === project && w.workspace === workspace)) {
        const resource = `//claude.googleapis.com/projects/${project}/locations/${location}/workspaces/${workspace}`;
        throw googleError(403, 'PERMISSION_DENIED', `Permission 'claude.messages.create' denied on resource '${resource}' (or it may not exist).`);
      }
      return { body: parsed, version: firstPartyHeaders(req, parseError, checkVersion) };
    },
    headers: requestIdHeaders,
    error: () => null,
    stream: null,
    ...googleDoorParts(issuer),
  };
}
