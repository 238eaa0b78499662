// Who is asking: an owner id for each browser, in a signed cookie. Every thread is created with
// its browser's owner, and the store finds a thread only for that owner: a chat's address opened
// in another browser (or with no cookie, or a forged one) finds nothing.
//
// The cookie holds `<owner>.<signature>`, the signature an HMAC-SHA256 of the owner with
// SESSION_SECRET, so a browser cannot make up another's owner id. It is httpOnly (no script reads
// it), sameSite=lax (not sent with another site's posts), and Secure over HTTPS.
//
// Next.js lets a cookie be set only in a route handler or a server action: `ensureSession` is for
// those (app/chat/new/route.ts, the actions of /). Pages only read it (`sessionOwner`).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { cookies, headers } from 'next/headers'

export const SESSION_COOKIE = 'order_assistant_session'
const OWNER = /^user_[0-9a-f]{32}$/
const YEAR_S = 365 * 24 * 60 * 60
/** Only for `next dev` and local tries: a production server refuses to start a session without SESSION_SECRET. */
const DEV_SECRET = 'dev-only-session-secret-never-use-in-production'

function secret(): string {
  const value = process.env.SESSION_SECRET
  if (value) {
    if (value.length < 32) throw new Error('SESSION_SECRET must be at least 32 characters: make one with `openssl rand -hex 32`.')
    return value
  }
  if (process.env.NODE_ENV !== 'production') return DEV_SECRET
  throw new Error('SESSION_SECRET is not set: the session cookie cannot be signed. Make one with `openssl rand -hex 32`.')
}

const sign = (owner: string) => createHmac('sha256', secret()).update(owner).digest('base64url')

/** The owner a cookie value names, if its signature is right; else null. */
export function verifySession(value: string | undefined): string | null {
  if (!value) return null
  const dot = value.indexOf('.')
  if (dot < 0) return null
  const owner = value.slice(0, dot)
  if (!OWNER.test(owner)) return null
  const given = Buffer.from(value.slice(dot + 1))
  const expected = Buffer.from(sign(owner))
  return given.length === expected.length && timingSafeEqual(given, expected) ? owner : null
}

/** The owner of this request's browser, or null when it has no valid session cookie. */
export async function sessionOwner(): Promise<string | null> {
  return verifySession((await cookies()).get(SESSION_COOKIE)?.value)
}

/**
 * The owner of this request's browser, starting a session (a new owner id, its cookie set on the
 * response) when it has none. Only in a route handler or a server action.
 */
export async function ensureSession(): Promise<string> {
  const jar = await cookies()
  const found = verifySession(jar.get(SESSION_COOKIE)?.value)
  if (found) return found
  const owner = `user_${randomBytes(16).toString('hex')}`
  // Secure when the browser came over HTTPS (behind a proxy: its x-forwarded-proto).
  const proto = (await headers()).get('x-forwarded-proto')?.split(',')[0]?.trim()
  jar.set(SESSION_COOKIE, `${owner}.${sign(owner)}`, { httpOnly: true, sameSite: 'lax', secure: proto === 'https', path: '/', maxAge: YEAR_S })
  return owner
}
