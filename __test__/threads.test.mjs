// Sending only the new turn (the API's Threads) through the public API, against the JS stand-in:
// what the official SDK's tool runner sends in each case (recorded here, against the same
// stand-in) is what a run sends — lost, spent and busy threads, a request the API cannot thread,
// a stream cut once its reply began — and the history, approvals, the token budget and the
// request bytes of a long run.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import Anthropic from '@anthropic-ai/sdk'
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema'
import { registerTool, runWithTools, streamWithTools } from '../index.mjs'
import { reply, text, toolUse, THREADS_BETA } from '../stand-in/index.mjs'
import { KEY, at, startApi, freshName, collect } from './helpers.mjs'
import { WORKLOADS, executeTool, scriptedReply } from '../bench/workloads.mjs'

const SYSTEM = 'Be brief.'
const PROMPT = 'Look up 1, then 2.'

/** The SDK sends API version 2026-10-21, which the stand-in (written for 2023-06-01) refuses: let it through. */
function acceptSdkVersion(api) {
  api.server.prependListener('request', (req) => {
    if (req.headers['anthropic-version'] === '2026-10-21') req.headers['anthropic-version'] = '2023-06-01'
  })
}

/** Two tool rounds, then the answer; `state`: what becomes of the first reply once held. */
function script(api, name, { state, cut = false } = {}) {
  const first = { ...reply([toolUse(name, { q: '1' }, 'toolu_r1')]), ...(state ? { threadState: state } : {}) }
  const second = reply([toolUse(name, { q: '2' }, 'toolu_r2')])
  // message_start and a ping, then the connection is cut (a pause first, so message_start arrives).
  const cutSecond = { ...second, sseCutAfter: 2, streamDelayMs: 30 }
  api.script(first, ...(cut ? [cutSecond] : []), second, reply([text('Both found.')]))
}

/**
 * What the requests were, in terms that hold across clients: status, thread type, which earlier
 * request's reply a continue names, how many messages, whether system and tools went, the beta.
 */
function sequence(api) {
  const replies = api.requests.map((r) => r.reply?.id)
  return api.requests.map((r) => ({
    status: r.status,
    thread: r.body.thread?.type ?? null,
    continues: r.body.thread?.previous_message_id ? replies.indexOf(r.body.thread.previous_message_id) : null,
    messages: r.body.messages.length,
    system: 'system' in r.body,
    tools: 'tools' in r.body,
    beta: r.betas.includes(THREADS_BETA),
  }))
}

/** The official SDK's tool runner on the scripted conversation; the cut stream needs a second runner (the SDK ends the first with the error). */
async function sdkRun(api, name, cut) {
  const client = new Anthropic({ apiKey: KEY, baseURL: api.url, maxRetries: 0 })
  const tool = betaTool({ name, description: 'Look up', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, run: async ({ q }) => `found ${q}` })
  const params = { model: 'claude-test', max_tokens: 256, system: SYSTEM, messages: [{ role: 'user', content: PROMPT }], tools: [tool] }
  if (!cut) {
    const final = await client.beta.messages.toolRunner({ ...params, max_iterations: 5 })
    return final.content
  }
  const thread = client.beta.messages.thread({ ...params, unsupportedRequestBehavior: 'continue_unthreaded' })
  for (let attempt = 0; ; attempt++) {
    try {
      const runner = thread.toolRunner({ stream: true, max_iterations: 5 })
      for await (const stream of runner) for await (const _ of stream);
      return (await runner.done()).content
    } catch (error) {
      if (attempt > 0) throw error
    }
  }
}

const CASES = [
  { label: 'a thread kept to the end' },
  { label: 'a lost thread', state: 'lost' },
  { label: 'a reply already continued', state: 'continued' },
  { label: 'a reply being continued', state: 'in_flight' },
  { label: 'a request the API cannot thread', refuse: ['hipaa'] },
  { label: 'a stream cut once its reply began', cut: true },
]

for (const c of CASES) {
  test(`replays the recorded SDK behaviour: ${c.label}`, async (t) => {
    const api = await startApi(t)
    acceptSdkVersion(api)
    const name = freshName('lookup')
    registerTool({ definition: { name, description: 'Look up', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }, execute: ({ q }) => `found ${q}` })

    script(api, name, c)
    api.threads.refuse(c.refuse ?? [])
    const sdkContent = await sdkRun(api, name, c.cut)
    assert.deepEqual(sdkContent, [text('Both found.')])
    const recorded = sequence(api)

    api.reset()
    script(api, name, c)
    api.threads.refuse(c.refuse ?? [])
    const options = at(api, { model: 'claude-test', maxTokens: 256, system: SYSTEM, tools: [name] })
    const r = c.cut ? await streamWithTools(PROMPT, options).result : await runWithTools(PROMPT, options)
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Both found.')
    const ours = sequence(api)
    if (c.cut) {
      // The SDK ends its run with the cut and its next one starts a new thread; we retry at once.
      assert.deepEqual(api.requests.map((q) => q.retryCount), [0, 0, 1, 0])
    }
    assert.deepEqual(ours, recorded)
    if (c.state) assert.ok(recorded.some((q) => q.status >= 400), 'the case made the SDK recover')
  })
}

test('data.messages is the same with and without Threads, streamed or not, whatever the API refused', async (t) => {
  const api = await startApi(t)
  const name = freshName('lookup')
  registerTool({ definition: { name, input_schema: { type: 'object' } }, execute: ({ q }) => `found ${q}` })
  for (const streamed of [false, true]) {
    const histories = []
    for (const [threads, state] of [[false], [true], [true, 'lost'], [true, 'continued']]) {
      api.reset()
      script(api, name, { state })
      const options = at(api, { tools: [name], system: SYSTEM, apiThreads: threads })
      const r = streamed ? await streamWithTools(PROMPT, options).result : await runWithTools(PROMPT, options)
      assert.equal(r.error, null, JSON.stringify(r.error))
      histories.push(JSON.stringify(r.data.messages))
      assert.equal(api.requests.every((q) => 'thread' in q.body), threads)
    }
    assert.equal(new Set(histories).size, 1, `streamed: ${streamed}`)
  }
})

test('a run resumed after an approval starts a new thread with the whole history', async (t) => {
  const api = await startApi(t)
  const name = freshName('refund')
  registerTool({ definition: { name, input_schema: { type: 'object' } }, needsApproval: true, execute: () => 'refunded' })
  const approvalSecret = 'thread-test-secret-0123456789abcdef0123'
  api.script(reply([toolUse(name, { orderId: '1' })]))
  const paused = await runWithTools('Refund 1', at(api, { tools: [name], approvalSecret }))
  assert.equal(paused.data.stopReason, 'approval_required')
  api.script(reply([text('Refunded.')]))
  const [pending] = paused.data.pendingApprovals
  const resumed = await runWithTools(paused.data.messages, at(api, { tools: [name], approvalSecret, approvals: [{ approvalId: pending.approvalId, approved: true }] }))
  assert.equal(resumed.error, null, JSON.stringify(resumed.error))
  const last = api.requests.at(-1)
  assert.deepEqual(last.body.thread, { type: 'create' })
  assert.equal(last.body.messages.length, 3)
})

test('the token budget counts a threaded run as it counts the whole history', async (t) => {
  const api = await startApi(t)
  const name = freshName('lookup')
  registerTool({ definition: { name, input_schema: { type: 'object' } }, execute: ({ q }) => `found ${q}` })
  const results = []
  for (const apiThreads of [false, true]) {
    api.reset()
    script(api, name)
    const r = await runWithTools(PROMPT, at(api, { tools: [name], apiThreads, maxTotalTokens: 40 }))
    results.push({ code: r.error?.code, usage: r.error?.usage ?? r.data?.usage, sent: api.requests.map((q) => q.body.max_tokens) })
  }
  assert.equal(results[0].code, 'budget_exceeded')
  assert.deepEqual(results[1], results[0])
})

test('extraBody may not set thread: the run keeps it', async () => {
  const r = await runWithTools('hi', { apiKey: KEY, baseURL: 'http://127.0.0.1:9', extraBody: { thread: { type: 'create' } } })
  assert.equal(r.error?.code, 'invalid_request')
  assert.match(r.error.message, /extraBody may not set "thread"/)
})

test('a heavy run sends at most 0.35× the bytes with Threads as without', async (t) => {
  const api = await startApi(t)
  api.handler = (body) => scriptedReply(body)
  const heavy = WORKLOADS.heavy
  const names = heavy.tools.map((d) => d.name)
  for (const definition of heavy.tools) registerTool({ definition, execute: (input) => executeTool(definition.name, input) })
  const bytes = {}
  for (const apiThreads of [false, true]) {
    api.reset()
    api.handler = (body) => scriptedReply(body)
    const r = await runWithTools(heavy.prompt, at(api, { tools: names, maxToolIterations: heavy.rounds, apiThreads }))
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, heavy.finalText)
    assert.equal(api.requests.length, heavy.rounds + 1)
    bytes[apiThreads] = api.requests.reduce((sum, q) => sum + Buffer.byteLength(q.rawBody), 0)
  }
  const ratio = bytes.true / bytes.false
  t.diagnostic(`heavy run: ${bytes.true} bytes with Threads, ${bytes.false} without: ${ratio.toFixed(3)}×`)
  assert.ok(ratio <= 0.35, `${ratio}`)
})

test('streamWithTools shows the same parts with Threads as without', async (t) => {
  const api = await startApi(t)
  const name = freshName('lookup')
  registerTool({ definition: { name, input_schema: { type: 'object' } }, execute: ({ q }) => `found ${q}` })
  const seen = []
  for (const apiThreads of [false, true]) {
    api.reset()
    script(api, name, { state: 'lost' })
    const parts = await collect(streamWithTools(PROMPT, at(api, { tools: [name], apiThreads })))
    // Deltas come in pieces as the batching cuts them: compared joined.
    const joined = []
    for (const p of parts) {
      const last = joined.at(-1)
      if (p.type.endsWith('-delta') && last?.type === p.type && last.toolUseId === p.toolUseId) {
        joined[joined.length - 1] = { ...last, [p.delta !== undefined ? 'delta' : 'text']: (last.delta ?? last.text) + (p.delta ?? p.text) }
      } else joined.push(p.type === 'tool-result' || p.type === 'finish-step' || p.type === 'finish' ? { type: p.type } : p)
    }
    seen.push(JSON.stringify(joined))
  }
  assert.equal(seen[1], seen[0])
})
