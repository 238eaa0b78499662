// `npm run demo -- --provider bedrock|vertex|foundry|aws`: the demo against the stand-in's door
// for that cloud platform, with the credentials the platform takes — AWS credentials signing each
// request (Signature Version 4) on Bedrock and Claude Platform on AWS, a Foundry key, and on
// Vertex AI an access token the stand-in's token endpoint issues for a service account's signed
// JWT (as Google's does). None of them is a real secret: they live only between this process and
// the stand-in on 127.0.0.1.
import { generateKeyPairSync, sign } from 'node:crypto'
import { TEST_CREDENTIALS } from '../stand-in/platforms/index.mjs'

export const PROVIDERS = ['bedrock', 'vertex', 'foundry', 'aws']

/** The `--provider` argument, or null. */
export function providerArgument(argv) {
  const at = argv.indexOf('--provider')
  const name = at === -1 ? argv.find((a) => a.startsWith('--provider='))?.slice('--provider='.length) : argv[at + 1]
  if (name === undefined) return null
  if (!PROVIDERS.includes(name)) throw new Error(`--provider takes one of ${PROVIDERS.join(', ')}, not ${JSON.stringify(name)}`)
  return name
}

/** A service account for the stand-in's token endpoint: its public half, and a signed JWT for it. */
function serviceAccount() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const email = 'demo@standin-project.iam.gserviceaccount.com'
  const jwt = (aud) => {
    const part = (o) => Buffer.from(JSON.stringify(o)).toString('base64url')
    const iat = Math.floor(Date.now() / 1000)
    const body = `${part({ alg: 'RS256' })}.${part({ iss: email, scope: 'https://www.googleapis.com/auth/cloud-platform', aud, iat, exp: iat + 3600 })}`
    return `${body}.${sign('RSA-SHA256', Buffer.from(body), privateKey).toString('base64url')}`
  }
  return { account: { client_email: email, public_key: publicKey.export({ type: 'spki', format: 'pem' }) }, jwt }
}

/**
 * What the demo needs for `name`: `door`, the stand-in's `platform` option, and `options(url)`,
 * the run options that reach it (async: Vertex fetches its token first).
 */
export function demoProvider(name) {
  switch (name) {
    case 'bedrock':
      return {
        door: 'bedrock',
        options: async (url) => ({
          provider: { type: 'bedrock', region: 'us-east-1', credentials: async () => TEST_CREDENTIALS.aws[1] },
          baseURL: url,
          model: 'us.anthropic.claude-sonnet-5-5-v1:0',
        }),
      }
    case 'aws':
      return {
        door: 'aws',
        options: async (url) => ({
          provider: { type: 'aws', region: TEST_CREDENTIALS.awsWorkspace.region, workspaceId: TEST_CREDENTIALS.awsWorkspace.id, credentials: TEST_CREDENTIALS.aws[0] },
          baseURL: url,
        }),
      }
    case 'foundry':
      return { door: 'foundry', options: async (url) => ({ provider: 'foundry', apiKey: TEST_CREDENTIALS.foundryApiKey, baseURL: url }) }
    default: {
      const sa = serviceAccount()
      return {
        door: { type: 'vertex', serviceAccounts: [sa.account] },
        options: async (url) => {
          const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: sa.jwt(`${url}/token`) })
          const answer = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form })
          const { access_token: token } = await answer.json()
          return {
            provider: { type: 'vertex', projectId: TEST_CREDENTIALS.googleProject, region: 'us-east5' },
            authToken: token,
            baseURL: url,
            model: 'claude-sonnet-5-5@20261001',
          }
        },
      }
    }
  }
}
