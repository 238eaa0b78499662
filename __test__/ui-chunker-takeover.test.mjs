// A run taken over records on after what its stream sent (lib/stream/ui-chunker.js,
// continueAfter): what the cut left open is mended by the engine's step numbers, not guessed from
// the stream's text. The step the take-over asks for again is taken back (`reset-step`); a step
// that was committed, whose `finish-step` never reached the stream, is closed and kept; a
// `finish-step` a replayed round tells again is not sent twice. Read back with the `ai` package's
// own parser and readUIMessageStream.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { chunkTypes, chunksOf, messageOf, uiTextOf } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { UIChunker } = require('../lib/stream/ui-chunker.js')

const sse = (chunks) => chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')
const usage = { inputTokens: 1, outputTokens: 1 }

/** The SSE text a first holder sent for `parts`, then what a take-over writes for `more`. */
function recorded(parts, more) {
  const first = new UIChunker({ sendReasoning: true })
  const out = []
  for (const part of parts) first.write(part, out)
  const sent = sse(out)
  const taker = new UIChunker({ sendReasoning: true })
  taker.continueAfter(sent)
  const after = []
  for (const part of more) taker.write(part, after)
  return `${sent}${sse(after)}data: [DONE]\n\n`
}

const step = (n) => ({ type: 'start-step', step: n, runId: 'run_x' })
const finishStep = (n, stopReason) => ({ type: 'finish-step', step: n, stopReason, usage, toolCalls: [] })
const call = { type: 'tool-call', toolUseId: 'toolu_1', toolName: 'charge', input: { id: 'b' } }
const result = { type: 'tool-result', toolUseId: 'toolu_1', toolName: 'charge', output: { ok: true }, durationMs: 3 }
const done = (text) => ({ type: 'finish', result: { data: { text, stopReason: 'end_turn' }, error: null } })

// Step 0 asked for a tool and ran it; its round was committed with the next request (the
// engine's step 1), but the process died before step 0's finish-step reached the stream.
const firstHolder = [step(0), { type: 'text-delta', text: 'Let me charge it.' }, call, result]

test('a step that was committed, whose finish-step never reached the stream, is closed and kept when the take-over goes on with the next step', async () => {
  const whole = recorded(firstHolder, [step(1), { type: 'text-delta', text: ' Charged.' }, finishStep(1, 'end_turn'), done('Charged.')])
  const chunks = await chunksOf(whole)
  assert.ok(!chunkTypes(chunks).includes('reset-step'), chunkTypes(chunks).join(' '))
  const message = await messageOf(chunks)
  assert.equal(uiTextOf(message), 'Let me charge it. Charged.')
  assert.deepEqual(message.parts.find((p) => p.type === 'tool-charge').output, { ok: true })
  assert.equal(message.parts.filter((p) => p.type === 'step-start').length, 2)
})

test('the step the take-over asks for again (its reply was cut before it was committed) is taken back with reset-step', async () => {
  const cut = [step(0), { type: 'text-delta', text: 'A first try, cut' }]
  const whole = recorded(cut, [step(0), { type: 'text-delta', text: 'The second try.' }, finishStep(0, 'end_turn'), done('The second try.')])
  const chunks = await chunksOf(whole)
  assert.equal(chunkTypes(chunks).filter((c) => c === 'reset-step').length, 1)
  const message = await messageOf(chunks)
  assert.equal(uiTextOf(message), 'The second try.')
  assert.equal(message.parts.filter((p) => p.type === 'step-start').length, 1)
})

test('a later step cut mid-text is the one taken back, the ones before it kept', async () => {
  const parts = [...firstHolder, finishStep(0, 'tool_use'), step(1), { type: 'text-delta', text: 'Half an ans' }]
  const whole = recorded(parts, [step(1), { type: 'text-delta', text: 'A whole answer.' }, finishStep(1, 'end_turn'), done('A whole answer.')])
  const message = await messageOf(await chunksOf(whole))
  assert.equal(uiTextOf(message), 'Let me charge it.A whole answer.')
  assert.ok(message.parts.some((p) => p.type === 'tool-charge'))
})

test('a replayed round does not send its calls or its finish-step twice', async () => {
  // The stream has step 0 finished; the round's results were not committed, so the take-over
  // goes through the round again (its calls answered from their records) and finishes it again.
  const parts = [...firstHolder, finishStep(0, 'tool_use')]
  const whole = recorded(parts, [call, result, finishStep(0, 'tool_use'), step(1), { type: 'text-delta', text: 'Done.' }, finishStep(1, 'end_turn'), done('Done.')])
  const chunks = await chunksOf(whole)
  const types = chunkTypes(chunks)
  assert.equal(types.filter((c) => c === 'finish-step').length, 2, types.join(' '))
  assert.equal(types.filter((c) => c === 'start-step').length, 2)
  assert.equal(types.filter((c) => c === 'tool-input-available').length, 1)
  assert.equal(types.filter((c) => c === 'tool-output-available').length, 1)
  const message = await messageOf(chunks)
  assert.equal(uiTextOf(message), 'Let me charge it.Done.')
})

test('a round taken over while its step is open is finished once, then the next step goes on', async () => {
  const whole = recorded(firstHolder, [call, result, finishStep(0, 'tool_use'), step(1), { type: 'text-delta', text: 'Done.' }, finishStep(1, 'end_turn'), done('Done.')])
  const types = chunkTypes(await chunksOf(whole))
  assert.deepEqual(types.filter((c) => c.endsWith('-step')), ['start-step', 'finish-step', 'start-step', 'finish-step'])
})
