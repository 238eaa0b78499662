// examples/nextjs for real: installed from the packed tarballs, built with `next build`, served by
// `next start` on 127.0.0.1 against the local stand-in of the API, and driven in Debian's Chromium.
// Screenshots of every case go to examples/nextjs/test-results/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { app, installExample } from '../scripts/example-install.mjs'
import { startMockApi, demoModel } from '../__test__/mock-api.mjs'
import { freePort, runProcess, startProcess, waitForHttp } from './helpers.mjs'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const KEY = 'sk-ant-e2e-key-0123456789'
const SHOTS = join(app, 'test-results')
const next = join(app, 'node_modules', 'next', 'dist', 'bin', 'next')

let api, server, context, base, work
const cleanups = []

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`)
  installExample({ log: () => {} })
  work = mkdtempSync(join(tmpdir(), 'atc-e2e-'))
  cleanups.push(() => rmSync(work, { recursive: true, force: true }))
  process.on('exit', () => rmSync(work, { recursive: true, force: true })) // also after a Ctrl-C
  rmSync(SHOTS, { recursive: true, force: true })
  mkdirSync(SHOTS, { recursive: true })

  // A fresh database for every run: the recovery case writes a return into it.
  const db = join(work, 'orders.db')
  await runProcess(process.execPath, [join(app, 'scripts', 'seed-db.mjs'), db], { cwd: app })

  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANTHROPIC_') && !k.startsWith('npm_')))
  Object.assign(env, { NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' })
  await runProcess(process.execPath, [next, 'build'], { cwd: app, env })

  api = await startMockApi({ apiKey: KEY, handler: demoModel })
  cleanups.push(() => api.close())

  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  server = startProcess(process.execPath, [next, 'start', '-H', '127.0.0.1', '-p', String(port)], {
    cwd: app,
    env: { ...env, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: api.url, ORDERS_DB: db },
  })
  cleanups.push(() => server.stop())
  await waitForHttp(base, server)

  const { chromium } = createRequire(join(app, 'package.json'))('playwright-core')
  context = await chromium.launchPersistentContext(join(work, 'chromium-profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
    viewport: { width: 1000, height: 900 },
  })
  cleanups.push(() => context.close())
}, { timeout: 600_000 })

// Runs even when `before` or a test failed: every server and the browser are stopped.
after(async () => {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup()
    } catch (err) {
      console.error(`cleanup: ${err.message}`)
    }
  }
})

/**
 * Opens the page, asks `question`, waits for the result; screenshots it as `name` (also on failure).
 * `failedCalls`: how many failed tool calls the server must log; none of the developer's text it
 * logs may reach the browser (see `assertDeveloperTextStaysOnServer`).
 */
async function ask(name, question, { continueOnToolError = false, failedCalls = 0 } = {}, check) {
  const page = await context.newPage()
  const problems = []
  const actionResponses = []
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console error: ${msg.text()}`))
  page.on('response', (res) => res.status() >= 400 && problems.push(`HTTP ${res.status()} for ${res.url()}`))
  // The server action's response (everything the server sent the browser for this question), read
  // on its way to the page: Chromium does not keep the body of a streamed fetch for later.
  await page.route('**/*', async (route) => {
    if (route.request().method() !== 'POST') return route.fallback()
    const response = await route.fetch()
    const body = await response.text()
    actionResponses.push(body)
    await route.fulfill({ response, body })
  })
  const requestsBefore = api.requests.length
  const logFrom = server.output.length
  try {
    await page.goto(base, { waitUntil: 'networkidle' })
    await page.getByLabel('Your question').fill(question)
    await page.getByRole('checkbox').setChecked(continueOnToolError)
    await page.getByRole('button', { name: 'Ask' }).click()
    await page.getByTestId('result').waitFor({ timeout: 30_000 })
    await check(page, api.requests.slice(requestsBefore))
    await assertDeveloperTextStaysOnServer(page, actionResponses, logFrom, failedCalls)
    assert.deepEqual(problems, [])
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
  } catch (err) {
    await page.screenshot({ path: join(SHOTS, `${name}-FAILED.png`), fullPage: true }).catch(() => {})
    throw new Error(`${err.message}\n--- next start output ---\n${server.output.slice(-4000)}`, { cause: err })
  } finally {
    await page.close()
  }
}

/** The line a failed tool call shows in the browser (service.ts). */
const FAILED_CALL = 'This step did not work.'
/** Words only the engine's developer text uses ("The tool x threw a ToolError: …"). */
const DEVELOPER_WORDING = /threw a ToolError|The tool \w+ (threw|failed)/

/**
 * What the server logged for this question with console.error (each failed call's `error`, the
 * run's `error.message`) is the developer's text: it is in neither the page nor the server
 * action's response.
 */
async function assertDeveloperTextStaysOnServer(page, actionResponses, logFrom, failedCalls) {
  const logged = () => server.output.slice(logFrom)
  const failedCallLines = () => [...logged().matchAll(/\[tool-calling\] \w+ \([^)]+\) failed: (.+)/g)]
  for (let waited = 0; failedCallLines().length < failedCalls && waited < 5_000; waited += 100) await new Promise((r) => setTimeout(r, 100))
  assert.equal(failedCallLines().length, failedCalls, `failed calls logged by the server:\n${logged()}`)
  const developerTexts = [...logged().matchAll(/\[tool-calling\] (?:\w+ \([^)]+\) failed|\w+): (.+)/g)].map((m) => m[1].trim())
  assert.ok(actionResponses.length > 0, 'the server action answered')
  const bodies = [['the page', await page.content()], ...actionResponses.map((body) => ['the server action response', body])]
  for (const [where, body] of bodies) {
    assert.doesNotMatch(body, DEVELOPER_WORDING, `${where} holds the developer's text`)
    for (const dev of developerTexts) assert.ok(!body.includes(dev), `${where} holds the developer's text ${JSON.stringify(dev)}`)
  }
}

const text = async (locator) => (await locator.textContent()).trim()
const json = async (locator) => JSON.parse(await text(locator))

async function toolCalls(page) {
  const calls = []
  for (const li of await page.getByTestId('tool-call').all()) {
    const failed = (await li.getAttribute('class')) === 'failed'
    calls.push({
      name: await text(li.getByTestId('tool-name')),
      input: await json(li.getByTestId('tool-input')),
      ...(failed ? { error: await text(li.getByTestId('tool-error')) } : { output: await json(li.getByTestId('tool-output')) }),
    })
  }
  return calls
}

const status = (page, order) => text(page.locator(`tr[data-order="${order}"] .status`))

test('the seed question: the answer and the tool call with its input and output', { timeout: 60_000 }, async () => {
  await ask('1-order-status', "What's the status of order #4821?", {}, async (page, requests) => {
    assert.match(await text(page.getByTestId('answer')), /^Answer\s*Order #4821 is shipped\. Expected delivery: \d{4}-\d\d-\d\d\. Carrier: UPS\.$/)
    const calls = await toolCalls(page)
    assert.equal(calls.length, 1)
    assert.equal(calls[0].name, 'get_order_status')
    assert.deepEqual(calls[0].input, { orderId: '4821' })
    assert.equal(calls[0].output.status, 'shipped')
    assert.equal(calls[0].output.carrier, 'UPS')
    assert.equal(await page.getByTestId('error').count(), 0)
    // The app talked to the stand-in (ANTHROPIC_BASE_URL), with the key from the environment.
    assert.equal(requests.length, 2)
    assert.equal(requests[0].headers['x-api-key'], KEY)
    assert.deepEqual(requests[0].body.tools.map((t) => t.name).sort(), ['get_order_status', 'solicitar_devolucion'])
  })
})

test('a tool fails (onToolError "stop"): the page shows the error code and the message for the user, not the developer\'s text', { timeout: 60_000 }, async () => {
  await ask('2-tool-error', 'I want to return order #7777', { failedCalls: 1 }, async (page, requests) => {
    assert.equal(await text(page.getByTestId('error-code')), 'tool_execution_error')
    assert.match(await text(page.getByTestId('error-message')), /^Order 7777 was delivered on \d{4}-\d\d-\d\d, 45 days ago\. Returns are accepted only within 30 days of delivery\.$/)
    assert.equal(await page.getByTestId('answer').count(), 0)
    const calls = await toolCalls(page)
    assert.equal(calls.length, 1)
    assert.equal(calls[0].name, 'solicitar_devolucion')
    assert.deepEqual(calls[0].input, { orderId: '7777' })
    assert.equal(calls[0].error, FAILED_CALL) // the user's words are in the message above; the details are in the server log
    assert.equal(requests.length, 1, 'the run stopped at the failing tool')
    assert.equal(await status(page, '7777'), 'delivered')
  })
})

test('the model recovers (onToolError "continue"): it hears the ToolError and returns the other order', { timeout: 60_000 }, async () => {
  await ask('3-recovery', 'Quiero devolver el pedido #9999 o #1234', { continueOnToolError: true, failedCalls: 1 }, async (page, requests) => {
    const calls = await toolCalls(page)
    assert.equal(calls.length, 2)
    assert.deepEqual(calls.map((c) => [c.name, c.input.orderId]), [['solicitar_devolucion', '9999'], ['solicitar_devolucion', '1234']])
    assert.equal(calls[0].error, FAILED_CALL)
    assert.match(calls[1].output, /^Return RET-1234 started for order 1234 \(Rain jacket\), delivered 10 days ago\./)
    assert.match(await text(page.getByTestId('answer')), /Return RET-1234 started for order 1234/)
    assert.equal(await page.getByTestId('error').count(), 0)
    // The model was told (is_error) and called again.
    assert.equal(requests.length, 3)
    const told = requests[1].body.messages.at(-1).content[0]
    assert.equal(told.is_error, true)
    assert.match(JSON.stringify(told.content), /Order 9999 does not exist/)
    // The return is in the database: the server action revalidated the page's orders table.
    assert.equal(await status(page, '1234'), 'return requested')
  })
})
