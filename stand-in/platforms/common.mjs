// What every platform door shares: the answer a door sends on its own (a platform's refusal in
// the platform's shape, or the token endpoint's reply), the test credentials a door knows unless
// told others, and small helpers.

import { randomBytes } from 'node:crypto';
import { fail } from '../errors.mjs';

/**
 * A whole answer a door gives instead of letting the request reach the API's rules: thrown from
 * a door's `admit`, sent by the server as it is (status, JSON body, headers).
 */
export class Answer extends Error {
  constructor(status, body, headers = {}) {
    super(typeof body === 'string' ? body : JSON.stringify(body));
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/**
 * The credentials the doors accept unless a test passes its own. None of them is a real secret:
 * they exist only between a test and this stand-in on 127.0.0.1.
 */
export const TEST_CREDENTIALS = Object.freeze({
  /** AWS long-term keys (AKIA…) and a temporary one (ASIA…) that needs its session token. */
  aws: Object.freeze([
    Object.freeze({ accessKeyId: 'AKIASTANDINTESTKEY01', secretAccessKey: 'standin/long/term/secret/key/for/tests0001' }),
    Object.freeze({
      accessKeyId: 'ASIASTANDINTESTKEY02',
      secretAccessKey: 'standin/temporary/secret/key/for/tests0002',
      sessionToken: 'standin-session-token-for-tests-only',
    }),
  ]),
  /** A Bedrock API key: `ABSK` and base64 of `BedrockAPIKey-…`, as the real ones look. */
  bedrockApiKey: `ABSK${Buffer.from('BedrockAPIKey-standin-at-000000000000:dGVzdC1vbmx5').toString('base64')}`,
  /** Claude Platform on AWS: a workspace, its region and its workspace API key. */
  awsWorkspace: Object.freeze({ id: 'wrkspc_01StandInTestWorkspace', region: 'us-west-2', apiKey: 'sk-ant-api03-standin-aws-workspace-key' }),
  /** Microsoft Foundry: a resource key and an Entra ID access token. */
  foundryApiKey: 'standin-foundry-resource-key-0001',
  entraToken: 'eyStandInEntraAccessToken.for.tests',
  /** Google: the project and (Claude on Google Cloud) the workspace a token may reach. */
  googleProject: 'standin-project',
  googleWorkspace: 'wrkspc_01StandInGoogleWorkspace',
});

/** Regions AWS serves Claude in, as far as a scope's region is concerned. */
export const AWS_REGIONS = new Set([
  'us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'us-gov-west-1', 'us-gov-east-1', 'ca-central-1', 'eu-central-1',
  'eu-central-2', 'eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-north-1', 'eu-south-1', 'eu-south-2', 'ap-northeast-1',
  'ap-northeast-2', 'ap-northeast-3', 'ap-south-1', 'ap-south-2', 'ap-southeast-1', 'ap-southeast-2', 'sa-east-1',
]);

/** The path of a request without its query. */
export const pathOf = (req) => req.url.split('?')[0];

/** The query string of a request ('' without one). */
export const queryOf = (req) => {
  const at = req.url.indexOf('?');
  return at < 0 ? '' : req.url.slice(at + 1);
};

/** The bearer token of an Authorization header, or undefined. */
export function bearerOf(req) {
  const auth = req.headers.authorization;
  return typeof auth === 'string' && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : undefined;
}

/** The media type of the request's Content-Type, lowercase, without parameters. */
export const mediaType = (req) => String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();

/** A random token of `n` bytes, URL-safe. */
export const randomToken = (n = 24) => randomBytes(n).toString('base64url');

/** The first-party API's own checks after a platform's auth: content type, version, body parsed. */
export function firstPartyHeaders(req, parseError, checkVersion) {
  const version = req.headers['anthropic-version'];
  checkVersion(version);
  if (mediaType(req) !== 'application/json') {
    fail(`content-type: must be application/json, got ${JSON.stringify(req.headers['content-type'] ?? null)}`);
  }
  if (parseError) fail(`There was an error parsing the body of your request: ${parseError.message}`);
  return version;
}
