// Long loops on today's API, over HTTP against the stand-in, each non-streamed and streamed:
// compaction (the `compaction` stop reason, usage iterations), applied edits, system-role tool
// changes, the run's token budget (maxTotalTokens) and repeated identical calls (maxIdenticalCalls).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { registerTool, runWithTools, streamWithTools, fromUIMessages } from '../index.mjs'
import { text, toolUse, thinking, reply, THREADS_BETA } from '../stand-in/index.mjs'
import { startApi, at, freshName, collect, uiMessageOf, echoTool } from './helpers.mjs'

const MODES = [false, true]
const label = (streamed) => (streamed ? 'streamed' : 'not streamed')

/** Runs `prompt` with runWithTools or streamWithTools; the result, and the stream's parts. */
async function go(streamed, prompt, options) {
  if (!streamed) return { r: await runWithTools(prompt, options), parts: [] }
  const stream = streamWithTools(prompt, options)
  const parts = await collect(stream)
  return { r: await stream.result, parts }
}

const ok = (r) => assert.equal(r.error, null, r.error && `${r.error.code}: ${r.error.message}`)

const COMPACT = { edits: [{ type: 'compact_20260112', pause_after_compaction: true }] }
const compactionBlock = { type: 'compaction', content: 'Summary: the user asked about order 4821.', encrypted_content: 'ZW5jcnlwdGVk' }

for (const streamed of MODES) {
  test(`compaction pause (${label(streamed)}): the reply goes back unchanged with nothing added, its continuation joins it, and it is not a tool round`, async (t) => {
    const api = await startApi(t)
    api.script(
      reply([compactionBlock], {
        stop_reason: 'compaction',
        usage: { input_tokens: 0, output_tokens: 0, iterations: [{ type: 'compaction', input_tokens: 5000, output_tokens: 300 }] },
      }),
      reply([text('Order 4821 shipped.')]),
    )
    const { r, parts } = await go(streamed, 'Where is order 4821?', at(api, { contextManagement: COMPACT, maxToolIterations: 0 }))
    ok(r)
    assert.equal(r.data.text, 'Order 4821 shipped.')
    assert.equal(r.data.stopReason, 'end_turn')
    assert.equal(api.requests.length, 2)
    for (const req of api.requests) assert.ok(req.betas.includes('compact-2026-01-12'), req.betas.join())
    // The history ends with the compaction reply, as it came: nothing added after it (the API's
    // thread holds it: the continuation sends no message).
    assert.deepEqual(api.requests[1].body.messages, [])
    assert.equal(api.requests[1].body.thread.previous_message_id, api.requests[0].reply.id)
    assert.deepEqual(api.requests[1].fullBody.messages, [
      { role: 'user', content: 'Where is order 4821?' },
      { role: 'assistant', content: [compactionBlock] },
    ])
    // One assistant message for the whole turn.
    assert.deepEqual(r.data.messages, [
      { role: 'user', content: 'Where is order 4821?' },
      { role: 'assistant', content: [compactionBlock, { type: 'text', text: 'Order 4821 shipped.' }] },
    ])
    // The compaction's tokens are billed though not in the top-level usage.
    assert.deepEqual(r.data.usage, { inputTokens: 5010, outputTokens: 305, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 })
    if (streamed) {
      const steps = parts.filter((p) => p.type === 'finish-step')
      assert.deepEqual(steps.map((s) => s.stopReason), ['compaction', 'end_turn'])
      assert.equal(steps[0].usage.inputTokens, 5000)
    }
    // The history is re-sendable plus a new user message.
    api.script(reply([text('You are welcome.')]))
    const again = await runWithTools([...r.data.messages, { role: 'user', content: 'Thanks' }], at(api, { contextManagement: COMPACT }))
    ok(again)
  })

  test(`usage.iterations (${label(streamed)}): compaction and advisor iterations are added, message and fallback ones are not counted twice`, async (t) => {
    const api = await startApi(t)
    api.script(
      reply([compactionBlock, text('Here is the summary.')], {
        usage: {
          input_tokens: 682,
          output_tokens: 1320,
          cache_read_input_tokens: 7,
          cache_creation_input_tokens: 0,
          iterations: [
            { type: 'compaction', input_tokens: 60385, output_tokens: 592, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 },
            { type: 'advisor_message', input_tokens: 100, output_tokens: 10 },
            { type: 'fallback_message', input_tokens: 682, output_tokens: 1320 },
            { type: 'message', input_tokens: 682, output_tokens: 1320 },
          ],
        },
      }),
    )
    const { r, parts } = await go(streamed, 'Summarise', at(api, { contextManagement: { edits: [{ type: 'compact_20260112' }] } }))
    ok(r)
    assert.deepEqual(r.data.usage, { inputTokens: 682 + 60385 + 100, outputTokens: 1320 + 592 + 10, cacheReadInputTokens: 10, cacheCreationInputTokens: 2 })
    if (streamed) assert.deepEqual(parts.find((p) => p.type === 'finish-step').usage, r.data.usage)
    assert.deepEqual(r.data.messages.at(-1).content, [compactionBlock, { type: 'text', text: 'Here is the summary.' }])
  })

  test(`appliedEdits (${label(streamed)}): every reply's context_management.applied_edits, in order`, async (t) => {
    const api = await startApi(t)
    const name = freshName('lookup')
    echoTool(name)
    const cleared = { type: 'clear_tool_uses_20250919', cleared_tool_uses: 3, cleared_input_tokens: 5200 }
    const thought = { type: 'clear_thinking_20251015', cleared_thinking_turns: 1, cleared_input_tokens: 800 }
    api.script(
      { ...reply([toolUse(name, { q: 'x' })]), context_management: { applied_edits: [cleared] } },
      { ...reply([text('Done.')]), context_management: { applied_edits: [thought] } },
    )
    const edits = { edits: [{ type: 'clear_tool_uses_20250919' }, { type: 'clear_thinking_20251015' }] }
    const { r } = await go(streamed, 'go', at(api, { tools: [name], contextManagement: edits }))
    ok(r)
    assert.deepEqual(r.data.appliedEdits, [cleared, thought])
    assert.ok(api.requests[0].betas.includes('context-management-2025-06-27'))
    // Without context management nothing is said.
    api.script(reply([text('Plain.')]))
    const { r: plain } = await go(streamed, 'go', at(api))
    ok(plain)
    assert.equal(plain.data.appliedEdits, undefined)
    assert.deepEqual(api.requests.at(-1).betas, [THREADS_BETA])
  })
}

for (const streamed of MODES) {
  test(`a failed compaction (${label(streamed)}): a compaction block with content null is kept and sent back`, async (t) => {
    const api = await startApi(t)
    const failed = { type: 'compaction', content: null }
    api.script(reply([failed, text('Answer anyway.')]))
    const { r } = await go(streamed, 'go', at(api, { contextManagement: COMPACT }))
    ok(r)
    assert.deepEqual(r.data.messages.at(-1).content, [failed, { type: 'text', text: 'Answer anyway.' }])
    api.script(reply([text('Again.')]))
    ok(await runWithTools([...r.data.messages, { role: 'user', content: 'more' }], at(api, { contextManagement: COMPACT })))
    assert.deepEqual(api.requests[1].body.messages[1].content[0], failed)
  })
}

test('a compaction stop at the tool-round limit still continues (it is not a round), and a pause_turn after it is', async (t) => {
  const api = await startApi(t)
  const name = freshName('lookup')
  const calls = echoTool(name)
  api.script(
    reply([toolUse(name, { q: '1' })]),
    reply([compactionBlock], { stop_reason: 'compaction' }),
    reply([text('Answer after compaction.')]),
  )
  const r = await runWithTools('go', at(api, { tools: [name], maxToolIterations: 1, contextManagement: COMPACT }))
  ok(r)
  assert.equal(calls.length, 1)
  assert.equal(r.data.text, 'Answer after compaction.')
  assert.deepEqual(r.data.messages.at(-1).content, [compactionBlock, { type: 'text', text: 'Answer after compaction.' }])
})

test('betas: a feature\'s beta joins the betas option\'s without duplicates', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('ok')]))
  const r = await runWithTools('go', at(api, { betas: ['files-api-2025-04-14', 'compact-2026-01-12'], contextManagement: COMPACT }))
  ok(r)
  assert.deepEqual(api.requests[0].betas, ['files-api-2025-04-14', 'compact-2026-01-12', THREADS_BETA])
})

// ── System-role tool changes ────────────────────────────────────────────────────────────────

const removal = (name) => ({ role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name } }] })
const addition = (name) => ({ role: 'system', content: [{ type: 'tool_addition', tool: { type: 'tool_reference', name } }] })

for (const streamed of MODES) {
  test(`tool changes (${label(streamed)}): system-role messages pass byte for byte with their beta; a removed tool is not offered, one added back is`, async (t) => {
    const api = await startApi(t)
    const a = freshName('search')
    const b = freshName('lookup')
    const aCalls = echoTool(a)
    const bCalls = echoTool(b)
    const history = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
      removal(a),
      { role: 'user', content: 'search for x' },
    ]
    api.script(reply([toolUse(a, { q: 'x' }, 'toolu_a1'), toolUse(b, { q: 'y' }, 'toolu_b1')]), reply([text('I cannot search any more.')]))
    const { r } = await go(streamed, history, at(api, { tools: [a, b], onToolError: 'continue' }))
    ok(r)
    assert.equal(aCalls.length, 0, 'a removed tool never runs')
    assert.equal(bCalls.length, 1)
    const sent = api.requests[0]
    assert.ok(sent.betas.includes('mid-conversation-tool-changes-2026-07-01'), sent.betas.join())
    assert.ok(sent.rawBody.includes(JSON.stringify(removal(a))), 'the system message went as it came')
    // The tools sent are the run's: the change is the history's, and the prompt cache keeps them.
    assert.deepEqual(sent.body.tools.map((x) => x.name), [a, b])
    const results = api.requests[1].body.messages.at(-1).content
    assert.deepEqual(results[0], { type: 'tool_result', tool_use_id: 'toolu_a1', is_error: true, content: `The tool ${a} does not exist. Available tools: ${b}.` })

    // Stop mode: the removed tool is the unknown-tool case.
    api.script(reply([toolUse(a, { q: 'x' })]))
    const { r: stopped } = await go(streamed, history, at(api, { tools: [a, b] }))
    assert.equal(stopped.error.code, 'tool_validation_error')
    assert.equal(stopped.error.toolName, a)
    assert.equal(aCalls.length, 0)

    // Added back later in the history: offered again.
    api.script(reply([toolUse(a, { q: 'x' })]), reply([text('Found it.')]))
    const back = [...history.slice(0, 3), { role: 'user', content: 'never mind' }, { role: 'assistant', content: 'OK.' }, addition(a), { role: 'user', content: 'search now' }]
    const { r: added } = await go(streamed, back, at(api, { tools: [a, b] }))
    ok(added)
    assert.equal(aCalls.length, 1)
  })
}

test('tool changes: a system-role message that is not tool changes is refused before sending, naming it', async (t) => {
  const api = await startApi(t)
  for (const content of ['You are a pirate.', [{ type: 'text', text: 'You are a pirate.' }], [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'a' } }, { type: 'text', text: 'x' }], []]) {
    const r = await runWithTools([{ role: 'user', content: 'hi' }, { role: 'system', content }, { role: 'user', content: 'go' }], at(api))
    assert.equal(r.error?.code, 'invalid_request', JSON.stringify(content))
    assert.match(r.error.message, /messages\[1\].*system/, r.error.message)
  }
  const r = await runWithTools([{ role: 'user', content: 'hi' }, { role: 'system', content: [{ type: 'tool_removal', tool: { name: 7 } }] }, { role: 'user', content: 'go' }], at(api))
  assert.equal(r.error?.code, 'invalid_request')
  assert.match(r.error.message, /messages\[1\]\.content\[0\]/)
  assert.equal(api.requests.length, 0, 'nothing was sent')
})

test('tool changes: fromUIMessages never makes a system-role message', () => {
  const messages = fromUIMessages([
    { id: '1', role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
    { id: '2', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
  ])
  assert.deepEqual(messages.map((m) => m.role), ['user'])
  assert.equal(messages.system, 'Be brief.')
})

// ── maxTotalTokens ──────────────────────────────────────────────────────────────────────────

const usage = (input_tokens, output_tokens) => ({ input_tokens, output_tokens, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 })

for (const streamed of MODES) {
  test(`maxTotalTokens (${label(streamed)}): each request's max_tokens is what the budget leaves after the estimate`, async (t) => {
    const api = await startApi(t)
    const name = freshName('lookup')
    echoTool(name)
    api.script(reply([toolUse(name, { q: 'x' })], { usage: usage(300, 50) }), reply([text('Done.')], { usage: usage(320, 20) }))
    const { r } = await go(streamed, 'go', at(api, { tools: [name], maxTotalTokens: 1000 }))
    ok(r)
    // The first: no estimate yet. The second: 1000 − 350 spent − 300 estimated.
    assert.deepEqual(api.requests.map((q) => q.body.max_tokens), [1000, 350])
    assert.equal(r.data.usage.inputTokens + r.data.usage.outputTokens, 690)
  })

  test(`maxTotalTokens (${label(streamed)}): a request that would cross the budget is not sent; budget_exceeded carries usage and toolCalls`, async (t) => {
    const api = await startApi(t)
    const name = freshName('lookup')
    echoTool(name)
    api.script(reply([toolUse(name, { q: 'x' })], { usage: { ...usage(250, 50), cache_read_input_tokens: 50 } }))
    const { r, parts } = await go(streamed, 'go', at(api, { tools: [name], maxTotalTokens: 650 }))
    assert.equal(r.error?.code, 'budget_exceeded', JSON.stringify(r))
    assert.equal(api.requests.length, 1)
    assert.deepEqual(r.error.usage, { inputTokens: 250, outputTokens: 50, cacheReadInputTokens: 50, cacheCreationInputTokens: 0 })
    assert.equal(r.error.toolCalls.length, 1)
    assert.equal(r.error.toolCalls[0].toolName, name)
    assert.match(r.error.message, /maxTotalTokens 650/)
    if (streamed) assert.equal(parts.at(-1).type, 'finish')
  })
}

test('maxTotalTokens: a reply cut by the cap the budget lowered is budget_exceeded; one cut by maxTokens is an answer', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('A long ans')], { stop_reason: 'max_tokens', usage: usage(10, 500) }))
  const r = await runWithTools('go', at(api, { maxTotalTokens: 500 }))
  assert.equal(r.error?.code, 'budget_exceeded')
  assert.match(r.error.message, /cut at 500/)
  assert.equal(api.requests[0].body.max_tokens, 500)
  api.script(reply([text('A long ans')], { stop_reason: 'max_tokens', usage: usage(10, 100) }))
  const cut = await runWithTools('go', at(api, { maxTotalTokens: 100_000, maxTokens: 100 }))
  ok(cut)
  assert.equal(cut.data.stopReason, 'max_tokens')
})

test('maxTotalTokens: no request leaves no more than thinking\'s budget_tokens', async (t) => {
  const api = await startApi(t)
  const name = freshName('lookup')
  echoTool(name)
  api.script(reply([thinking('Let me look.'), toolUse(name, { q: 'x' })], { usage: usage(300, 50) }))
  const r = await runWithTools('go', at(api, { tools: [name], maxTotalTokens: 1500, thinking: { type: 'enabled', budget_tokens: 1024 } }))
  // 1500 − 350 − 300 = 850 left: not more than 1024.
  assert.equal(r.error?.code, 'budget_exceeded', JSON.stringify(r.error))
  assert.match(r.error.message, /budget_tokens \(1024\)/)
  assert.equal(api.requests.length, 1)
  assert.equal(api.requests[0].body.max_tokens, 1500)
})

test('maxTotalTokens and maxIdenticalCalls: anything but a positive integer is invalid_request naming the option; nothing is sent', async (t) => {
  const api = await startApi(t)
  for (const option of ['maxTotalTokens', 'maxIdenticalCalls']) {
    for (const bad of [0, -1, 1.5, '100', null, true, 2 ** 40]) {
      if (bad === null) continue // null is "not given", as for every option
      const r = await runWithTools('go', at(api, { [option]: bad }))
      assert.equal(r.error?.code, 'invalid_request', `${option}: ${bad}`)
      assert.match(r.error.message, new RegExp(option))
    }
  }
  const r = await runWithTools('go', at(api, { maxTotalTokens: 1000, extraBody: { max_tokens: 10 } }))
  assert.equal(r.error?.code, 'invalid_request')
  assert.match(r.error.message, /extraBody.*max_tokens.*maxTotalTokens/)
  assert.equal(api.requests.length, 0)
})

test('maxTotalTokens: the UI stream shows the fixed sentence for budget_exceeded', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('A long ans')], { stop_reason: 'max_tokens', usage: usage(10, 500) }))
  const res = streamWithTools('go', at(api, { maxTotalTokens: 500 })).toUIMessageStreamResponse()
  const body = await res.text()
  assert.match(body, /This request needed more work than allowed/)
  assert.ok(!body.includes('maxTotalTokens'), 'the developer\'s message stays on the server')
})

// ── maxIdenticalCalls ───────────────────────────────────────────────────────────────────────

for (const streamed of MODES) {
  test(`maxIdenticalCalls (${label(streamed)}): past the limit the same call is not run; the model is told it has the result, and the run goes on in stop mode`, async (t) => {
    const api = await startApi(t)
    const name = freshName('search')
    const calls = echoTool(name)
    api.script(
      reply([toolUse(name, { q: 'x', n: 1 }, 'toolu_1')]),
      reply([toolUse(name, { n: 1, q: 'x' }, 'toolu_2')]),
      reply([toolUse(name, { q: 'x', n: 1 }, 'toolu_3'), toolUse(name, { q: 'other' }, 'toolu_4')]),
      reply([text('Stopping the search.')]),
    )
    const { r } = await go(streamed, 'go', at(api, { tools: [name], maxIdenticalCalls: 2 }))
    ok(r)
    assert.equal(calls.length, 3, 'two identical (keys in another order are the same input) and one other')
    const results = api.requests[3].body.messages.at(-1).content
    assert.equal(results[0].tool_use_id, 'toolu_3')
    assert.equal(results[0].is_error, true)
    assert.match(results[0].content, /already made 2 time\(s\).*without failing, so you have its result.*Do not repeat it/)
    assert.equal(results[1].is_error, undefined)
    const refused = r.data.toolCalls.find((c) => c.toolUseId === 'toolu_3')
    assert.equal(refused.isError, true)
    assert.match(refused.error, /maxIdenticalCalls/)
  })
}

test('maxIdenticalCalls: counted at dispatch, so within one round the next identical call is the one refused; a failure gives its place back', async (t) => {
  const api = await startApi(t)
  const name = freshName('search')
  const calls = echoTool(name, { fail: (n) => n === 1 })
  api.script(
    reply([toolUse(name, { q: 'x' }, 'toolu_1')]),
    reply([toolUse(name, { q: 'x' }, 'toolu_2'), toolUse(name, { q: 'x' }, 'toolu_3')]),
    reply([text('Done.')]),
  )
  const r = await runWithTools('go', at(api, { tools: [name], maxIdenticalCalls: 1, onToolError: 'continue' }))
  ok(r)
  // Call 1 failed (it does not count), call 2 ran, call 3 is refused though call 2 was still running.
  assert.equal(calls.length, 2)
  assert.deepEqual(r.data.toolCalls.map((c) => [c.toolUseId, Boolean(c.isError)]), [['toolu_1', true], ['toolu_2', false], ['toolu_3', true]])
  assert.match(r.data.toolCalls[2].error, /already succeeded \(or was running\) 1 time/)
  // Without the option a polling tool may repeat itself.
  api.script(reply([toolUse(name, { q: 'x' })]), reply([toolUse(name, { q: 'x' })]), reply([text('Done.')]))
  ok(await runWithTools('go', at(api, { tools: [name] })))
  assert.equal(calls.length, 4)
})

test('compaction: the UI stream of a compaction pause is valid for useChat', async (t) => {
  const api = await startApi(t)
  api.script(reply([compactionBlock], { stop_reason: 'compaction' }), reply([text('Answer.')]))
  const message = await uiMessageOf(streamWithTools('go', at(api, { contextManagement: COMPACT })).toUIMessageStreamResponse())
  const texts = message.parts.filter((p) => p.type === 'text').map((p) => p.text)
  assert.deepEqual(texts, ['Answer.'])
})

for (const streamed of MODES) {
  test(`a long tool loop the stand-in compacts by itself (${label(streamed)}): paused, continued, answered, every token counted`, async (t) => {
    const api = await startApi(t)
    const name = freshName('fetch_page')
    registerTool({
      definition: { name, input_schema: { type: 'object', properties: { page: { type: 'integer' } } } },
      execute: async ({ page }) => `page ${page}: ${'lorem ipsum '.repeat(200)}`,
    })
    api.script(reply([toolUse(name, { page: 1 })]), reply([toolUse(name, { page: 2 })]), reply([text('Both pages read.')]))
    const edits = { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 1000 }, pause_after_compaction: true }] }
    const { r, parts } = await go(streamed, 'Read pages 1 and 2', at(api, { tools: [name], contextManagement: edits }))
    ok(r)
    assert.equal(r.data.text, 'Both pages read.')
    // Request 3 crossed the trigger: the stand-in compacted and paused; request 4 continued it.
    assert.equal(api.requests.length, 4)
    // The API's thread holds the conversation: the continuation sends nothing new.
    assert.deepEqual(api.requests[3].body.messages, [])
    const continued = api.requests[3].fullBody.messages
    assert.deepEqual(continued.at(-1).content.map((b) => b.type), ['compaction'])
    assert.deepEqual(continued.slice(0, -1), api.requests[2].fullBody.messages, 'nothing added but the paused reply')
    const last = r.data.messages.at(-1)
    assert.deepEqual(last.content.map((b) => b.type), ['compaction', 'text'])
    assert.match(last.content[0].content, /Summary of the conversation so far/)
    // The compaction's own tokens (the whole history, read once more) are in the usage.
    const topLevel = 10 * 3 // the three scripted replies' default input
    assert.ok(r.data.usage.inputTokens > topLevel + 1000, JSON.stringify(r.data.usage))
    if (streamed) assert.deepEqual(parts.filter((p) => p.type === 'finish-step').map((p) => p.stopReason), ['tool_use', 'tool_use', 'compaction', 'end_turn'])
    // The history goes on from the summary: the next request's estimate is small again.
    api.script(reply([text('You are welcome.')]))
    const next = await runWithTools([...r.data.messages, { role: 'user', content: 'Thanks' }], at(api, { tools: [name], contextManagement: edits }))
    ok(next)
    assert.equal(api.requests.at(-1).body.messages.length, 7)
    assert.deepEqual(next.data.messages.at(-1).content.map((b) => b.type), ['text'], 'not compacted again')
  })
}

test('a compaction_delta for a block that is not a compaction block, or a delta type we do not know, is a clear unknown_error naming it', async (t) => {
  const api = await startApi(t)
  const events = (delta) => [
    { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } },
    { type: 'message_stop' },
  ]
  for (const [delta, named] of [
    [{ type: 'compaction_delta', content: 'A summary' }, /compaction_delta.*text block/],
    [{ type: 'x_future_delta', text: 'x' }, /x_future_delta/],
  ]) {
    api.script({ recordedEvents: events(delta) })
    const stream = streamWithTools('go', at(api))
    await collect(stream)
    const r = await stream.result
    assert.equal(r.error?.code, 'unknown_error', JSON.stringify(r))
    assert.match(r.error.message, named)
  }
})
