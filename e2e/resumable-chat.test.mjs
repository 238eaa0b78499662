// Resumable streams in examples/nextjs (CONTRACT §13), in Chromium: the example installed from the
// packed tarballs, built with `next build`, served by `next start` against the local stand-in.
// The chat page follows an answer in progress from the server (useChat({ resume: true }) and
// GET /api/chat/<id>/stream → resumeStream): a reload mid-answer sees it finish, a second tab sees
// it too, and Stop (POST /api/chat/stop → stopRun) stops the run itself, shown in both tabs.
// Screenshots go to examples/nextjs/test-results/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { app, installExample } from '../scripts/example-install.mjs'
import { startMockApi, demoModel } from '../stand-in/index.mjs'
import { freePort, runProcess, startProcess, waitForHttp } from './helpers.mjs'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const KEY = 'sk-ant-e2e-key-0123456789'
const SESSION_SECRET = 'e2e-session-secret-0123456789abcdef'
const SESSION_COOKIE = 'order_assistant_session'
const SHOTS = join(app, 'test-results')
const next = join(app, 'node_modules', 'next', 'dist', 'bin', 'next')
const BROWSER = {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
}

let api, server, context, base, store
const cleanups = []
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
/** demoModel with its replies streamed slowly: `ms` between SSE events (about 4 characters of text each). */
const slowly = (ms) => (body) => ({ ...demoModel(body), streamDelayMs: ms })
const text = async (locator) => (await locator.textContent()).trim()
const chatIdOf = (page) => new URL(page.url()).searchParams.get('id')
const ANSWER = /^Order #4821 is shipped\. Expected delivery: \d{4}-\d\d-\d\d\. Carrier: UPS\.$/

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`)
  installExample({ log: () => {} })
  const work = mkdtempSync(join(tmpdir(), 'atc-e2e-resume-'))
  cleanups.push(() => rmSync(work, { recursive: true, force: true }))
  mkdirSync(SHOTS, { recursive: true })
  const db = join(work, 'orders.db')
  await runProcess(process.execPath, [join(app, 'scripts', 'seed-db.mjs'), db], { cwd: app })
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANTHROPIC_') && !k.startsWith('npm_') && !k.startsWith('OTEL_')))
  Object.assign(env, { NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' })
  await runProcess(process.execPath, [next, 'build'], { cwd: app, env })
  api = await startMockApi({ apiKey: KEY, handler: demoModel })
  cleanups.push(() => api.close())
  const storeUrl = `sqlite:${join(work, 'threads.db')}`
  store = createRequire(join(app, 'package.json'))('anthropic-tool-calling').createStore(storeUrl)
  cleanups.push(() => store.close())
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  server = startProcess(process.execPath, [next, 'start', '-H', '127.0.0.1', '-p', String(port)], {
    cwd: app,
    env: { ...env, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: api.url, ORDERS_DB: db, ANTHROPIC_TOOL_CALLING_STORE: storeUrl, SESSION_SECRET },
  })
  cleanups.push(() => server.stop())
  await waitForHttp(base, server)
  const { chromium } = createRequire(join(app, 'package.json'))('playwright-core')
  context = await chromium.launchPersistentContext(join(work, 'chromium-profile'), { ...BROWSER, viewport: { width: 1000, height: 900 } })
  cleanups.push(() => context.close())
}, { timeout: 600_000 })

after(async () => {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup()
    } catch (err) {
      console.error(`cleanup: ${err.message}`)
    }
  }
})

/** The stored thread `id`, as this browser's session owns it. */
async function threadOf(id) {
  const cookie = (await context.cookies(base)).find((c) => c.name === SESSION_COOKIE)
  const owner = cookie?.value.slice(0, cookie.value.indexOf('.'))
  return owner ? store.getThread(id, { owner }) : null
}

/** A page of the browser, with its errors and the status of each /stream GET collected. */
async function openPage() {
  const page = await context.newPage()
  const problems = []
  const resumes = []
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  page.on('response', (res) => res.url().endsWith('/stream') && resumes.push(res.status()))
  return { page, problems, resumes }
}

async function shot(page, name) {
  if (!page.isClosed()) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true }).catch(() => {})
}

test('/chat: reloaded mid-answer, the page follows the answer from the server and sees it finish', { timeout: 120_000 }, async () => {
  api.handler = slowly(150) // the answer's text takes a few seconds
  const from = api.requests.length
  const { page, problems, resumes } = await openPage()
  try {
    await page.goto(`${base}/chat`, { waitUntil: 'networkidle' })
    const id = chatIdOf(page)
    assert.deepEqual(resumes, [204], 'nothing in progress when the chat opens')
    await page.getByLabel('Message').fill("What's the status of order #4821?")
    await page.getByRole('button', { name: 'Send' }).click()
    // Part of the answer is on screen, not all of it.
    const reply = page.getByTestId('message-assistant').first()
    await reply.locator('[data-testid="text"]').waitFor({ timeout: 30_000 })
    const partial = await text(reply.getByTestId('text'))
    assert.ok(!ANSWER.test(partial), `the answer was already whole: ${partial}`)
    assert.equal((await threadOf(id)).status, 'running')
    await page.reload({ waitUntil: 'domcontentloaded' })
    // The reloaded page follows the run: the whole answer, once, after its tool call.
    const again = page.getByTestId('message-assistant')
    await page.locator('[data-testid="text"][data-state="done"]').waitFor({ timeout: 30_000 })
    await shot(page, 'resume-1-reloaded')
    assert.match(await text(again.first().getByTestId('text')), ANSWER)
    assert.equal(await again.count(), 1)
    assert.equal(await page.getByTestId('message-user').count(), 1)
    assert.equal(await page.locator('[data-testid="tool-call"][data-tool="get_order_status"]').getAttribute('data-state'), 'output-available')
    assert.deepEqual(resumes, [204, 200])
    // The run was never cut: two requests to the model, as without the reload.
    assert.equal(api.requests.length - from, 2)
    assert.deepEqual(problems, [])
  } catch (err) {
    await shot(page, 'resume-1-FAILED')
    throw new Error(`${err.message}\n--- next start output ---\n${server.output.slice(-3000)}`, { cause: err })
  } finally {
    api.handler = demoModel
    await page.close()
  }
})

test('/chat: a second tab follows the answer in progress; Stop there stops the run, both tabs show the stop, and its tools do not run', { timeout: 120_000 }, async () => {
  api.handler = slowly(250) // the tool_use reply takes about 2.5 s
  const from = api.requests.length
  const first = await openPage()
  const second = await openPage()
  try {
    await first.page.goto(`${base}/chat`, { waitUntil: 'networkidle' })
    const id = chatIdOf(first.page)
    await first.page.getByLabel('Message').fill("What's the status of order #4821?")
    await first.page.getByRole('button', { name: 'Send' }).click()
    // The model is still writing its tool call.
    await first.page.locator('[data-testid="tool-call"][data-tool="get_order_status"]').waitFor({ timeout: 15_000 })
    await second.page.goto(`${base}/chat?id=${id}`, { waitUntil: 'domcontentloaded' })
    await second.page.locator('[data-testid="tool-call"][data-tool="get_order_status"]').waitFor({ timeout: 15_000 })
    assert.deepEqual(second.resumes, [200])
    assert.ok(!api.requests[from].sseEvents.includes('message_stop'), 'the reply was still streaming')
    await second.page.getByRole('button', { name: 'Stop' }).click()
    for (const { page } of [first, second]) await page.getByTestId('chat-stopped').waitFor({ timeout: 10_000 })
    await shot(first.page, 'resume-2-first-tab-stopped')
    await shot(second.page, 'resume-2-second-tab-stopped')
    // Over on the server: the thread is free, nothing more was asked of the model, and the tool
    // the model was calling never ran (no result of it in the thread but the "not run" one).
    let thread = await threadOf(id)
    for (let waited = 0; thread.status === 'running' && waited < 5_000; waited += 100) {
      await sleep(100)
      thread = await threadOf(id)
    }
    assert.equal(thread.status, 'idle')
    await sleep(1_500)
    assert.equal(api.requests.length - from, 1, 'no request after the stop')
    const results = thread.messages.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_result') : []))
    for (const r of results) assert.equal(r.is_error, true, `a tool ran: ${JSON.stringify(r)}`)
    assert.doesNotMatch(server.output, /get_order_status.*(ok|succeeded)/)
    assert.deepEqual([...first.problems, ...second.problems], [])
  } catch (err) {
    await shot(first.page, 'resume-2-FAILED-first')
    await shot(second.page, 'resume-2-FAILED-second')
    throw new Error(`${err.message}\n--- next start output ---\n${server.output.slice(-3000)}`, { cause: err })
  } finally {
    api.handler = demoModel
    await first.page.close()
    await second.page.close()
  }
})
