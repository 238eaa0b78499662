// Google Vertex AI: `POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict`
// and `:streamRawPredict` (server-sent events, exactly as the Messages API streams, pings too).
// A `global` and a regional host differ only in the host, which a test's base URL replaces, so
// both are the same paths here.
//
// Checked in Google's order: the route (else 404 NOT_FOUND), the caller (a bearer token the local
// token endpoint issued and that has not expired, else 401 UNAUTHENTICATED with Google's
// `www-authenticate`; a Google API key is refused the same way), the project (else 403
// PERMISSION_DENIED in Google's words) and location, the model (a Claude id, else 404). Then the
// model's own rules, refused in the Anthropic shape: the body may not hold `model`,
// `anthropic_beta` or `thread` ("Extra inputs are not permitted"), needs `anthropic_version`
// `vertex-2023-10-16` (the API's 2023-06-01 rules) or `2026-10-21`, and `stream` must agree with
// the method. Betas stay in the `anthropic-beta` header.

import { fail } from '../errors.mjs';
import { CURRENT_VERSION, LEGACY_VERSION } from '../rules/versions.mjs';
import { has, isObject } from '../values.mjs';
import { TEST_CREDENTIALS, bearerOf, mediaType, pathOf } from './common.mjs';
import { googleDoorParts, googleError, requireGoogleToken } from './google-oauth.mjs';

const LEGACY_VERTEX_VERSION = 'vertex-2023-10-16';
const ROUTE = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;
const MODEL = /^claude-[a-z0-9.-]+(?:@[0-9a-z-]+)?$/;
/** Locations Claude is offered in on Vertex (and `global`). */
export const VERTEX_LOCATIONS = new Set(['global', 'us', 'eu', 'us-east5', 'us-central1', 'europe-west1', 'europe-west4', 'asia-east1', 'asia-southeast1']);

/** Vertex's door. `options`: projects ([TEST project]); the token issuer is the caller's. */
export function vertexDoor(options, issuer) {
  const projects = new Set(options.projects ?? [TEST_CREDENTIALS.googleProject]);

  function admit(req, record, raw, parsed, parseError) {
    const own = issuer.serve(req, raw);
    if (own) throw own;
    const route = ROUTE.exec(pathOf(req));
    if (!route) throw googleError(404, 'NOT_FOUND', `The requested URL ${pathOf(req)} was not found on this server.`);
    if (req.method !== 'POST') throw googleError(405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed.`);
    requireGoogleToken(req, issuer, bearerOf(req));
    const [, project, location, rawModel, method] = route;
    const model = decodeURIComponent(rawModel);
    const resource = `projects/${project}/locations/${location}/publishers/anthropic/models/${model}`;
    if (!projects.has(project)) {
      throw googleError(403, 'PERMISSION_DENIED', `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/${resource}' (or it may not exist).`);
    }
    if (!VERTEX_LOCATIONS.has(location)) throw googleError(400, 'INVALID_ARGUMENT', `Location ${location} is not supported.`);
    if (!MODEL.test(model)) throw googleError(404, 'NOT_FOUND', `Publisher Model \`${resource}\` not found.`);

    // From here the model answers: the Anthropic shape.
    if (mediaType(req) !== 'application/json') fail(`content-type: must be application/json, got ${JSON.stringify(req.headers['content-type'] ?? null)}`);
    if (parseError) fail(`There was an error parsing the body of your request: ${parseError.message}`);
    if (!isObject(parsed)) fail('Input should be a valid dictionary (the request body must be a JSON object)');
    for (const key of ['model', 'anthropic_beta', 'thread']) if (has(parsed, key)) fail(`${key}: Extra inputs are not permitted`);
    if (!has(parsed, 'anthropic_version')) fail('anthropic_version: Field required');
    const given = parsed.anthropic_version;
    if (given !== LEGACY_VERTEX_VERSION && given !== CURRENT_VERSION) {
      fail(`anthropic_version: Input should be '${LEGACY_VERTEX_VERSION}' or '${CURRENT_VERSION}'`);
    }
    const streaming = method === 'streamRawPredict';
    if (streaming && parsed.stream === false) fail('stream: :streamRawPredict streams; send stream: true or use :rawPredict');
    if (!streaming && parsed.stream === true) fail('stream: :rawPredict does not stream; use :streamRawPredict');
    const { anthropic_version: _version, ...rest } = parsed;
    const body = { model, ...rest };
    if (streaming) body.stream = true;
    return { body, version: given === CURRENT_VERSION ? CURRENT_VERSION : LEGACY_VERSION };
  }

  return {
    name: 'vertex',
    idPrefix: 'msg_vrtx_',
    admit,
    headers: (record) => ({ 'request-id': record.requestId }),
    /** The model's refusals and scripted errors keep the Anthropic shape. */
    error: () => null,
    stream: null,
    ...googleDoorParts(issuer),
  };
}
