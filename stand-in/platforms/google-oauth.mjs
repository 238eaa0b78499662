// A local stand-in for Google's OAuth token endpoint (`POST /token`), and the bearer tokens it
// issues, which the Vertex AI and Claude on Google Cloud doors accept and nothing else.
//
// The exchange is a service account's: a form post of
// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`. The JWT must be RS256,
// signed by the private key of a service account the stand-in knows (checked against its public
// key with node:crypto), with `iss` that account's email, `aud` this endpoint's URL or Google's
// (https://oauth2.googleapis.com/token, which Google's own library always puts there), a `scope`
// holding cloud-platform, and `iat` / `exp` at most an hour apart around now. The answer is
// `{ access_token, expires_in, token_type: 'Bearer' }`. A gcloud user's exchange is
// `grant_type=refresh_token` with `client_id`, `client_secret` and `refresh_token`, all three of a
// user the stand-in knows (else `invalid_grant` / `invalid_client`). An external account's (workload
// identity federation) is the token exchange grant with a `subject_token` the stand-in was given,
// an `audience` and the scope. A refusal is Google's
// `{ error, error_description }` with status 400 (invalid_grant, invalid_scope,
// unsupported_grant_type, invalid_request).
//
// Service account impersonation is the IAM Credentials API's
// `POST /v1/projects/-/serviceAccounts/{email}:generateAccessToken`: a bearer token this issuer
// gave (a federated, a user's or a service account's), a JSON body `{ scope: [...], lifetime:
// "3600s", delegates? }` with cloud-platform in the scope and a lifetime of 1 to 3600 seconds, and
// a service account the stand-in lets be impersonated (`impersonable`); the answer is `{ accessToken,
// expireTime }` (RFC 3339), a token the doors take like any other. A refusal is Google's front-end
// shape `{ error: { code, message, status } }`.

import { createPublicKey, verify } from 'node:crypto';
import { Answer, bearerOf, mediaType, pathOf, randomToken } from './common.mjs';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const JWT_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SKEW_S = 300;
const IMPERSONATE_ROUTE = /^\/v1\/projects\/-\/serviceAccounts\/([^/:]+):generateAccessToken$/;
const SHORT_LIVED =
  'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.';

const oauthError = (error, description) => new Answer(400, { error, error_description: description }, { 'cache-control': 'no-store' });

function decodePart(part) {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}

/**
 * The token issuer. `serviceAccounts`: [{ client_email, public_key (PEM) }]; `users`: gcloud users
 * [{ client_id, client_secret, refresh_token }]; `subjectTokens`: the external identities (OIDC tokens)
 * whose token exchange it takes; `lifetimeSeconds`:
 * how long an issued token lives (3600); `url()`: the stand-in's base URL, for the `aud` check.
 */
export function createTokenIssuer({ serviceAccounts = [], users = [], subjectTokens = [], impersonable = [], lifetimeSeconds = 3600, url }) {
  const accounts = new Map(serviceAccounts.map((a) => [a.client_email, createPublicKey(a.public_key)]));
  /** access token → { email, scope, expiresAt (ms) } */
  const issued = new Map();

  function issue(subject, scopes, extra = {}) {
    const token = `ya29.standin.${randomToken(32)}`;
    issued.set(token, { email: subject, scopes, expiresAt: Date.now() + lifetimeSeconds * 1000 });
    return new Answer(200, { access_token: token, expires_in: lifetimeSeconds, token_type: 'Bearer', ...extra }, { 'cache-control': 'no-store' });
  }

  function refresh(form) {
    const user = users.find((u) => u.client_id === form.get('client_id'));
    if (!user || user.client_secret !== form.get('client_secret')) return new Answer(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
    if (user.refresh_token !== form.get('refresh_token')) return oauthError('invalid_grant', 'Bad Request');
    return issue(user.client_id, [CLOUD_PLATFORM_SCOPE]);
  }

  // Security Token Service: an external identity's token for a Google access token (RFC 8693).
  function tokenExchange(form) {
    const required = ['audience', 'subject_token', 'subject_token_type', 'requested_token_type'];
    const missing = required.find((name) => !form.get(name));
    if (missing) return oauthError('invalid_request', `Missing required parameter: ${missing}`);
    if (form.get('requested_token_type') !== 'urn:ietf:params:oauth:token-type:access_token') return oauthError('invalid_request', 'Invalid requested_token_type.');
    if (!subjectTokens.includes(form.get('subject_token'))) return oauthError('invalid_grant', 'The provided subject token is invalid.');
    const scopes = String(form.get('scope') ?? '').split(' ').filter(Boolean);
    if (!scopes.includes(CLOUD_PLATFORM_SCOPE)) return oauthError('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    return issue(form.get('audience'), scopes, { issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
  }

  function exchange(req, raw) {
    if (req.method !== 'POST') return new Answer(405, { error: 'invalid_request', error_description: 'Only POST is allowed.' });
    if (mediaType(req) !== 'application/x-www-form-urlencoded') return oauthError('invalid_request', 'Invalid content type: expected application/x-www-form-urlencoded.');
    const form = new URLSearchParams(raw.toString('utf8'));
    const grant = form.get('grant_type');
    if (grant === 'refresh_token') return refresh(form);
    if (grant === 'urn:ietf:params:oauth:grant-type:token-exchange') return tokenExchange(form);
    if (grant !== JWT_GRANT) return oauthError('unsupported_grant_type', `Invalid grant_type: ${grant ?? ''}`);
    const assertion = form.get('assertion') ?? '';
    const parts = assertion.split('.');
    if (parts.length !== 3) return oauthError('invalid_grant', 'Invalid JWT: the assertion is not a JWS.');
    const header = decodePart(parts[0]);
    const claims = decodePart(parts[1]);
    if (!header || !claims) return oauthError('invalid_grant', 'Invalid JWT: the header or the claims are not JSON.');
    if (header.alg !== 'RS256') return oauthError('invalid_grant', `Invalid JWT: algorithm ${header.alg} is not RS256.`);
    const key = accounts.get(claims.iss);
    if (!key) return oauthError('invalid_grant', 'Invalid grant: account not found');
    const signed = verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2], 'base64url'));
    if (!signed) return oauthError('invalid_grant', 'Invalid JWT Signature.');
    if (claims.aud !== `${url()}/token` && claims.aud !== GOOGLE_TOKEN_URL) return oauthError('invalid_grant', 'Invalid JWT: Failed audience check.');
    const now = Math.floor(Date.now() / 1000);
    const { iat, exp } = claims;
    if (!Number.isInteger(iat) || !Number.isInteger(exp) || exp <= iat || exp - iat > 3600 || iat > now + SKEW_S || exp < now - SKEW_S) {
      return oauthError('invalid_grant', SHORT_LIVED);
    }
    const scopes = String(claims.scope ?? '').split(' ').filter(Boolean);
    if (!scopes.includes(CLOUD_PLATFORM_SCOPE)) return oauthError('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    return issue(claims.iss, scopes);
  }

  // IAM Credentials: a token of the service account named in the path, for a token issued here.
  function impersonate(req, raw, email) {
    if (req.method !== 'POST') return googleError(405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed.`);
    const challenge = { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' };
    if (check(bearerOf(req)) !== 'ok') return googleError(401, 'UNAUTHENTICATED', UNAUTHENTICATED, challenge);
    if (!impersonable.includes(email)) {
      return googleError(403, 'PERMISSION_DENIED', `Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).`);
    }
    if (mediaType(req) !== 'application/json') return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received: expected application/json.');
    let body;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    const scopes = body?.scope;
    if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) return googleError(400, 'INVALID_ARGUMENT', 'Invalid value at \'scope\': expected a list of strings.');
    if (!scopes.includes(CLOUD_PLATFORM_SCOPE)) return googleError(400, 'INVALID_ARGUMENT', 'Scope required.');
    const lifetime = /^(\d+)(?:\.\d+)?s$/.exec(String(body.lifetime ?? '3600s'));
    const seconds = lifetime ? Number(lifetime[1]) : NaN;
    if (!(seconds >= 1 && seconds <= 3600)) return googleError(400, 'INVALID_ARGUMENT', 'The lifetime must be between 1s and 3600s.');
    const delegates = body.delegates ?? [];
    if (!Array.isArray(delegates) || !delegates.every((d) => typeof d === 'string' && d.startsWith('projects/-/serviceAccounts/'))) {
      return googleError(400, 'INVALID_ARGUMENT', 'Invalid delegates: each is projects/-/serviceAccounts/{email}.');
    }
    const known = Object.keys(body).filter((k) => !['scope', 'lifetime', 'delegates'].includes(k));
    if (known.length > 0) return googleError(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${known[0]}": Cannot find field.`);
    const token = `ya29.standin.${randomToken(32)}`;
    const expiresAt = Date.now() + Math.min(seconds, lifetimeSeconds) * 1000;
    issued.set(token, { email, scopes, expiresAt, impersonated: true });
    return new Answer(200, { accessToken: token, expireTime: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z') });
  }

  function check(token) {
    const held = token === undefined ? undefined : issued.get(token);
    if (!held) return 'unknown';
    return held.expiresAt <= Date.now() ? 'expired' : 'ok';
  }

  return {
    exchange,
    /** The answer of the token endpoint or of IAM Credentials when `req` is for one of them, else null. */
    serve(req, raw) {
      const path = pathOf(req);
      if (path === '/token') return exchange(req, raw);
      const named = IMPERSONATE_ROUTE.exec(path);
      return named ? impersonate(req, raw, decodeURIComponent(named[1])) : null;
    },
    /** 'ok', 'expired' or 'unknown' for a bearer token. */
    check,
    /** The account a live token stands for (a service account's email, a user's client id, a pool's audience). */
    subjectOf(token) {
      return check(token) === 'ok' ? issued.get(token).email : undefined;
    },
    /** Makes every token issued so far expired (a test's way to a 401). */
    expireAll() {
      for (const held of issued.values()) held.expiresAt = 0;
    },
    /** How many tokens were issued. */
    get issued() {
      return issued.size;
    },
  };
}

/** Google's front-end error shape: `{ error: { code, message, status } }`. */
export function googleError(status, code, message, headers = {}) {
  return new Answer(status, { error: { code: status, message, status: code } }, headers);
}

const UNAUTHENTICATED =
  'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. ' +
  'See https://developers.google.com/identity/sign-in/web/devconsole-project.';
const API_KEY_REFUSED =
  'API keys are not supported by this API. Expected OAuth2 access token or other authentication credentials that assert a principal. ' +
  'See https://cloud.google.com/docs/authentication';

/** Checks a Google bearer token on a request; throws Google's 401 when it is not one the issuer gave. */
export function requireGoogleToken(req, issuer, bearer) {
  const challenge = { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' };
  const query = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  if (req.headers['x-goog-api-key'] !== undefined || query.has('key')) throw googleError(401, 'UNAUTHENTICATED', API_KEY_REFUSED, challenge);
  if (issuer.check(bearer) !== 'ok') throw googleError(401, 'UNAUTHENTICATED', UNAUTHENTICATED, challenge);
}

/** What a test can make a Google front end answer on purpose (a step `{ platformError: name }`). */
export const GOOGLE_FAULTS = {
  throttle: [429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: anthropic-claude.'],
  unavailable: [503, 'UNAVAILABLE', 'The service is currently unavailable.'],
  server: [500, 'INTERNAL', 'Internal error encountered.'],
  expired: [401, 'UNAUTHENTICATED', UNAUTHENTICATED],
  denied: [403, 'PERMISSION_DENIED', 'The caller does not have permission'],
};

export function googleFault(name) {
  const known = GOOGLE_FAULTS[name];
  if (!known) return null;
  const [status, code, message] = known;
  return googleError(status, code, message, status === 401 ? { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' } : {});
}

/** What both Google doors (Vertex, Claude on Google Cloud) share: faults in Google's shape, and the issuer's controls. */
export function googleDoorParts(issuer) {
  return {
    fault: (name) => googleFault(name),
    control: {
      expireTokens: () => issuer.expireAll(),
      subjectOf: (token) => issuer.subjectOf(token),
      get tokensIssued() {
        return issuer.issued;
      },
    },
  };
}
