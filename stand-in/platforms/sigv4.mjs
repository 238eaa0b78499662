// AWS Signature Version 4, checked the way AWS checks it: the stand-in rebuilds the canonical
// request and the string to sign from what arrived on the wire and recomputes the signature with
// node:crypto. It shares no code with the official clients' signer (@smithy/signature-v4): a
// stand-in that used the same signer would agree with the client's mistakes, so the steps below
// are written from AWS's published description of the algorithm.
//
// What is refused (403, the type AWS's front end names, the text in its words):
//   - no Authorization header: MissingAuthenticationTokenException;
//   - another algorithm, or Credential / SignedHeaders / Signature missing: IncompleteSignatureException;
//   - a scope that is not `{key}/{yyyymmdd}/{region}/{service}/aws4_request`, of another service or
//     region, or whose date is not X-Amz-Date's: InvalidSignatureException;
//   - X-Amz-Date missing, unsigned, malformed or more than 5 minutes off the clock: InvalidSignatureException;
//   - host unsigned, or a declared signed header absent: InvalidSignatureException;
//   - an unknown access key, a temporary key (ASIA…) without its session token, or a session
//     token that is not the key's: UnrecognizedClientException;
//   - a signature that does not match the recomputed one: InvalidSignatureException quoting the
//     canonical request and the string to sign (as AWS does; header values included).
//
// `recompute: false` checks all of the above but the last: the header, its scope, its date, its
// signed headers and its key, without the canonical request and the HMACs (the benchmark's
// Bedrock door, which must refuse an unsigned request but not spend its CPU on the arithmetic
// the tests check).

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const ALGORITHM = 'AWS4-HMAC-SHA256';
const SKEW_MS = 5 * 60 * 1000;

/** A refusal of the signature: the AWS error type and its message. */
export class SignatureRefusal extends Error {
  constructor(type, message) {
    super(message);
    this.type = type;
  }
}

const refuse = (type, message) => {
  throw new SignatureRefusal(type, message);
};

/**
 * Percent-encodes every byte of `s` but the unreserved characters A–Z a–z 0–9 - _ . ~, with
 * upper-case hex: the encoding SigV4 applies to each path segment and query key and value.
 */
export function awsEscape(s) {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The canonical URI: the path exactly as sent, with empty, `.` and `..` segments resolved, and
 * each segment encoded once more (so a `%2F` sent in a model ARN is `%252F` here, a raw `:` `%3A`).
 */
export function canonicalUri(path) {
  const segments = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : '';
  return `/${segments.map(awsEscape).join('/')}${trailing}`;
}

/** The canonical query: each key and value decoded then encoded, sorted by key, then by value. */
export function canonicalQuery(query) {
  if (!query) return '';
  const decode = (s) => decodeURIComponent(s.replace(/\+/g, '%20'));
  const pairs = query.split('&').filter(Boolean).map((part) => {
    const at = part.indexOf('=');
    const key = at < 0 ? part : part.slice(0, at);
    const value = at < 0 ? '' : part.slice(at + 1);
    return [awsEscape(decode(key)), awsEscape(decode(value))];
  });
  pairs.sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

/** A header's value as signed: line breaks become spaces, runs of blanks one space, ends trimmed. */
const canonicalValue = (value) => String(value).replace(/[\r\n]/g, ' ').replace(/[ \t]+/g, ' ').trim();

const sha256Hex = (data) => createHash('sha256').update(data).digest('hex');
const hmac = (key, data) => createHmac('sha256', key).update(data, 'utf8').digest();

/** Reads `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` into its three parts. */
function parseAuthorization(header) {
  if (header === undefined) refuse('MissingAuthenticationTokenException', 'Missing Authentication Token');
  const text = String(header).trim();
  const space = text.indexOf(' ');
  const algorithm = space < 0 ? text : text.slice(0, space);
  if (algorithm !== ALGORITHM) {
    refuse('IncompleteSignatureException', `Authorization header requires the algorithm '${ALGORITHM}'. Authorization=${text}`);
  }
  const fields = {};
  for (const part of text.slice(space + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  const missing = ['Credential', 'SignedHeaders', 'Signature'].filter((name) => !fields[name]);
  if (missing.length > 0) {
    refuse('IncompleteSignatureException', missing.map((name) => `Authorization header requires '${name}' parameter.`).join(' ') + ` Authorization=${text}`);
  }
  return fields;
}

/** `20261206T023306Z` as a time in ms, or NaN. */
function amzTime(value) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(String(value ?? ''));
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
}

const amzFormat = (ms) => new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

/**
 * Checks the SigV4 signature of a request. `rawBody`: the body's bytes as they arrived; `service`:
 * the signing name the platform expects; `region`: the region the stand-in plays; `credentials`:
 * the known keys ({ accessKeyId, secretAccessKey, sessionToken? }); `now`: the clock (ms);
 * `recompute` (true): whether the signature itself is recomputed and compared.
 * Returns { accessKeyId, region, date }; throws SignatureRefusal.
 */
export function verifySigV4(req, rawBody, { service, region, credentials, now = Date.now(), recompute = true }) {
  const fields = parseAuthorization(req.headers.authorization);
  const scope = fields.Credential.split('/');
  if (scope.length !== 5 || scope[4] !== 'aws4_request') {
    refuse('IncompleteSignatureException', `Credential should be scoped to a valid region, service and terminal 'aws4_request'. Credential=${fields.Credential}`);
  }
  const [accessKeyId, scopeDate, scopeRegion, scopeService] = scope;
  if (scopeService !== service) refuse('InvalidSignatureException', `Credential should be scoped to correct service: '${service}'. `);
  if (scopeRegion !== region) refuse('InvalidSignatureException', `Credential should be scoped to a valid region. `);

  const signedNames = fields.SignedHeaders.split(';');
  const amzDate = req.headers['x-amz-date'];
  if (amzDate === undefined) refuse('IncompleteSignatureException', "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  if (!signedNames.includes('x-amz-date')) refuse('InvalidSignatureException', "'X-Amz-Date' must be a signed header.");
  if (!signedNames.includes('host')) refuse('InvalidSignatureException', "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  const signedAt = amzTime(amzDate);
  if (Number.isNaN(signedAt)) refuse('IncompleteSignatureException', `Date must be in ISO-8601 'basic format'. Got '${amzDate}'.`);
  if (scopeDate !== String(amzDate).slice(0, 8)) {
    refuse('InvalidSignatureException', `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${scopeDate}' != '${String(amzDate).slice(0, 8)}', from '${amzDate}'.`);
  }
  if (signedAt < now - SKEW_MS) {
    refuse('InvalidSignatureException', `Signature expired: ${amzDate} is now earlier than ${amzFormat(now - SKEW_MS)} (${amzFormat(now)} - 5 min.)`);
  }
  if (signedAt > now + SKEW_MS) {
    refuse('InvalidSignatureException', `Signature not yet current: ${amzDate} is still later than ${amzFormat(now + SKEW_MS)} (${amzFormat(now)} + 5 min.)`);
  }
  for (const name of signedNames) {
    if (name !== name.toLowerCase() || req.headers[name] === undefined) {
      refuse('InvalidSignatureException', `The request signature we calculated does not match the signature you provided. Signed header '${name}' is not in the request.`);
    }
  }

  const known = credentials.find((c) => c.accessKeyId === accessKeyId);
  const token = req.headers['x-amz-security-token'];
  const invalidToken = 'The security token included in the request is invalid.';
  if (!known) refuse('UnrecognizedClientException', invalidToken);
  if (known.sessionToken !== undefined ? token !== known.sessionToken : token !== undefined) refuse('UnrecognizedClientException', invalidToken);
  if (!recompute) {
    if (!/^[0-9a-f]{64}$/.test(fields.Signature)) refuse('IncompleteSignatureException', `Signature must be 64 hexadecimal digits. Signature=${fields.Signature}`);
    return { accessKeyId, region: scopeRegion, date: scopeDate };
  }

  const [path] = req.url.split('?');
  const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
  const headerLines = signedNames.map((name) => `${name}:${canonicalValue(req.headers[name])}\n`).join('');
  const canonicalRequest = [req.method, canonicalUri(path), canonicalQuery(query), headerLines, fields.SignedHeaders, sha256Hex(rawBody)].join('\n');
  const credentialScope = `${scopeDate}/${scopeRegion}/${scopeService}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, credentialScope, sha256Hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${known.secretAccessKey}`, scopeDate);
  for (const part of [scopeRegion, scopeService, 'aws4_request']) key = hmac(key, part);
  const expected = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  const given = Buffer.from(fields.Signature);
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) {
    refuse(
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. ' +
        `Consult the service documentation for details.\n\nThe Canonical String for this request should have been\n'${canonicalRequest}'\n\n` +
        `The String-to-Sign should have been\n'${stringToSign}'\n`,
    );
  }
  return { accessKeyId, region: scopeRegion, date: scopeDate };
}
