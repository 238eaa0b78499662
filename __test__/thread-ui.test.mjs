// toUIMessages (lib/thread-ui.js): a thread's stored messages as the UI messages `useChat` starts
// from. Here: a call the person declined comes back as `output-denied`, with the reason, as the
// stream left it; any other failed call stays `output-error`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const { toUIMessages } = createRequire(import.meta.url)('../lib/thread-ui.js')

const asked = (id, orderId) => ({ type: 'tool_use', id, name: 'solicitar_devolucion', input: { orderId } })

test('a declined call is output-denied, with its reason when it had one; other errors stay output-error', () => {
  const messages = [
    { role: 'user', content: 'Return 1234, 6060 and 7777' },
    { role: 'assistant', content: [asked('toolu_a', '1234'), asked('toolu_b', '6060'), asked('toolu_c', '7777')] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: 'The user declined this call: Not now. Do not retry it.', is_error: true },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: 'The user declined this call. Do not retry it.' }], is_error: true },
        { type: 'tool_result', tool_use_id: 'toolu_c', content: 'Order 7777 was delivered 45 days ago.', is_error: true },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: 'Nothing was returned.' }] },
  ]
  const [, assistant] = toUIMessages(messages)
  assert.deepEqual(assistant.parts, [
    { type: 'step-start' },
    { type: 'tool-solicitar_devolucion', toolCallId: 'toolu_a', state: 'output-denied', input: { orderId: '1234' }, approval: { id: 'toolu_a', approved: false, reason: 'Not now' } },
    { type: 'tool-solicitar_devolucion', toolCallId: 'toolu_b', state: 'output-denied', input: { orderId: '6060' }, approval: { id: 'toolu_b', approved: false } },
    { type: 'tool-solicitar_devolucion', toolCallId: 'toolu_c', state: 'output-error', input: { orderId: '7777' }, errorText: 'Order 7777 was delivered 45 days ago.' },
    { type: 'step-start' },
    { type: 'text', text: 'Nothing was returned.', state: 'done' },
  ])
})

test('the words of a denial in a result that is not an error, or with more after them, are not a denial', () => {
  const messages = [
    { role: 'user', content: 'x' },
    { role: 'assistant', content: [asked('toolu_a', '1'), asked('toolu_b', '2')] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: 'The user declined this call. Do not retry it.' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: 'The user declined this call. Do not retry it. But then:', is_error: true },
      ],
    },
  ]
  const [, assistant] = toUIMessages(messages)
  assert.deepEqual(assistant.parts.slice(1).map((p) => p.state), ['output-available', 'output-error'])
})

test('a call waiting for approval is approval-requested with its approval id', () => {
  const messages = [{ role: 'user', content: 'x' }, { role: 'assistant', content: [asked('toolu_a', '1')] }]
  const [, assistant] = toUIMessages(messages, [{ approvalId: 'apr_1_ab', toolUseId: 'toolu_a', toolName: 'solicitar_devolucion', input: { orderId: '1' } }])
  assert.deepEqual(assistant.parts[1], { type: 'tool-solicitar_devolucion', toolCallId: 'toolu_a', state: 'approval-requested', input: { orderId: '1' }, approval: { id: 'apr_1_ab' } })
})
