// GET /chat/new: a new chat for this browser. A route handler, since only a route handler or a
// server action may set the session cookie: it starts the session if there is none, makes a
// thread owned by it, and sends the browser to the chat's address, /chat?id=<thread id>.
// `?missing=1` is passed on: the page says the chat it was asked for was not found.
import { redirect } from 'next/navigation'
import { ensureSession } from '@/lib/session'
import { getStore } from '@/lib/store'

export async function GET(req: Request) {
  const owner = await ensureSession()
  const id = await getStore().createThread({ owner, metadata: { kind: 'chat' } })
  const missing = new URL(req.url).searchParams.get('missing') === '1'
  redirect(`/chat?id=${id}${missing ? '&missing=1' : ''}`)
}
