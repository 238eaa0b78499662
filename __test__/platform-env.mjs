// Keeps a test run of the official cloud clients on this machine: the AWS and Google credential
// chains look in env vars, files and metadata servers, so each is emptied or pointed at nothing
// before any client is built, and every connection is held to loopback. Imported first by the
// platform tests (each test file is its own process, so this touches no other suite).

import { createHash, createHmac, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';

const UNSET = [
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_REGION', 'AWS_DEFAULT_REGION',
  'AWS_BEARER_TOKEN_BEDROCK', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_ROLE_ARN', 'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CREDENTIAL_EXPIRATION', 'GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_CLOUD_PROJECT',
  'GCLOUD_PROJECT', 'CLOUD_ML_REGION', 'ANTHROPIC_PROFILE', 'ANTHROPIC_CUSTOM_HEADERS', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_BASE_URL', 'ANTHROPIC_BEDROCK_BASE_URL',
];
for (const name of UNSET) delete process.env[name];
for (const name of Object.keys(process.env)) {
  if (/^ANTHROPIC_(AWS|VERTEX|GOOGLE_CLOUD|FOUNDRY)_/.test(name)) delete process.env[name];
}
const empty = mkdtempSync(join(tmpdir(), 'atc-platforms-'));
writeFileSync(join(empty, 'aws-credentials'), '');
writeFileSync(join(empty, 'aws-config'), '');
Object.assign(process.env, {
  AWS_SHARED_CREDENTIALS_FILE: join(empty, 'aws-credentials'),
  AWS_CONFIG_FILE: join(empty, 'aws-config'),
  AWS_EC2_METADATA_DISABLED: 'true',
  CLOUDSDK_CONFIG: join(empty, 'gcloud'),
  METADATA_SERVER_DETECTION: 'none',
  GCE_METADATA_HOST: '127.0.0.1:9',
  GCE_METADATA_IP: '127.0.0.1:9',
  ANTHROPIC_CONFIG_DIR: join(empty, 'anthropic'),
});

/**
 * Every TCP connection this process tried to open to a host that is not loopback: refused before
 * any name is looked up or any byte sent. All of fetch (undici), node:http(s) and the clients'
 * own HTTP stacks (gaxios, smithy) connect through net.Socket, so this holds each of them.
 */
export const leftTheMachine = [];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
const realConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function connect(...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options = typeof first === 'object' && first !== null ? first : { port: first, host: typeof args[1] === 'string' ? args[1] : undefined };
  const host = options.host ?? 'localhost';
  // A socket path with no port is a local (IPC) connection; http(s) options carry the URL's path too.
  const local = options.port === undefined && typeof options.path === 'string';
  if (!local && !LOOPBACK.has(host)) {
    leftTheMachine.push(`${host}:${options.port}`);
    process.nextTick(() => this.destroy(new Error(`a test tried to leave the machine: ${host}:${options.port}`)));
    return this;
  }
  return realConnect.apply(this, args);
};

/**
 * A service-account key file made at test start (the private key is never written to disk);
 * `token_uri` is left for the test to set once the stand-in has its port.
 */
export function serviceAccount() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const email = 'standin-runner@standin-project.iam.gserviceaccount.com';
  return {
    keyFile: {
      type: 'service_account',
      project_id: 'standin-project',
      private_key_id: 'standin-key-1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      client_email: email,
      client_id: '100000000000000000001',
      token_uri: '',
      universe_domain: 'googleapis.com',
    },
    account: { client_email: email, public_key: publicKey.export({ type: 'spki', format: 'pem' }) },
    privateKey,
  };
}

/**
 * Google's library always exchanges a key file's JWT at https://oauth2.googleapis.com/token; this
 * transporter option sends that one request to the stand-in's token endpoint instead (the JWT
 * is unchanged; the stand-in accepts Google's `aud`).
 */
export function toLocalTokenEndpoint(baseUrl) {
  return {
    adapter: (options, next) => {
      const url = new URL(options.url);
      if (url.href === 'https://oauth2.googleapis.com/token') options.url = new URL(`${baseUrl}/token`);
      else if (url.hostname !== '127.0.0.1') throw new Error(`google-auth-library tried to leave the machine: ${url.href}`);
      return next(options);
    },
  };
}

/** SHA-256 (and HMAC) in the shape smithy's signer asks of a hash constructor, from node:crypto. */
export class NodeSha256 {
  constructor(secret) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', secret);
  }
  update(data) {
    this.hash.update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }
  async digest() {
    return new Uint8Array(this.hash.digest());
  }
}
