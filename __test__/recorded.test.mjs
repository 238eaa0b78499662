// Real Messages API responses, recorded by the AI SDK project (fixtures/recorded/), replayed through
// the strict stand-in: for each, what runWithTools (a JSON recording) or streamWithTools (a
// recorded stream) gives a user — the text, the stop reason, the reply kept in the history as it
// came, the usage billed, the context edits and the container — and, for a stream, that our assembly
// is the official SDK's and the UI message stream is one useChat reads. Replies that ask for
// client tools run them and go on with the next recorded reply of the run, or a plain answer.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { registerTool, runWithTools, streamWithTools } from '../index.mjs'
import { sseEvents } from '../stand-in/index.mjs'
import { at, startApi, toolResults } from './helpers.mjs'
import {
  checkUIStream, clientCalls, expectedAppliedEdits, expectedContainer, expectedUsage, recordedJson, recordedReplies,
  recordingNames, sdkMessage, stepsOf, textOf, thinkingOf,
} from './recorded-replay.mjs'

const PROMPT = 'Replay a recorded reply.'

/**
 * Recordings the stand-in cannot serve as a run of their own, and why. Each is still listed
 * here so that none is left out silently.
 */
const NOT_SERVED = {
  // The second reply of a deferred tool search run whose first reply was not recorded as JSON: it
  // starts with the tool_search_tool_result of a server_tool_use that only that first reply holds
  // (another run's than the .chunks.txt beside it, whose ids differ). Served first, it would make
  // a history that never happened, which the API (and the stand-in) refuse when it is sent back.
  'anthropic-tool-search-deferred-bm25.2.json': 'answers a server_tool_use of an unrecorded first reply',
  'anthropic-tool-search-deferred-regex.2.json': 'answers a server_tool_use of an unrecorded first reply',
}

const BM25 = { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' }
const REGEX = { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' }

/**
 * Recordings whose replies ask for client tools: the tools they call (registered here, each
 * returning what it was given) and options the run needs. A stream file may hold the whole run;
 * when its last reply still asks for tools, a plain answer follows.
 */
const TOOL_RUNS = {
  'anthropic-json-tool.1.json': { tools: ['json'] },
  'anthropic-json-tool.1.chunks.txt': { tools: ['json'] },
  // Not the reply after .1: the same message id and tool_use id as .1's stream, with a text block
  // before the call (a variant of the first reply), so a run of its own (see the test below).
  'anthropic-json-tool.2.chunks.txt': { tools: ['json'] },
  'anthropic-json-other-tool.1.json': { tools: ['weather'] },
  'anthropic-json-other-tool.1.chunks.txt': { tools: ['weather'] },
  'anthropic-tool-no-args.json': { tools: ['updateIssueList'] },
  'anthropic-tool-no-args.chunks.txt': { tools: ['updateIssueList'] },
  'anthropic-memory-20250818.1.json': { tools: ['memory'] },
  'anthropic-tool-search-bm25.1.json': { tools: ['get_weather'], serverTools: [BM25] },
  'anthropic-tool-search-bm25.1.chunks.txt': { tools: ['get_weather'], serverTools: [BM25] },
  'anthropic-tool-search-regex.1.json': { tools: ['get_temp_data'], serverTools: [REGEX] },
  'anthropic-tool-search-regex.1.chunks.txt': { tools: ['get_temp_data'], serverTools: [REGEX] },
  // The tool search runs beside the first client call; its result starts the next reply.
  'anthropic-tool-search-deferred-bm25.chunks.txt': { tools: ['readNoteTree', 'executeEditorOperation'], serverTools: [BM25] },
  'anthropic-tool-search-deferred-regex.chunks.txt': { tools: ['readNoteTree', 'executeEditorOperation'], serverTools: [REGEX] },
  // Fourteen replies, each with one call the model's code makes (`caller` code_execution), then
  // the code's result and the answer: fourteen tool rounds in one container.
  'anthropic-programmatic-tool-calling.1.chunks.txt': {
    tools: ['rollDie'], allowedCallers: ['code_execution_20250825'], serverTools: [{ type: 'code_execution_20250825', name: 'code_execution' }],
    maxToolIterations: 20,
  },
}

// No recording here stops with pause_turn (a paused server-tool turn), so none is continued.

/** Hand-made malformed streams: the run must end with a clear unknown_error. */
const MALFORMED = ['duplicate-message-start.chunks.txt', 'spliced-message-start.chunks.txt']

/**
 * Every other recording: one final reply (an answer, a refusal, server tools that ran at
 * Anthropic…). anthropic-programmatic-tool-calling.1.json is one too: the whole run as one
 * message, its code-called tool_use blocks already answered inside the code, ending end_turn.
 */
const FINALS = recordingNames().filter((name) => !(name in NOT_SERVED) && !(name in TOOL_RUNS) && !MALFORMED.includes(name))

/** A plain answer after the recorded replies, as the message the stand-in sends. */
const ANSWER = {
  id: 'msg_plain_answer', type: 'message', role: 'assistant', model: 'claude-test', content: [{ type: 'text', text: 'Done.' }],
  stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 7, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
}
const answerStep = (streamed) => (streamed ? { recordedEvents: sseEvents(ANSWER).map(([, data]) => data) } : { recorded: ANSWER })

const isStream = (name) => name.endsWith('.chunks.txt')

/**
 * Runs `steps` through the stand-in: runWithTools for JSON recordings, streamWithTools for
 * streams (also giving its UI message stream Response). Each step after the first must carry the
 * container the reply before it named, as the API requires.
 */
async function replay(t, name, steps, options = {}) {
  const api = await startApi(t)
  api.script(...steps)
  const opts = at(api, options)
  if (!isStream(name)) return { api, result: await runWithTools(PROMPT, opts) }
  const stream = streamWithTools(PROMPT, opts)
  const res = stream.toUIMessageStreamResponse()
  return { api, result: await stream.result, res }
}

/** The messages the run's replies are: the recording for JSON, the SDK's assembly for a stream. */
const repliesOf = async (steps) => Promise.all(steps.map((s) => (s.recorded ? s.recorded : sdkMessage(s.recordedEvents))))

/** With a step per reply, each asking for the container the reply before it named. */
function withContainers(steps, replies) {
  return steps.map((step, i) => {
    const id = replies[i - 1]?.container?.id
    return id ? { ...step, requireContainer: id } : step
  })
}

/** Checks what every run gives a user, as subtests so each failing check is named. */
async function checkRun(t, { result, res, replies, history }) {
  const final = replies.at(-1)
  await t.test('the answer: text, stop reason, reasoning', () => {
    assert.equal(result.error, null, JSON.stringify(result.error))
    assert.equal(result.data.stopReason, final.stop_reason)
    assert.equal(result.data.text, textOf(final.content))
    assert.equal(result.data.reasoning, replies.map((r) => thinkingOf(r.content)).filter(Boolean).join('\n\n'))
  })
  await t.test('the history holds each reply as it came', () => {
    assert.equal(result.error, null, JSON.stringify(result.error))
    const { messages } = result.data
    assert.deepEqual(messages, history)
    // deepEqual ignores key order; the history keeps the API's.
    assert.equal(JSON.stringify(messages), JSON.stringify(history))
  })
  await t.test('usage: the top-level usage of each reply plus the iterations billed apart', () => {
    assert.equal(result.error, null, JSON.stringify(result.error))
    assert.deepEqual(result.data.usage, expectedUsage(replies))
  })
  await t.test('appliedEdits: what the context edits of each reply cleared', () => {
    assert.equal(result.error, null, JSON.stringify(result.error))
    assert.deepEqual(result.data.appliedEdits, expectedAppliedEdits(replies))
  })
  await t.test('the container the last reply named', () => {
    assert.equal(result.error, null, JSON.stringify(result.error))
    assert.deepEqual(result.data.container, expectedContainer(replies))
  })
  if (res) await t.test('the UI message stream is one useChat reads', () => checkUIStream(res))
}

/** The history a run of `replies` leaves: each reply kept (a refused one left out), the tool results after it. */
function historyOf(replies, api) {
  const history = [{ role: 'user', content: PROMPT }]
  replies.forEach((reply, i) => {
    if (reply.stop_reason === 'refusal' || reply.content.length === 0) return
    history.push({ role: 'assistant', content: reply.content })
    if (i < replies.length - 1) history.push(api.requests[i + 1]?.body.messages.at(-1) ?? '(the run sent no request after this reply)')
  })
  return history
}

// --- the stand-in serves a recording as it is ------------------------------------------------------

test('a recorded step is served verbatim: the JSON message, or each event as recorded', async (t) => {
  const api = await startApi(t)
  const json = recordedJson('anthropic-web-fetch-tool.1.json')
  const [events] = recordedReplies('anthropic-text.chunks.txt')
  api.script({ recorded: json }, { recordedEvents: events })
  const post = (stream) => fetch(`${api.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': at(api).apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], stream }),
  })
  const plain = await post(false)
  assert.equal(plain.status, 200)
  assert.equal(await plain.text(), JSON.stringify(json))
  const streamed = await post(true)
  assert.equal(streamed.headers.get('content-type'), 'text/event-stream')
  assert.equal(await streamed.text(), events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''))
  assert.deepEqual(api.requests[1].sseEvents, events.map((e) => e.type))
})

test('a recording of the wrong kind for the request is a 500 naming the test bug, not converted', async (t) => {
  const api = await startApi(t)
  api.script({ recordedEvents: recordedReplies('anthropic-text.chunks.txt')[0] }, { recorded: recordedJson('anthropic-text.json') })
  const plain = await runWithTools(PROMPT, at(api, { maxRetries: 0 }))
  assert.equal(plain.error?.code, 'unknown_error')
  assert.match(plain.error.message, /mock-api: the request does not stream but the step is a streamed recording/)
  const streamed = await streamWithTools(PROMPT, at(api, { maxRetries: 0 })).result
  assert.equal(streamed.error?.code, 'unknown_error')
  assert.match(streamed.error.message, /mock-api: the request streams \(stream: true\) but the step is a JSON recording/)
})

test('every recording is replayed below or listed with the reason it is not', () => {
  const covered = [...FINALS, ...Object.keys(TOOL_RUNS), ...MALFORMED, ...Object.keys(NOT_SERVED)]
  assert.deepEqual([...covered].sort(), recordingNames())
  assert.equal(new Set(covered).size, covered.length, 'each recording is in one list')
})

// --- a final reply ------------------------------------------------------------------------------

for (const name of FINALS) {
  test(`${name}: the recorded reply is the answer`, async (t) => {
    const steps = stepsOf(name)
    const replies = await repliesOf(steps)
    assert.equal(replies.length, 1, 'one reply')
    assert.notEqual(replies[0].stop_reason, 'tool_use', 'asks for no client tool')
    const { api, result, res } = await replay(t, name, steps)
    await checkRun(t, { result, res, replies, history: historyOf(replies, api) })
    if (isStream(name)) await checkSameAsSdk(t, result, replies)
  })
}

/** Our assembly of a stream is the official SDK's, block for block and key for key. */
async function checkSameAsSdk(t, result, replies) {
  await t.test("the assembled replies are the official SDK's BetaMessageStream's", () => {
    assert.equal(result.error, null, JSON.stringify(result.error))
    const ours = result.data.messages.filter((m) => m.role === 'assistant').map((m) => m.content)
    const sdk = replies.filter((r) => r.stop_reason !== 'refusal' && r.content.length > 0).map((r) => r.content)
    assert.deepEqual(ours, sdk)
    assert.equal(JSON.stringify(ours), JSON.stringify(sdk))
  })
}

// --- replies that ask for client tools -------------------------------------------------------------

/** Registers the run's tools: any input taken, each call answered with what it was given. */
function registerRunTools(names, allowedCallers) {
  for (const name of names) {
    registerTool({
      definition: {
        name, description: `Recorded tool ${name}`, input_schema: { type: 'object' },
        ...(allowedCallers ? { allowed_callers: allowedCallers } : {}),
      },
      execute: async (input) => ({ tool: name, received: input }),
    })
  }
}

for (const [name, run] of Object.entries(TOOL_RUNS)) {
  test(`${name}: the tools the recording asks for run, and the run goes on`, async (t) => {
    registerRunTools(run.tools, run.allowedCallers)
    const streamed = isStream(name)
    const steps = stepsOf(name)
    const replies = await repliesOf(steps)
    if (replies.at(-1).stop_reason === 'tool_use') {
      steps.push(answerStep(streamed))
      replies.push(ANSWER)
    }
    assert.equal(replies.slice(0, -1).every((r) => r.stop_reason === 'tool_use'), true, 'every reply but the last asks for tools')
    const { api, result, res } = await replay(t, name, withContainers(steps, replies), {
      tools: run.tools, serverTools: run.serverTools, maxToolIterations: run.maxToolIterations,
    })
    await checkRun(t, { result, res, replies, history: historyOf(replies, api) })
    if (streamed) await checkSameAsSdk(t, result, replies)
    await t.test('each call the replies ask for ran once, in order, and its result went back', () => {
      assert.equal(result.error, null, JSON.stringify(result.error))
      const asked = replies.slice(0, -1).flatMap((r) => clientCalls(r.content))
      assert.ok(asked.length > 0)
      assert.deepEqual(
        result.data.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input, toolUseId: c.toolUseId, output: c.output })),
        asked.map((b) => ({ toolName: b.name, input: b.input, toolUseId: b.id, output: { tool: b.name, received: b.input } })),
      )
      assert.equal(api.requests.length, replies.length)
      replies.slice(0, -1).forEach((reply, i) => {
        const calls = clientCalls(reply.content)
        assert.deepEqual(toolResults(api, i + 1), calls.map((b) => ({
          type: 'tool_result', tool_use_id: b.id, content: JSON.stringify({ tool: b.name, received: b.input }),
        })))
      })
    })
  })
}

test("anthropic-json-tool.2.chunks.txt is not the reply after .1: after it, its call repeats .1's tool_use id, and the loop runs nothing of it", async (t) => {
  registerRunTools(['json'])
  const steps = [...stepsOf('anthropic-json-tool.1.chunks.txt'), ...stepsOf('anthropic-json-tool.2.chunks.txt')]
  const { api, result } = await replay(t, 'anthropic-json-tool.2.chunks.txt', steps, { tools: ['json'] })
  assert.equal(result.error?.code, 'unknown_error')
  assert.match(result.error.message, /tool_use id that is already in the conversation \("toolu_01KFbKqPYSuAKujiL6mTfzYA", json\); none of its calls was run/)
  assert.deepEqual(result.error.toolCalls.map((c) => c.toolUseId), ['toolu_01KFbKqPYSuAKujiL6mTfzYA'], "only .1's call ran")
  assert.equal(api.requests.length, 2, 'the history that repeats the id is never sent')
})

// --- malformed streams ---------------------------------------------------------------------------

for (const name of MALFORMED) {
  test(`${name}: a second message_start ends the run with a clear unknown_error`, async (t) => {
    const ran = []
    registerTool({ definition: { name: 'test-tool', input_schema: { type: 'object' } }, execute: async (input) => ran.push(input) })
    const steps = stepsOf(name)
    assert.equal(steps.length, 1, 'one reply, with two message_start events')
    const { api, result, res } = await replay(t, name, steps, { tools: ['test-tool'] })
    await t.test('the run fails with unknown_error naming the second message_start; nothing runs, nothing is retried', () => {
      assert.equal(result.data, null, `no answer: ${JSON.stringify(result.data)}`)
      assert.equal(result.error.code, 'unknown_error')
      assert.match(result.error.message, /message_start/)
      assert.deepEqual(ran, [])
      assert.equal(api.requests.length, 1)
    })
    await t.test('the UI message stream ends with one error chunk', () => checkUIStream(res, { ok: false }))
    await t.test('the official SDK refuses the stream too', async () => {
      await assert.rejects(sdkMessage(steps[0].recordedEvents), /Unexpected event order, got message_start before receiving "message_stop"/)
    })
  })
}
