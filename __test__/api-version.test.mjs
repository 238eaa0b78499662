// The API version a run speaks: `anthropic-version: 2026-10-21` unless `apiVersion` pins another;
// the sampling options that version removed, refused before anything is sent; histories from
// fromUIMessages and tool results that the version's rules (no document directly in an assistant
// message, no cited text in a user message) accept; and `error.apiErrorCode`, the code an API
// refusal names its cause with, answered or streamed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fromUIMessages, registerTool, runWithTools, streamWithTools, toolResult } from '../index.mjs'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { at, freshName, refusedUnsent as refusedBeforeSending, startApi } from './helpers.mjs'

const PIN = '2023-06-01'

/** Refused with `invalid_request` saying each of `mentions`, and that nothing was sent (nor was it). */
async function refusedUnsent(t, options, ...mentions) {
  const error = await refusedBeforeSending(t, options, ...mentions)
  assert.ok(error.message.endsWith('Nothing was sent.'), error.message)
}

// --- the version sent ---------------------------------------------------------------------------

test('a run sends anthropic-version 2026-10-21 by default, on every request, streamed or not', async (t) => {
  const api = await startApi(t)
  const tool = freshName('version_tool')
  registerTool({ definition: { name: tool, input_schema: { type: 'object' } }, execute: async () => 'ok' })
  for (const run of [runWithTools, (p, o) => streamWithTools(p, o).result]) {
    api.script(reply([toolUse(tool, {})]), reply([text('done')]))
    const r = await run('go', at(api, { tools: [tool] }))
    assert.equal(r.error, null, JSON.stringify(r.error))
  }
  assert.equal(api.requests.length, 4)
  for (const req of api.requests) assert.equal(req.headers['anthropic-version'], '2026-10-21')
})

test('apiVersion "2023-06-01" pins the older version, and a newer version date is sent as given', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('ok')]))
  const pinned = await runWithTools('hi', at(api, { tools: [], apiVersion: PIN }))
  assert.equal(pinned.error, null)
  assert.equal(api.requests[0].headers['anthropic-version'], PIN)
  // A version this package does not know yet is not blocked: the API decides (this stand-in
  // speaks two versions, so it refuses it in the API's words).
  const newer = await runWithTools('hi', at(api, { tools: [], apiVersion: '2027-04-01', maxRetries: 0 }))
  assert.equal(api.requests[1].headers['anthropic-version'], '2027-04-01')
  assert.equal(newer.error.code, 'invalid_request')
  assert.match(newer.error.message, /anthropic-version: "2027-04-01" is not a valid version/)
})

for (const bad of ['latest', '2026-10-32', '2026-02-29', '26-10-21', '2026-10-21\r\nx-evil: 1', '', 20261021, ['2026-10-21']]) {
  test(`apiVersion ${JSON.stringify(bad)} is refused naming apiVersion; nothing is sent`, async (t) => {
    await refusedUnsent(t, { apiVersion: bad }, 'Option apiVersion must be an API version date YYYY-MM-DD')
  })
}

// --- the sampling options ------------------------------------------------------------------------

for (const [option, value] of [['temperature', 1], ['topP', 0.9], ['topK', 5]]) {
  test(`${option} is refused under 2026-10-21, naming the version and the pin; sent under the pin`, async (t) => {
    await refusedUnsent(t, { [option]: value }, `Option ${option} was removed in API version 2026-10-21`, `apiVersion: "${PIN}"`)
    await refusedUnsent(t, { [option]: value, apiVersion: '2026-11-30' }, `Option ${option} was removed`, 'the later 2026-11-30')
    const api = await startApi(t)
    api.script(reply([text('ok')]))
    const r = await runWithTools('hi', at(api, { tools: [], apiVersion: PIN, [option]: value }))
    assert.equal(r.error, null, JSON.stringify(r.error))
    const wire = { temperature: 'temperature', topP: 'top_p', topK: 'top_k' }[option]
    assert.equal(api.requests[0].body[wire], value)
  })
}

test('temperature, top_p and top_k are refused through extraBody too, even as null', async (t) => {
  for (const field of ['temperature', 'top_p', 'top_k']) {
    await refusedUnsent(t, { extraBody: { [field]: null } }, `Option extraBody.${field} was removed in API version 2026-10-21`)
  }
  const api = await startApi(t)
  api.script(reply([text('ok')]))
  const r = await runWithTools('hi', at(api, { tools: [], apiVersion: PIN, extraBody: { top_k: 3 } }))
  assert.equal(r.error, null, JSON.stringify(r.error))
  assert.equal(api.requests[0].body.top_k, 3)
})

// --- what a history may carry under 2026-10-21 ---------------------------------------------------

const CITATION = { type: 'search_result_location', cited_text: 'within 30 days', source: 'https://kb.test/returns', title: 'Returns', search_result_index: 0, start_block_index: 0, end_block_index: 0 }
const citedSearch = () => [{ type: 'search_result', source: 'https://kb.test/returns', title: 'Returns', content: [{ type: 'text', text: 'Returns within 30 days.', citations: [CITATION] }] }]

test('a tool returning a cited text is a tool failure under 2026-10-21 (nothing more sent); under the pin it is sent as given', async (t) => {
  const api = await startApi(t)
  const tool = freshName('kb_search')
  registerTool({ definition: { name: tool, input_schema: { type: 'object' } }, execute: async () => toolResult(citedSearch()) })
  api.script(reply([toolUse(tool, {}, 'toolu_kb1')]))
  const r = await runWithTools('Return window?', at(api, { tools: [tool] }))
  assert.equal(r.error?.code, 'tool_execution_error', JSON.stringify(r.error))
  assert.equal(r.error.toolName, tool)
  assert.match(r.error.message, /citations on a text block \(blocks\[0\]\.content\[0\]\)/)
  assert.match(r.error.message, /apiVersion: "2023-06-01"/)
  assert.equal(api.requests.length, 1)

  api.script(reply([toolUse(tool, {}, 'toolu_kb2')]), reply([text('30 days.')]))
  const pinned = await runWithTools('Return window?', at(api, { tools: [tool], apiVersion: PIN }))
  assert.equal(pinned.error, null, JSON.stringify(pinned.error))
  assert.deepEqual(api.requests.at(-1).body.messages.at(-1).content[0].content, citedSearch())
})

test('the stand-in refuses, under 2026-10-21, a document directly in an assistant message and a cited text in a user message', async (t) => {
  const api = await startApi(t)
  const doc = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Returns within 30 days.' } }
  const withDocument = [{ role: 'user', content: 'Policy?' }, { role: 'assistant', content: [doc, { type: 'text', text: 'Here.' }] }, { role: 'user', content: 'Thanks' }]
  const withCitation = [{ role: 'user', content: [{ type: 'text', text: 'Returns within 30 days.', citations: [CITATION] }, { type: 'text', text: 'And exchanges?' }] }]
  for (const [prompt, words] of [
    [withDocument, 'messages.1.content.0: `document` blocks can only be in `user` messages'],
    [withCitation, 'messages.0.content.0.citations: `citations` on `text` blocks can only be in `assistant` messages'],
  ]) {
    const r = await runWithTools(prompt, at(api, { tools: [] }))
    assert.equal(r.error?.code, 'invalid_request', JSON.stringify(r.error))
    assert.ok(r.error.message.includes(words), r.error.message)
    api.script(reply([text('ok')]))
    const pinned = await runWithTools(prompt, at(api, { tools: [], apiVersion: PIN }))
    assert.equal(pinned.error, null, `2023-06-01 takes it: ${JSON.stringify(pinned.error)}`)
  }
})

test('fromUIMessages builds a history 2026-10-21 takes: no file of the assistant, no citation in a tool result', async (t) => {
  const api = await startApi(t)
  const tool = freshName('kb_lookup')
  registerTool({ definition: { name: tool, input_schema: { type: 'object' } }, execute: async () => 'unused' })
  const pdf = 'data:application/pdf;base64,JVBERi0xLjQK'
  const document = { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'Returns within 30 days.', citations: [CITATION] }] }, citations: { enabled: true } }
  const ui = [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is the return window?' }, { type: 'file', mediaType: 'application/pdf', url: pdf, filename: 'policy.pdf' }] },
    {
      id: 'a1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: `tool-${tool}`, toolCallId: 'toolu_ui1', state: 'output-available', input: {}, output: [...citedSearch(), document, { type: 'text', text: 'kb', citations: [CITATION] }] },
        { type: 'step-start' },
        { type: 'file', mediaType: 'application/pdf', url: pdf },
        { type: 'source-document', sourceId: 's1', mediaType: 'application/pdf', title: 'policy.pdf' },
        { type: 'text', text: '30 days.' },
      ],
    },
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'And exchanges?' }] },
  ]
  const messages = fromUIMessages(ui)
  for (const m of messages) {
    const blocks = Array.isArray(m.content) ? m.content : []
    if (m.role === 'assistant') assert.ok(!blocks.some((b) => b.type === 'document'), `a document in an assistant message: ${JSON.stringify(m)}`)
    if (m.role === 'user') assert.ok(!JSON.stringify(m).includes('"citations":['), `a cited text in a user message: ${JSON.stringify(m)}`)
  }
  const result = messages[2].content[0].content
  assert.deepEqual(result[0].content, [{ type: 'text', text: 'Returns within 30 days.' }], 'the text stays, its citations go')
  assert.deepEqual(result[1].citations, { enabled: true }, 'turning citations on is no citation')
  api.script(reply([text('Exchanges too.')]))
  const r = await runWithTools(messages, at(api, { tools: [tool] }))
  assert.equal(r.error, null, `the API refuses the history: ${JSON.stringify(r.error)}`)
  assert.equal(api.requests[0].headers['anthropic-version'], '2026-10-21')
})

// --- error.apiErrorCode ----------------------------------------------------------------------------

test('error.apiErrorCode carries error.details.error_code, answered or in an error event after HTTP 200', async (t) => {
  const api = await startApi(t)
  api.script({ status: 400, error: { type: 'invalid_request_error', message: 'Image too large.', details: { error_code: 'image_dimensions_too_large', max_pixels: 8000 } } })
  const answered = await runWithTools('hi', at(api, { tools: [] }))
  assert.equal(answered.error.code, 'invalid_request')
  assert.equal(answered.error.status, 400)
  assert.equal(answered.error.apiErrorCode, 'image_dimensions_too_large')

  api.script({ ...reply([text('Partly shown.')]), sseError: { type: 'invalid_request_error', message: 'Thread gone.', details: { error_code: 'thread_not_found' } }, sseErrorAfter: 3 })
  const stream = streamWithTools('hi', at(api, { tools: [], maxRetries: 0 }))
  for await (const part of stream) void part
  const { error } = await stream.result
  assert.match(error.message, /in the stream after HTTP 200/)
  assert.equal(error.apiErrorCode, 'thread_not_found')

  api.script({ status: 404 }, { status: 400, error: { type: 'invalid_request_error', message: 'odd', details: { error_code: 42 } } })
  for (let i = 0; i < 2; i++) {
    const r = await runWithTools('hi', at(api, { tools: [], maxRetries: 0 }))
    assert.equal(r.error.code, 'invalid_request')
    assert.ok(!('apiErrorCode' in r.error), JSON.stringify(r.error))
  }
})
