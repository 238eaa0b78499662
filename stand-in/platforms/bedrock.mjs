// Amazon Bedrock Runtime: `POST /model/{model}/invoke` and `/model/{model}/invoke-with-response-stream`.
//
// The door checks, in this order, what Bedrock checks: the operation (a model id is one path
// segment; anything else is 404 UnknownOperationException), the caller (a Bedrock API key as
// `Authorization: Bearer`, or a SigV4 signature for service `bedrock` in the stand-in's region,
// recomputed in sigv4.mjs), the content type, the model id (Bedrock's own ids and ARNs only), then
// the body: JSON, no `model`, `stream` or `thread`, `anthropic_version` present and one of
// `bedrock-2023-05-31` (the API's 2023-06-01 rules) or `2026-10-21` (Claude 4.7 and later only),
// `anthropic_beta` a list of strings. Each refusal is a 400 ValidationException in Bedrock's words.
// What passes becomes a first-party request (model and stream from the path, betas from the body)
// that the API's own rules judge; their refusals come back as ValidationException with the API's
// message. Answers carry `x-amzn-requestid`; a stream is event-stream frames (event-stream.mjs).

import { randomUUID } from 'node:crypto';
import { CURRENT_VERSION, LEGACY_VERSION } from '../rules/versions.mjs';
import { has, isObject } from '../values.mjs';
import { BEDROCK_FAULTS, STATUS_FOR_TYPE, awsError, awsErrorForStatus } from './aws-errors.mjs';
import { TEST_CREDENTIALS, bearerOf, mediaType, pathOf } from './common.mjs';
import { bedrockStreamer } from './event-stream.mjs';
import { SignatureRefusal, verifySigV4 } from './sigv4.mjs';

const LEGACY_BEDROCK_VERSION = 'bedrock-2023-05-31';
const ROUTE = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;
const PREFIXES = '(?:us|eu|apac|jp|au|ca|us-gov|global)';
const MODEL_ID = new RegExp(`^(?:${PREFIXES}\\.)?anthropic\\.claude-[a-z0-9.-]+(?::\\d+)?$`);
const MODEL_ARN = /^arn:aws(?:-[a-z]+)*:bedrock:[a-z0-9-]*:\d{12}:(?:foundation-model|inference-profile|application-inference-profile|provisioned-model)\/.+$/;

const malformed = (what) => `Malformed input request: ${what}, please reformat your input and try again.`;

/**
 * Whether a Bedrock model id names a generation before Claude 4.7 (which takes only
 * bedrock-2023-05-31). Ids it cannot read (application inference profiles) pass.
 */
export function beforeClaude47(model) {
  const name = /anthropic\.(claude-[a-z0-9.-]+)/.exec(model)?.[1];
  if (!name) return false;
  if (/^claude-(?:instant|v2|2|3)/.test(name)) return true;
  const m = /^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-|$)/.exec(name);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = m[2] === undefined ? 0 : Number(m[2]);
  return major < 4 || (major === 4 && minor < 7);
}

/**
 * Bedrock's door. `options`: region ('us-east-1'), credentials (AWS keys), apiKeys (Bedrock API
 * keys), recomputeSignature (true; false: a SigV4 header's form, scope, date and key are checked,
 * not its HMAC: see sigv4.mjs).
 */
export function bedrockDoor(options = {}) {
  const region = options.region ?? 'us-east-1';
  const credentials = options.credentials ?? TEST_CREDENTIALS.aws;
  const apiKeys = options.apiKeys ?? [TEST_CREDENTIALS.bedrockApiKey];
  const recompute = options.recomputeSignature ?? true;

  function headers(record) {
    const out = { 'x-amzn-requestid': record.requestId };
    if (record.reply && !record.stream) {
      out['x-amzn-bedrock-invocation-latency'] = String(Math.max(1, Math.round(performance.now() - record.receivedAt)));
      out['x-amzn-bedrock-input-token-count'] = String(record.reply.usage?.input_tokens ?? 0);
      out['x-amzn-bedrock-output-token-count'] = String(record.reply.usage?.output_tokens ?? 0);
    }
    return out;
  }

  function authenticate(req, record, raw) {
    const bearer = bearerOf(req);
    if (bearer !== undefined) {
      if (!apiKeys.includes(bearer)) throw awsError(record, 403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
      record.caller = { apiKey: true };
      return;
    }
    try {
      record.caller = verifySigV4(req, raw, { service: 'bedrock', region, credentials, recompute });
    } catch (err) {
      if (err instanceof SignatureRefusal) throw awsError(record, 403, err.type, err.message);
      throw err;
    }
  }

  function admit(req, record, raw, parsed, parseError) {
    record.requestId = randomUUID();
    const route = ROUTE.exec(pathOf(req));
    if (!route || req.method !== 'POST') throw awsError(record, 404, 'UnknownOperationException', 'UnknownOperationException');
    authenticate(req, record, raw);
    const invalid = (message) => awsError(record, 400, 'ValidationException', message);
    if (mediaType(req) !== 'application/json') throw invalid(`The provided Content-Type '${req.headers['content-type'] ?? ''}' is not supported. Use application/json.`);
    let model;
    try {
      model = decodeURIComponent(route[1]);
    } catch {
      throw invalid('The provided model identifier is invalid.');
    }
    if (!MODEL_ID.test(model) && !MODEL_ARN.test(model)) throw invalid('The provided model identifier is invalid.');
    if (parseError || !isObject(parsed)) throw invalid(malformed('#: expected type: JSONObject'));
    for (const key of ['model', 'stream', 'thread']) {
      if (has(parsed, key)) throw invalid(malformed(`#: extraneous key [${key}] is not permitted`));
    }
    if (!has(parsed, 'anthropic_version')) throw invalid(malformed('#: required key [anthropic_version] not found'));
    const given = parsed.anthropic_version;
    if (given !== LEGACY_BEDROCK_VERSION && given !== CURRENT_VERSION) {
      throw invalid(malformed(`#/anthropic_version: ${JSON.stringify(given)} is not a valid enum value`));
    }
    if (given === CURRENT_VERSION && beforeClaude47(model)) {
      throw invalid(`anthropic_version "${CURRENT_VERSION}" is not supported for this model. Use "${LEGACY_BEDROCK_VERSION}".`);
    }
    const betas = has(parsed, 'anthropic_beta') ? parsed.anthropic_beta : [];
    if (!Array.isArray(betas) || betas.some((b) => typeof b !== 'string')) {
      throw invalid(malformed('#/anthropic_beta: expected type: JSONArray of strings'));
    }
    const { anthropic_version: _version, anthropic_beta: _betas, user_profile_id: _profile, ...rest } = parsed;
    const body = { model, ...rest };
    if (route[2] === 'invoke-with-response-stream') body.stream = true;
    record.betas = [...new Set([...betas, ...record.betas])];
    return { body, version: given === CURRENT_VERSION ? CURRENT_VERSION : LEGACY_VERSION };
  }

  return {
    name: 'bedrock',
    idPrefix: 'msg_bdrk_',
    admit,
    headers,
    /** The API's refusals and scripted errors, in Bedrock's shape. */
    error: (status, error, record) => awsErrorForStatus(record, status, error),
    stream: bedrockStreamer(headers),
    fault(name, record) {
      const known = BEDROCK_FAULTS[name];
      if (!known) return null;
      const [type, message] = known;
      return awsError(record, STATUS_FOR_TYPE[type], type, message);
    },
    control: { region },
  };
}
