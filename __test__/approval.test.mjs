// Approval of risky tools (needsApproval) and the lifecycle hooks, against the strict
// stand-in: the pause (nothing sent, the other calls run once), the resume (approve, deny, mixed,
// ordered mode), decisions that must be refused (forged input, made-up, expired, missing,
// another secret, nothing waiting), the secret, needsApproval as a function (fail closed),
// streamWithTools and the AI SDK UI message stream round trip (readUIMessageStream →
// approval-responded → fromUIMessages → resume), and onToolCall / onToolResult / onStepFinish.
// Every resumed history is checked by the stand-in's pairing rules (it answers 400 otherwise).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { registerTool, runWithTools, streamWithTools, fromUIMessages } from '../index.mjs'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { at, startApi, orderTool, toolResults, assertNoSecret, collect, uiMessageOf, approvalSecretInEnv, freshName as fresh, SECRET_ENV as ENV } from './helpers.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const SECRET = 'approval-test-secret-7f3a9c0e1d2b4a6f58c9'
const APPROVAL_ID = /^apr_\d+_[0-9a-f]{64}$/

// The suite decides where the secret comes from: none from the environment unless a test sets it.
approvalSecretInEnv(undefined)


const refundSchema = {
  type: 'object',
  properties: { orderId: { type: 'string' }, amount: { type: 'number' } },
  required: ['orderId', 'amount'],
}

/**
 * Registers a refund tool; returns its name and the calls it ran (input, ctx). `needsApproval`
 * as given (default true); `order` (an array) gets `start:<name>` / `end:<name>` pushed.
 */
function refundTool(base = 'refund', { needsApproval = true, order, delayMs = 0 } = {}) {
  const name = fresh(base)
  const runs = []
  registerTool({
    definition: { name, description: 'Refund an order', input_schema: refundSchema },
    needsApproval,
    execute: async (input, ctx) => {
      runs.push({ input, ctx })
      order?.push(`start:${name}`)
      if (delayMs) await sleep(delayMs)
      order?.push(`end:${name}`)
      return `refunded ${input.amount} on ${input.orderId}`
    },
  })
  return { name, runs }
}

/** A plain tool (no approval) that records its runs and, optionally, a global order. */
function plainTool(base = 'lookup', { order, delayMs = 0 } = {}) {
  const name = fresh(base)
  const runs = orderTool(name, async (input) => {
    order?.push(`start:${name}`)
    if (delayMs) await sleep(delayMs)
    order?.push(`end:${name}`)
    return { orderId: input.orderId, status: 'shipped' }
  })
  return { name, runs }
}

const shipped = (orderId) => JSON.stringify({ orderId, status: 'shipped' })
const declinedText = (reason) => (reason ? `The user declined this call: ${reason}. Do not retry it.` : 'The user declined this call. Do not retry it.')
const clone = (v) => JSON.parse(JSON.stringify(v))

/** Every request the stand-in got was accepted (the pairing rules and the rest passed). */
function allAccepted(api) {
  for (const [i, r] of api.requests.entries()) assert.equal(r.status, 200, `request ${i} was refused by the stand-in`)
}

/** A paused run's history: the tool_use turn, then (when some ran) a user message of only their results. */
function assertPausedHistory(data, assistantContent, ranIds) {
  const m = data.messages
  const tail = ranIds.length > 0 ? m.slice(-2) : m.slice(-1)
  assert.equal(tail[0].role, 'assistant')
  assert.deepEqual(tail[0].content, assistantContent, 'the tool_use turn is kept byte for byte')
  if (ranIds.length > 0) {
    assert.equal(tail[1].role, 'user')
    assert.deepEqual(
      tail[1].content.map((b) => [b.type, b.tool_use_id]),
      ranIds.map((id) => ['tool_result', id]),
      'the user message holds only the results of the calls that ran',
    )
  }
}

/** Captures console.error while `fn` runs. */
async function capturingErrors(fn) {
  const lines = []
  const original = console.error
  console.error = (...args) => lines.push(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(' '))
  try {
    return { value: await fn(), lines }
  } finally {
    console.error = original
  }
}

// --- 1, 2, 12: pause, approve, resume, re-send ----------------------------------------------------

test('one call needs approval, one does not: the other runs once, nothing is sent at the pause; approving runs it and the loop answers', async (t) => {
  const api = await startApi(t)
  const lookup = plainTool()
  const refund = refundTool()
  const turn = [text('Let me look and refund.'), toolUse(lookup.name, { orderId: '7' }, 'toolu_look1'), toolUse(refund.name, { orderId: '7', amount: 5 }, 'toolu_refund1')]
  api.script(reply(turn), reply([text('Refunded 5 on order 7.')]), reply([text('You are welcome.')]))
  const options = at(api, { tools: [lookup.name, refund.name], approvalSecret: SECRET })

  const paused = await runWithTools('Refund order 7', options)
  assert.equal(paused.error, null, JSON.stringify(paused.error))
  assert.equal(paused.data.stopReason, 'approval_required')
  assert.equal(api.requests.length, 1, 'nothing is sent to the model at the pause')
  assert.equal(lookup.runs.length, 1)
  assert.equal(refund.runs.length, 0, 'the call needing approval did not run')
  assert.equal(paused.data.pendingApprovals.length, 1)
  const [pending] = paused.data.pendingApprovals
  assert.match(pending.approvalId, APPROVAL_ID)
  assert.deepEqual({ ...pending, approvalId: undefined }, { approvalId: undefined, toolUseId: 'toolu_refund1', toolName: refund.name, input: { orderId: '7', amount: 5 } })
  assert.equal(paused.data.messages.length, 3)
  assert.deepEqual(paused.data.messages[0], { role: 'user', content: 'Refund order 7' })
  assertPausedHistory(paused.data, turn, ['toolu_look1'])
  assert.equal(paused.data.messages[2].content[0].content, shipped('7'))
  assert.ok(paused.data.toolCalls.some((c) => c.toolUseId === 'toolu_look1' && !c.isError), 'the call that ran is reported')
  assert.ok(!paused.data.toolCalls.some((c) => c.toolUseId === 'toolu_refund1'), 'the waiting call is not reported as made')
  assertNoSecret(paused)
  assert.ok(!JSON.stringify(paused).includes(SECRET), 'the approval secret is in no result')

  // The page posts the history back with the person's yes.
  const posted = clone(paused.data.messages)
  const done = await runWithTools(posted, { ...options, approvals: [{ approvalId: pending.approvalId, approved: true }] })
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(done.data.stopReason, 'end_turn')
  assert.equal(done.data.text, 'Refunded 5 on order 7.')
  assert.equal(done.data.pendingApprovals?.length ?? 0, 0)
  assert.equal(refund.runs.length, 1, 'the approved call ran once')
  assert.deepEqual(refund.runs[0].input, { orderId: '7', amount: 5 })
  assert.equal(refund.runs[0].ctx.toolUseId, 'toolu_refund1', 'ctx.toolUseId is the idempotency key of the call')
  assert.equal(lookup.runs.length, 1, 'the call that ran before the pause is not run again')
  assert.equal(api.requests.length, 2)
  allAccepted(api)
  // The request the model got: the results joined in tool_use order, in the one user message.
  const sent = api.requests[1].body.messages
  assert.equal(sent.length, 3)
  assert.deepEqual(sent[1].content, turn)
  assert.deepEqual(sent[2], {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'toolu_look1', content: shipped('7') },
      { type: 'tool_result', tool_use_id: 'toolu_refund1', content: 'refunded 5 on 7' },
    ],
  })
  assert.ok(done.data.toolCalls.some((c) => c.toolUseId === 'toolu_refund1' && c.output === 'refunded 5 on 7' && !c.isError), JSON.stringify(done.data.toolCalls))

  // 12: the final history is re-sendable plus a new user message.
  assert.deepEqual(done.data.messages.slice(0, 3), sent)
  assert.deepEqual(done.data.messages[3], { role: 'assistant', content: [text('Refunded 5 on order 7.')] })
  const again = await runWithTools([...done.data.messages, { role: 'user', content: 'Thanks!' }], options)
  assert.equal(again.error, null, JSON.stringify(again.error))
  assert.equal(again.data.text, 'You are welcome.')
  allAccepted(api)
  assert.equal(refund.runs.length, 1)
})

test('a history posted twice runs the approved call twice with the same ctx.toolUseId (the idempotency key)', async (t) => {
  const { api, refund, options, paused, approvalId } = await pausedRefund(t)
  api.script(reply([text('Refunded.')]), reply([text('Refunded.')]))
  for (let i = 0; i < 2; i++) {
    const r = await runWithTools(clone(paused.data.messages), { ...options, approvals: [{ approvalId, approved: true }] })
    assert.equal(r.error, null, JSON.stringify(r.error))
  }
  assert.deepEqual(refund.runs.map((r) => r.ctx.toolUseId), ['toolu_ref3', 'toolu_ref3'])
  allAccepted(api)
})

// --- 3: deny, in both onToolError modes -------------------------------------------------------------

for (const mode of ['stop', 'continue']) {
  test(`a denial with a reason is an is_error result the model hears, and the run goes on (onToolError: "${mode}")`, async (t) => {
    const api = await startApi(t)
    const refund = refundTool()
    const turn = [toolUse(refund.name, { orderId: '9', amount: 50 }, 'toolu_deny1')]
    api.script(reply(turn), reply([text('OK, I will not refund it.')]))
    const options = at(api, { tools: [refund.name], approvalSecret: SECRET, onToolError: mode })
    const paused = await runWithTools('Refund order 9', options)
    assert.equal(paused.error, null, JSON.stringify(paused.error))
    assert.equal(paused.data.stopReason, 'approval_required')
    assert.equal(api.requests.length, 1)
    // No call ran: the history ends with the tool_use turn.
    assert.equal(paused.data.messages.length, 2)
    assertPausedHistory(paused.data, turn, [])
    const { approvalId } = paused.data.pendingApprovals[0]

    const done = await runWithTools(paused.data.messages, { ...options, approvals: [{ approvalId, approved: false, reason: 'too expensive' }] })
    assert.equal(done.error, null, `a denial must not end the run: ${JSON.stringify(done.error)}`)
    assert.equal(done.data.text, 'OK, I will not refund it.')
    assert.equal(refund.runs.length, 0, 'a denied call never runs')
    assert.equal(api.requests.length, 2)
    allAccepted(api)
    assert.deepEqual(toolResults(api, 1), [
      { type: 'tool_result', tool_use_id: 'toolu_deny1', content: declinedText('too expensive'), is_error: true },
    ])
    await sleep(20)
    assert.equal(refund.runs.length, 0)
  })
}

// --- 4: mixed decisions ---------------------------------------------------------------------------

test('two calls needing approval: one approved, one denied (decisions matched by id, not position)', async (t) => {
  const api = await startApi(t)
  const refund = refundTool()
  const turn = [toolUse(refund.name, { orderId: '1', amount: 5 }, 'toolu_mix1'), toolUse(refund.name, { orderId: '2', amount: 7 }, 'toolu_mix2')]
  api.script(reply(turn), reply([text('Refunded order 1; order 2 was declined.')]))
  const options = at(api, { tools: [refund.name], approvalSecret: SECRET })
  const paused = await runWithTools('Refund orders 1 and 2', options)
  assert.equal(paused.error, null, JSON.stringify(paused.error))
  assert.equal(paused.data.stopReason, 'approval_required')
  assert.deepEqual(paused.data.pendingApprovals.map((p) => [p.toolUseId, p.input.amount]), [['toolu_mix1', 5], ['toolu_mix2', 7]], 'in tool_use order')
  const [first, second] = paused.data.pendingApprovals
  assert.notEqual(first.approvalId, second.approvalId)
  assertPausedHistory(paused.data, turn, [])
  assert.equal(api.requests.length, 1)

  const done = await runWithTools(paused.data.messages, {
    ...options,
    approvals: [
      { approvalId: second.approvalId, approved: false },
      { approvalId: first.approvalId, approved: true },
    ],
  })
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(done.data.text, 'Refunded order 1; order 2 was declined.')
  assert.deepEqual(refund.runs.map((r) => r.input), [{ orderId: '1', amount: 5 }], 'only the approved call ran')
  allAccepted(api)
  assert.deepEqual(toolResults(api, 1), [
    { type: 'tool_result', tool_use_id: 'toolu_mix1', content: 'refunded 5 on 1' },
    { type: 'tool_result', tool_use_id: 'toolu_mix2', content: declinedText(), is_error: true },
  ])
})

// --- 5, 6: decisions that are refused -----------------------------------------------------------

/** A paused run with one refund call of `amount` (history ends with the tool_use turn). */
async function pausedRefund(t, { amount = 5, secret = SECRET, extra = {} } = {}) {
  const api = await startApi(t)
  const refund = refundTool()
  const turn = [toolUse(refund.name, { orderId: '3', amount }, 'toolu_ref3')]
  api.script(reply(turn))
  const options = at(api, { tools: [refund.name], ...(secret === null ? {} : { approvalSecret: secret }), ...extra })
  const paused = await runWithTools('Refund order 3', options)
  assert.equal(paused.error, null, JSON.stringify(paused.error))
  assert.equal(paused.data.stopReason, 'approval_required')
  assert.equal(api.requests.length, 1)
  return { api, refund, options, paused, approvalId: paused.data.pendingApprovals[0].approvalId }
}

/** A resume that must be refused: invalid_request matching `pattern`, nothing sent, nothing run. */
async function assertRefused(api, refund, prompt, options, pattern) {
  const before = api.requests.length
  const r = await runWithTools(prompt, options)
  assert.equal(r.data, null, `expected a refusal, got ${JSON.stringify(r.data && r.data.stopReason)}`)
  assert.equal(r.error.code, 'invalid_request', r.error.message)
  assert.match(r.error.message, pattern)
  await sleep(10)
  assert.equal(api.requests.length, before, 'nothing was sent')
  assert.equal(refund.runs.length, 0, 'nothing ran')
  return r.error
}

test('forged input: the page changes the waiting call (amount 5 → 500) and posts the same id → invalid_request, nothing sent or run', async (t) => {
  const { api, refund, options, paused, approvalId } = await pausedRefund(t, { amount: 5 })
  const forged = clone(paused.data.messages)
  forged.at(-1).content[0].input.amount = 500
  await assertRefused(api, refund, forged, { ...options, approvals: [{ approvalId, approved: true }] }, /approvals\[0\]/)

  // The same with the call's id or name changed.
  const renamedId = clone(paused.data.messages)
  renamedId.at(-1).content[0].id = 'toolu_other'
  await assertRefused(api, refund, renamedId, { ...options, approvals: [{ approvalId, approved: true }] }, /approvals\[0\]/)

  // The honest history with the same id still works afterwards: the refusals consumed nothing.
  api.script(reply([text('Refunded 5.')]))
  const done = await runWithTools(paused.data.messages, { ...options, approvals: [{ approvalId, approved: true }] })
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.deepEqual(refund.runs.map((r) => r.input.amount), [5])
  allAccepted(api)
})

test('a made-up id (well-formed or not) is refused naming approvals[0]', async (t) => {
  const { api, refund, options, paused } = await pausedRefund(t)
  const invented = `apr_${Date.now()}_${'0123456789abcdef'.repeat(4)}`
  await assertRefused(api, refund, paused.data.messages, { ...options, approvals: [{ approvalId: invented, approved: true }] }, /approvals\[0\]/)
  await assertRefused(api, refund, paused.data.messages, { ...options, approvals: [{ approvalId: 'abc', approved: true }] }, /approvals\[0\]/)
  // A denial with a made-up id is refused too (a decision must be for the call it names).
  await assertRefused(api, refund, paused.data.messages, { ...options, approvals: [{ approvalId: 'abc', approved: false }] }, /approvals\[0\]/)
})

test('an id has one spelling: with +, a leading zero, upper-case or mixed-case hex it is refused and nothing runs; as issued it works', async (t) => {
  const { api, refund, options, paused, approvalId } = await pausedRefund(t)
  const [, at, hex] = approvalId.split('_')
  const mixed = [...hex].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join('')
  for (const other of [`apr_+${at}_${hex}`, `apr_0${at}_${hex}`, `apr_${at}_${hex.toUpperCase()}`, `apr_${at}_${mixed}`]) {
    assert.notEqual(other, approvalId)
    await assertRefused(api, refund, paused.data.messages, { ...options, approvals: [{ approvalId: other, approved: true }] }, /approvals\[0\][\s\S]*is not an approval id this package issued/)
  }
  api.script(reply([text('Refunded.')]))
  const done = await runWithTools(paused.data.messages, { ...options, approvals: [{ approvalId, approved: true }] })
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(refund.runs.length, 1)
})

test('an id older than approvalTtlMs is refused as expired', async (t) => {
  const { api, refund, options, paused, approvalId } = await pausedRefund(t)
  await sleep(20)
  await assertRefused(api, refund, paused.data.messages, { ...options, approvalTtlMs: 1, approvals: [{ approvalId, approved: true }] }, /approvals\[0\][\s\S]*expired/)
})

test('a call waiting without a decision (approvals: [] or none) is refused naming the call', async (t) => {
  const { api, refund, options, paused } = await pausedRefund(t)
  const error = await assertRefused(api, refund, paused.data.messages, { ...options, approvals: [] }, /toolu_ref3/)
  assert.match(error.message, new RegExp(refund.name))
  await assertRefused(api, refund, paused.data.messages, options, /toolu_ref3/)
})

test('the same call decided twice is refused', async (t) => {
  const { api, refund, options, paused, approvalId } = await pausedRefund(t)
  await assertRefused(
    api,
    refund,
    paused.data.messages,
    { ...options, approvals: [{ approvalId, approved: true }, { approvalId, approved: false }] },
    /approvals\[1\]/,
  )
})

test('approvals on a history with nothing waiting are refused', async (t) => {
  const { api, refund, options, paused, approvalId } = await pausedRefund(t)
  const approvals = [{ approvalId, approved: true }]
  await assertRefused(api, refund, 'Hello', { ...options, approvals }, /approvals/)
  // A history whose calls all have their results: nothing is waiting.
  const answered = [...clone(paused.data.messages), { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_ref3', content: 'done elsewhere' }] }]
  await assertRefused(api, refund, answered, { ...options, approvals }, /approvals/)
})

// --- 7: the secret ---------------------------------------------------------------------------------

test('no secret: a run offering a tool that needs approval is invalid_request naming both approvalSecret and the env var; nothing sent', async (t) => {
  const api = await startApi(t)
  const refund = refundTool()
  const lookup = plainTool()
  api.script(reply([toolUse(refund.name, { orderId: '1', amount: 5 })]))
  const r = await runWithTools('Refund order 1', at(api, { tools: [refund.name, lookup.name] }))
  assert.equal(r.data, null)
  assert.equal(r.error.code, 'invalid_request')
  assert.match(r.error.message, /approvalSecret/)
  assert.match(r.error.message, /ANTHROPIC_TOOL_CALLING_SECRET/)
  assert.equal(api.requests.length, 0, 'nothing was sent')
  assert.equal(refund.runs.length, 0)
  // The same through streamWithTools.
  const s = await streamWithTools('Refund order 1', at(api, { tools: [refund.name] })).result
  assert.equal(s.error.code, 'invalid_request')
  assert.equal(api.requests.length, 0)
  // A tool that needs approval but is not offered in this run needs no secret.
  api.reset()
  api.script(reply([text('Hi.')]))
  const plain = await runWithTools('Hi', at(api, { tools: [lookup.name] }))
  assert.equal(plain.error, null, JSON.stringify(plain.error))
})

test('the secret from ANTHROPIC_TOOL_CALLING_SECRET (read at call time) works; another secret on resume is a forgery', async (t) => {
  const api = await startApi(t)
  const refund = refundTool()
  const turn = [toolUse(refund.name, { orderId: '4', amount: 5 }, 'toolu_env1')]
  api.script(reply(turn), reply([text('Refunded.')]))
  const options = at(api, { tools: [refund.name] })
  let paused
  process.env[ENV] = 'env-secret-0b1c2d3e4f5a6b7c8d9e0f1a2b3c'
  try {
    paused = await runWithTools('Refund order 4', options)
  } finally {
    delete process.env[ENV]
  }
  assert.equal(paused.error, null, JSON.stringify(paused.error))
  assert.equal(paused.data.stopReason, 'approval_required')
  const { approvalId } = paused.data.pendingApprovals[0]
  assert.ok(!JSON.stringify(paused).includes('env-secret-0b1c2d3e4f5a6b7c8d9e0f1a2b3c'))

  // Another secret (the option) on resume: the id does not verify.
  await assertRefused(api, refund, paused.data.messages, { ...options, approvalSecret: 'another-secret-0a1b2c3d4e5f6a7b8c9d0e1f', approvals: [{ approvalId, approved: true }] }, /approvals\[0\]/)
  // The env secret changed between pause and resume: refused too.
  process.env[ENV] = 'rotated-secret-0a1b2c3d4e5f6a7b8c9d0e1f'
  try {
    await assertRefused(api, refund, paused.data.messages, { ...options, approvals: [{ approvalId, approved: true }] }, /approvals\[0\]/)
  } finally {
    delete process.env[ENV]
  }
  // No secret at all on resume: refused naming both, nothing sent.
  await assertRefused(api, refund, paused.data.messages, { ...options, approvals: [{ approvalId, approved: true }] }, /approvalSecret[\s\S]*ANTHROPIC_TOOL_CALLING_SECRET|ANTHROPIC_TOOL_CALLING_SECRET[\s\S]*approvalSecret/)

  // The same env secret again: it resumes.
  process.env[ENV] = 'env-secret-0b1c2d3e4f5a6b7c8d9e0f1a2b3c'
  let done
  try {
    done = await runWithTools(paused.data.messages, { ...options, approvals: [{ approvalId, approved: true }] })
  } finally {
    delete process.env[ENV]
  }
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(done.data.text, 'Refunded.')
  assert.equal(refund.runs.length, 1)
  allAccepted(api)
})

// --- 8: needsApproval as a function ------------------------------------------------------------

test('needsApproval (input, ctx) => input.amount > 100: a small refund runs at once, a big one waits; ctx has toolUseId and context', async (t) => {
  const api = await startApi(t)
  const asked = []
  const refund = refundTool('refund_fn', {
    needsApproval: (input, ctx) => {
      asked.push({ input, ctx })
      return input.amount > 100
    },
  })
  const context = { user: 'u-42' }
  const options = at(api, { tools: [refund.name], approvalSecret: SECRET, context })
  api.script(reply([toolUse(refund.name, { orderId: '5', amount: 20 }, 'toolu_small')]), reply([text('Refunded 20.')]))
  const small = await runWithTools('Refund 20 on order 5', options)
  assert.equal(small.error, null, JSON.stringify(small.error))
  assert.equal(small.data.stopReason, 'end_turn')
  assert.equal(small.data.text, 'Refunded 20.')
  assert.deepEqual(refund.runs.map((r) => r.input.amount), [20])
  assert.equal(asked.length, 1)
  assert.deepEqual(asked[0].input, { orderId: '5', amount: 20 })
  assert.equal(asked[0].ctx.toolUseId, 'toolu_small')
  assert.equal(asked[0].ctx.context, context, "ctx.context is the run's context")

  api.script(reply([toolUse(refund.name, { orderId: '6', amount: 500 }, 'toolu_big')]), reply([text('Refunded 500.')]))
  const big = await runWithTools('Refund 500 on order 6', options)
  assert.equal(big.error, null, JSON.stringify(big.error))
  assert.equal(big.data.stopReason, 'approval_required')
  assert.deepEqual(big.data.pendingApprovals.map((p) => [p.toolUseId, p.input.amount]), [['toolu_big', 500]])
  assert.equal(refund.runs.length, 1, 'the big refund waits')
  assert.equal(api.requests.length, 3)
  const done = await runWithTools(big.data.messages, { ...options, approvals: [{ approvalId: big.data.pendingApprovals[0].approvalId, approved: true }] })
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.deepEqual(refund.runs.map((r) => r.input.amount), [20, 500])
  allAccepted(api)
})

test('an async needsApproval is awaited; a throwing, rejecting or non-boolean one makes the call wait (fail closed)', async (t) => {
  const api = await startApi(t)
  const cases = [
    ['async yes', async (input) => { await sleep(5); return input.amount > 100 }, true],
    ['async no', async (input) => { await sleep(5); return input.amount > 1000 }, false],
    ['throws', () => { throw new Error('db down') }, true],
    ['rejects', async () => { throw new Error('db down') }, true],
    ['returns undefined', () => undefined, true],
  ]
  for (const [label, needsApproval, waits] of cases) {
    const refund = refundTool('refund_policy', { needsApproval })
    api.script(reply([toolUse(refund.name, { orderId: '8', amount: 200 })]), reply([text('Done.')]))
    const before = api.requests.length
    const { value: r, lines } = await capturingErrors(() => runWithTools('Refund 200 on order 8', at(api, { tools: [refund.name], approvalSecret: SECRET })))
    assert.equal(r.error, null, `${label}: ${JSON.stringify(r.error)}`)
    if (waits) {
      assert.equal(r.data.stopReason, 'approval_required', label)
      assert.equal(r.data.pendingApprovals.length, 1, label)
      assert.equal(refund.runs.length, 0, `${label}: the call waits`)
      assert.equal(api.requests.length, before + 1, label)
      api.reset()
    } else {
      assert.equal(r.data.stopReason, 'end_turn', label)
      assert.equal(refund.runs.length, 1, label)
    }
    if (label === 'throws' || label === 'rejects') assert.ok(lines.some((l) => /needsApproval/.test(l) && /db down/.test(l)), `${label}: logged: ${lines}`)
  }
})

// --- 9: ordered mode ---------------------------------------------------------------------------

test('parallelToolCalls: false: a runs, b waits, c (after b) is not run and told so; approving b runs b alone, results in tool_use order', async (t) => {
  const api = await startApi(t)
  const order = []
  const a = plainTool('a_look', { order, delayMs: 5 })
  const b = refundTool('b_refund', { order, delayMs: 5 })
  const c = plainTool('c_look', { order, delayMs: 5 })
  const turn = [toolUse(a.name, { orderId: 'A' }, 'toolu_ord_a'), toolUse(b.name, { orderId: 'B', amount: 9 }, 'toolu_ord_b'), toolUse(c.name, { orderId: 'C' }, 'toolu_ord_c')]
  api.script(reply(turn), reply([text('b is done; c again?')]))
  const options = at(api, { tools: [a.name, b.name, c.name], approvalSecret: SECRET, parallelToolCalls: false })
  const paused = await runWithTools('Do a, b and c', options)
  assert.equal(paused.error, null, JSON.stringify(paused.error))
  assert.equal(paused.data.stopReason, 'approval_required')
  assert.deepEqual(order, [`start:${a.name}`, `end:${a.name}`])
  assert.equal(c.runs.length, 0, 'a call after the first one waiting for approval is not run')
  assert.deepEqual(paused.data.pendingApprovals.map((p) => p.toolUseId), ['toolu_ord_b'], 'only b needs a decision')
  assertPausedHistory(paused.data, turn, ['toolu_ord_a', 'toolu_ord_c'])
  const notRun = paused.data.messages.at(-1).content[1]
  assert.equal(notRun.is_error, true)
  assert.match(notRun.content, new RegExp(`^This call to ${c.name} was not run: an earlier call in this turn \\(${b.name}\\) is waiting for the user's approval`))
  const reported = paused.data.toolCalls.find((call) => call.toolUseId === 'toolu_ord_c')
  assert.equal(reported.isError, true)
  assert.match(reported.error, /^Not run: /)
  assert.equal(api.requests.length, 1)

  const done = await runWithTools(paused.data.messages, { ...options, approvals: [{ approvalId: paused.data.pendingApprovals[0].approvalId, approved: true }] })
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(done.data.text, 'b is done; c again?')
  assert.deepEqual(order, [`start:${a.name}`, `end:${a.name}`, `start:${b.name}`, `end:${b.name}`], 'b alone on resume')
  assert.deepEqual([a.runs.length, b.runs.length, c.runs.length], [1, 1, 0])
  allAccepted(api)
  assert.deepEqual(toolResults(api, 1), [
    { type: 'tool_result', tool_use_id: 'toolu_ord_a', content: shipped('A') },
    { type: 'tool_result', tool_use_id: 'toolu_ord_b', content: 'refunded 9 on B' },
    notRun,
  ])
})

// --- 10: streamWithTools and the UI message stream -------------------------------------------------

test('streamWithTools: the paused stream ends with a finish part holding approval_required; resuming with streamWithTools works', async (t) => {
  const api = await startApi(t)
  const lookup = plainTool()
  const refund = refundTool()
  const turn = [toolUse(lookup.name, { orderId: '11' }, 'toolu_s_look'), toolUse(refund.name, { orderId: '11', amount: 15 }, 'toolu_s_ref')]
  api.script(reply(turn), reply([text('Refunded 15.')]))
  const options = at(api, { tools: [lookup.name, refund.name], approvalSecret: SECRET })
  const stream = streamWithTools('Refund order 11', options)
  const parts = await collect(stream)
  const last = parts.at(-1)
  assert.equal(last.type, 'finish')
  assert.equal(last.result.error, null, JSON.stringify(last.result.error))
  assert.equal(last.result.data.stopReason, 'approval_required')
  assert.deepEqual(last.result.data.pendingApprovals.map((p) => p.toolUseId), ['toolu_s_ref'])
  assert.equal((await stream.result).data.pendingApprovals[0].approvalId, last.result.data.pendingApprovals[0].approvalId)
  assert.ok(parts.some((p) => p.type === 'tool-result' && p.toolUseId === 'toolu_s_look'), 'the call that ran has its result part')
  assert.ok(!parts.some((p) => p.type === 'tool-result' && p.toolUseId === 'toolu_s_ref'), 'the waiting call has no result part')
  assert.equal(api.requests.length, 1)
  assert.equal(refund.runs.length, 0)
  assertPausedHistory(last.result.data, turn, ['toolu_s_look'])

  const approvals = [{ approvalId: last.result.data.pendingApprovals[0].approvalId, approved: true }]
  const resumed = streamWithTools(last.result.data.messages, { ...options, approvals })
  const parts2 = await collect(resumed)
  const end = parts2.at(-1)
  assert.equal(end.type, 'finish')
  assert.equal(end.result.error, null, JSON.stringify(end.result.error))
  assert.equal(end.result.data.text, 'Refunded 15.')
  assert.ok(parts2.some((p) => p.type === 'tool-result' && p.toolUseId === 'toolu_s_ref' && p.output === 'refunded 15 on 11'), 'the approved call has its result part')
  assert.equal(parts2.filter((p) => p.type === 'text-delta').map((p) => p.text).join(''), 'Refunded 15.')
  assert.deepEqual([lookup.runs.length, refund.runs.length], [1, 1])
  allAccepted(api)
  assert.deepEqual(toolResults(api, 1).map((b) => b.tool_use_id), ['toolu_s_look', 'toolu_s_ref'])
})

test('UI message stream: the pending call is an approval request; the browser\'s answer through fromUIMessages resumes the run', async (t) => {
  const api = await startApi(t)
  const lookup = plainTool()
  const refund = refundTool()
  const turn = [text('Checking.'), toolUse(lookup.name, { orderId: '12' }, 'toolu_ui_look'), toolUse(refund.name, { orderId: '12', amount: 25 }, 'toolu_ui_ref')]
  api.script(reply(turn), reply([text('Refunded 25 on order 12.')]), reply([text('Anything else?')]))
  const options = at(api, { tools: [lookup.name, refund.name], approvalSecret: SECRET })
  const userMessage = { id: 'msg-user-1', role: 'user', parts: [{ type: 'text', text: 'Refund order 12' }] }

  // The route handler's first answer, as useChat reads it.
  const stream = streamWithTools(fromUIMessages([userMessage]), options)
  const message = await uiMessageOf(stream.toUIMessageStreamResponse())
  const result = await stream.result
  assert.equal(result.error, null, JSON.stringify(result.error))
  const { approvalId } = result.data.pendingApprovals[0]
  const refundPart = message.parts.find((p) => p.type === `tool-${refund.name}`)
  const lookupPart = message.parts.find((p) => p.type === `tool-${lookup.name}`)
  assert.ok(refundPart, JSON.stringify(message.parts))
  assert.equal(refundPart.state, 'approval-requested')
  assert.equal(refundPart.approval.id, approvalId)
  assert.equal(refundPart.toolCallId, 'toolu_ui_ref')
  assert.deepEqual(refundPart.input, { orderId: '12', amount: 25 })
  assert.equal(lookupPart.state, 'output-available')
  assert.equal(refund.runs.length, 0)

  // What addToolApprovalResponse({ id, approved: true }) writes, then useChat posts (JSON).
  const answered = {
    ...message,
    parts: message.parts.map((p) => (p === refundPart ? { ...p, state: 'approval-responded', approval: { ...p.approval, id: approvalId, approved: true, reason: undefined } } : p)),
  }
  const posted = JSON.parse(JSON.stringify([userMessage, answered]))
  const messages = fromUIMessages(posted)
  assert.deepEqual(messages.approvals, [{ approvalId, approved: true }])
  // The waiting call is kept (its tool_use), with no result yet: the resume adds it.
  const assistant = messages.find((m) => m.role === 'assistant')
  assert.deepEqual(assistant.content.filter((b) => b.type === 'tool_use').map((b) => b.id), ['toolu_ui_look', 'toolu_ui_ref'])
  assert.deepEqual(messages.at(-1).content.map((b) => b.tool_use_id), ['toolu_ui_look'])

  const resumed = streamWithTools(messages, { ...options, approvals: messages.approvals })
  const message2 = await uiMessageOf(resumed.toUIMessageStreamResponse())
  const done = await resumed.result
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(done.data.text, 'Refunded 25 on order 12.')
  assert.deepEqual([lookup.runs.length, refund.runs.length], [1, 1])
  const ranPart = message2.parts.find((p) => p.type === `tool-${refund.name}`)
  assert.equal(ranPart?.state, 'output-available', JSON.stringify(message2.parts))
  assert.equal(ranPart.output, 'refunded 25 on 12')
  assert.equal(message2.parts.filter((p) => p.type === 'text').map((p) => p.text).join(''), 'Refunded 25 on order 12.')
  allAccepted(api)
  assert.deepEqual(toolResults(api, 1).map((b) => [b.tool_use_id, b.content]), [['toolu_ui_look', shipped('12')], ['toolu_ui_ref', 'refunded 25 on 12']])

  // The chat goes on from the final history.
  const again = await runWithTools([...done.data.messages, { role: 'user', content: 'Thanks' }], options)
  assert.equal(again.error, null, JSON.stringify(again.error))
  allAccepted(api)
})

test('UI message stream: a denial from the browser reaches the model as the declined result', async (t) => {
  const api = await startApi(t)
  const refund = refundTool()
  api.script(reply([toolUse(refund.name, { orderId: '13', amount: 99 }, 'toolu_ui_deny')]), reply([text('Not refunded.')]))
  const options = at(api, { tools: [refund.name], approvalSecret: SECRET })
  const userMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Refund order 13' }] }
  const stream = streamWithTools(fromUIMessages([userMessage]), options)
  const message = await uiMessageOf(stream.toUIMessageStreamResponse())
  const part = message.parts.find((p) => p.type === `tool-${refund.name}`)
  assert.equal(part.state, 'approval-requested')
  const answered = { ...message, parts: message.parts.map((p) => (p === part ? { ...p, state: 'approval-responded', approval: { ...p.approval, approved: false, reason: 'not today' } } : p)) }
  const messages = fromUIMessages(JSON.parse(JSON.stringify([userMessage, answered])))
  assert.deepEqual(messages.approvals, [{ approvalId: part.approval.id, approved: false, reason: 'not today' }])
  const resumed = streamWithTools(messages, { ...options, approvals: messages.approvals })
  const after = await uiMessageOf(resumed.toUIMessageStreamResponse())
  // The browser sees the AI SDK's own state for a denial, not a failure.
  const deniedPart = after.parts.find((p) => p.type === `tool-${refund.name}`)
  assert.equal(deniedPart.state, 'output-denied', JSON.stringify(deniedPart))
  const done = await resumed.result
  assert.equal(done.error, null, JSON.stringify(done.error))
  assert.equal(refund.runs.length, 0)
  allAccepted(api)
  assert.deepEqual(toolResults(api, 1), [{ type: 'tool_result', tool_use_id: 'toolu_ui_deny', content: declinedText('not today'), is_error: true }])
})

// --- 11: hooks ----------------------------------------------------------------------------------

/** Hooks that record into `seq` and keep what they were given. */
function recordingHooks(seq) {
  const seen = { calls: [], results: [], steps: [] }
  return {
    seen,
    hooks: {
      onToolCall: (arg) => {
        seq.push(`call:${arg.toolName}`)
        seen.calls.push(arg)
      },
      onToolResult: (arg) => {
        seq.push(`result:${arg.toolName}`)
        seen.results.push(arg)
      },
      onStepFinish: (arg) => {
        seq.push(`step:${arg.step}`)
        seen.steps.push(arg)
      },
    },
  }
}

function assertHookOrderAndData(seq, seen, result, names, ids) {
  for (const name of names) {
    const i = (x) => seq.indexOf(`${x}:${name}`)
    assert.ok(i('call') >= 0 && i('call') < i('start'), `onToolCall before execute starts (${name}): ${seq}`)
    assert.ok(i('end') < i('result'), `onToolResult after execute ends (${name}): ${seq}`)
    assert.ok(i('result') < seq.indexOf('step:0'), `onStepFinish after the round's results (${name}): ${seq}`)
    assert.equal(seq.filter((s) => s === `call:${name}`).length, 1, `onToolCall once for ${name}`)
    assert.equal(seq.filter((s) => s === `result:${name}`).length, 1, `onToolResult once for ${name}`)
  }
  assert.deepEqual(seq.filter((s) => s.startsWith('step:')), ['step:0', 'step:1'])
  assert.equal(seq.at(-1), 'step:1')
  const calls = result.data.toolCalls
  assert.deepEqual(calls.map((c) => c.toolUseId), ids)
  for (const call of calls) {
    const onCall = seen.calls.find((c) => c.toolUseId === call.toolUseId)
    assert.deepEqual(onCall, { toolName: call.toolName, input: call.input, toolUseId: call.toolUseId })
    const onResult = seen.results.find((c) => c.toolUseId === call.toolUseId)
    assert.deepEqual(onResult, call, 'onToolResult gets the toolCalls entry')
  }
  assert.equal(seen.steps[0].step, 0)
  assert.equal(seen.steps[0].stopReason, 'tool_use')
  assert.deepEqual(seen.steps[0].toolCalls, calls, "onStepFinish has the step's toolCalls")
  assert.equal(seen.steps[0].usage.inputTokens, 10)
  assert.equal(seen.steps[0].usage.outputTokens, 5)
  assert.equal(seen.steps[1].step, 1)
  assert.equal(seen.steps[1].stopReason, 'end_turn')
  assert.deepEqual(seen.steps[1].toolCalls, [])
}

for (const how of ['runWithTools', 'streamWithTools']) {
  test(`hooks (${how}): onToolCall before execute, onToolResult after, onStepFinish after the round, with the toolCalls data`, async (t) => {
    const api = await startApi(t)
    const seq = []
    const x = plainTool('hook_x', { order: seq, delayMs: 15 })
    const y = plainTool('hook_y', { order: seq, delayMs: 5 })
    api.script(reply([toolUse(x.name, { orderId: 'X' }, 'toolu_hx'), toolUse(y.name, { orderId: 'Y' }, 'toolu_hy')]), reply([text('Both shipped.')]))
    const { seen, hooks } = recordingHooks(seq)
    const options = at(api, { tools: [x.name, y.name], ...hooks })
    const r = how === 'runWithTools' ? await runWithTools('Where are X and Y?', options) : await streamWithTools('Where are X and Y?', options).result
    assert.equal(r.error, null, JSON.stringify(r.error))
    assert.equal(r.data.text, 'Both shipped.')
    assertHookOrderAndData(seq, seen, r, [x.name, y.name], ['toolu_hx', 'toolu_hy'])
  })
}

test('hooks on resume: the approved call is seen before and after it runs; the denied one gets an is_error onToolResult and never runs', async (t) => {
  const api = await startApi(t)
  const seq = []
  const refund = refundTool('hook_refund', { order: seq })
  api.script(reply([toolUse(refund.name, { orderId: '14', amount: 5 }, 'toolu_h_ok'), toolUse(refund.name, { orderId: '15', amount: 6 }, 'toolu_h_no')]), reply([text('Done.')]))
  const options = at(api, { tools: [refund.name], approvalSecret: SECRET })
  const before = recordingHooks([])
  const paused = await runWithTools('Refund 14 and 15', { ...options, ...before.hooks })
  assert.equal(paused.data.stopReason, 'approval_required')
  assert.deepEqual(before.seen.calls, [], 'calls waiting for approval are not announced as run')
  const [ok, no] = paused.data.pendingApprovals
  const { seen, hooks } = recordingHooks(seq)
  const done = await runWithTools(paused.data.messages, {
    ...options,
    ...hooks,
    approvals: [{ approvalId: ok.approvalId, approved: true }, { approvalId: no.approvalId, approved: false }],
  })
  assert.equal(done.error, null, JSON.stringify(done.error))
  // onToolCall comes right before execute: the declined call, which never runs, is not announced.
  assert.deepEqual(seen.calls, [{ toolName: refund.name, input: { orderId: '14', amount: 5 }, toolUseId: 'toolu_h_ok' }])
  assert.ok(seq.indexOf(`call:${refund.name}`) < seq.indexOf(`start:${refund.name}`), String(seq))
  const okResult = seen.results.find((c) => c.toolUseId === 'toolu_h_ok')
  assert.equal(okResult?.output, 'refunded 5 on 14')
  const noResult = seen.results.find((c) => c.toolUseId === 'toolu_h_no')
  assert.equal(noResult?.isError, true, JSON.stringify(seen.results))
  assert.match(noResult.error, /[Dd]eclined/)
  for (const call of done.data.toolCalls) assert.deepEqual(seen.results.find((c) => c.toolUseId === call.toolUseId), call, 'onToolResult gets the toolCalls entry')
  assert.deepEqual(refund.runs.map((r) => r.ctx.toolUseId), ['toolu_h_ok'])
  assert.equal(refund.runs.length, 1)
  allAccepted(api)
})

test('a throwing hook (sync throw or rejection) is logged and never ends the run', async (t) => {
  const api = await startApi(t)
  const x = plainTool('hook_throw')
  for (const how of ['runWithTools', 'streamWithTools']) {
    api.script(reply([toolUse(x.name, { orderId: 'T' })]), reply([text('Shipped.')]))
    const options = at(api, {
      tools: [x.name],
      onToolCall: () => {
        throw new Error('boom-call')
      },
      onToolResult: async () => {
        throw new Error('boom-result')
      },
      onStepFinish: () => Promise.reject(new Error('boom-step')),
    })
    const { value: r, lines } = await capturingErrors(async () => {
      const r = how === 'runWithTools' ? await runWithTools('Where is T?', options) : await streamWithTools('Where is T?', options).result
      await sleep(20)
      return r
    })
    assert.equal(r.error, null, `${how}: ${JSON.stringify(r.error)}`)
    assert.equal(r.data.text, 'Shipped.')
    assert.equal(r.data.toolCalls.length, 1)
    assert.equal(r.data.toolCalls[0].isError, undefined)
    for (const [hook, word] of [['onToolCall', 'boom-call'], ['onToolResult', 'boom-result'], ['onStepFinish', 'boom-step']]) {
      assert.ok(lines.some((l) => l.includes(hook) && l.includes(word)), `${how}: ${hook}'s throw is logged: ${JSON.stringify(lines)}`)
    }
  }
  assert.equal(x.runs.length, 2)
  allAccepted(api)
})

test('a hook that is not a function is invalid_request naming it; nothing sent', async (t) => {
  const api = await startApi(t)
  const r = await runWithTools('Hi', at(api, { onStepFinish: 'yes' }))
  assert.equal(r.error.code, 'invalid_request')
  assert.match(r.error.message, /onStepFinish/)
  assert.equal(api.requests.length, 0)
})
