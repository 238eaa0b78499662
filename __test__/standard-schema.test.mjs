// Tools whose input_schema is a Standard Schema (zod here): the API and the engine get its JSON
// Schema (input side); then its own validate runs, so refinements, transforms and defaults hold
// and execute gets the parsed value. Its issues are reported like a JSON Schema failure.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { registerTool, unregisterTool, listTools, runWithTools } from '../index.mjs'
import { text, toolUse, reply } from '../stand-in/index.mjs'
import { startApi, at, toolResults } from './helpers.mjs'

/** A refinement JSON Schema cannot express: the order number's check digit (last digit = sum of the others mod 10). */
const checkDigitOk = (id) => {
  const digits = id.replace('#', '').split('').map(Number)
  const last = digits.pop()
  return digits.reduce((a, b) => a + b, 0) % 10 === last
}

/** Registers a zod tool; returns the inputs its execute received. */
function zodTool(name, schema, execute = (input) => ({ ok: true, input })) {
  const seen = []
  registerTool({
    definition: { name, description: `zod tool ${name}`, input_schema: schema },
    execute: (input, ctx) => {
      seen.push(input)
      return execute(input, ctx)
    },
  })
  return seen
}

test('a zod schema is sent as its input-side JSON Schema 2020-12, and listTools returns it', async (t) => {
  const api = await startApi(t)
  zodTool(
    'z_shape',
    z.object({
      orderId: z.string().describe('The order number'),
      reason: z.enum(['damaged', 'wrong_item']).default('damaged'),
      quantity: z.string().transform(Number),
    }),
  )
  const expected = {
    name: 'z_shape',
    description: 'zod tool z_shape',
    input_schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        orderId: { type: 'string', description: 'The order number' },
        // Input side: a defaulted field is optional; the transform's input is a string.
        reason: { default: 'damaged', type: 'string', enum: ['damaged', 'wrong_item'] },
        quantity: { type: 'string' },
      },
      required: ['orderId', 'quantity'],
    },
  }
  assert.deepEqual(listTools().find((d) => d.name === 'z_shape'), expected)
  api.script(reply([text('nothing to do')]))
  const r = await runWithTools('hi', at(api, { tools: ['z_shape'] }))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.deepEqual(api.requests[0].body.tools, [expected])
  unregisterTool('z_shape')
})

test('refinement, transform and default: execute gets the parsed value; toolCalls keep what the model sent', async (t) => {
  const api = await startApi(t)
  const seen = zodTool(
    'z_return',
    z.object({
      orderId: z
        .string()
        .transform((s) => s.replace(/^#/, ''))
        .refine(checkDigitOk, { message: 'Order number has a wrong check digit' }),
      reason: z.enum(['damaged', 'wrong_item']).default('damaged'),
      quantity: z.string().regex(/^[0-9]+$/).transform(Number),
    }),
    ({ orderId, reason, quantity }) => `Return of ${quantity} × ${orderId} (${reason}) started.`,
  )
  api.script(reply([toolUse('z_return', { orderId: '#1236', quantity: '2' }, 'toolu_a')]), reply([text('Started.')]))
  const r = await runWithTools('return #1236', at(api, { tools: ['z_return'] }))
  assert.equal(r.error, null, r.error && r.error.message)
  // The transform stripped '#', the default filled reason, quantity became a number.
  assert.deepEqual(seen, [{ orderId: '1236', reason: 'damaged', quantity: 2 }])
  assert.deepEqual(toolResults(api, 1), [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'Return of 2 × 1236 (damaged) started.' }])
  assert.deepEqual(r.data.toolCalls[0].input, { orderId: '#1236', quantity: '2' })
  unregisterTool('z_return')
})

test('continue: a failed refinement is an is_error result naming the path and the message; execute is not called', async (t) => {
  const api = await startApi(t)
  const seen = zodTool(
    'z_items',
    z.object({
      orderId: z.string().refine(checkDigitOk, { message: 'Order number has a wrong check digit' }),
      items: z.array(z.object({ sku: z.string().refine((s) => s === s.toUpperCase(), 'SKU must be upper case') })),
    }),
  )
  api.script(
    reply([
      toolUse('z_items', { orderId: '1235', items: [{ sku: 'AB' }, { sku: 'cd' }] }, 'toolu_1'),
      toolUse('z_items', { orderId: 1236, items: [] }, 'toolu_2'),
      toolUse('z_items', { orderId: '1236', items: [{ sku: 'AB' }] }, 'toolu_3'),
    ]),
    reply([text('One worked.')]),
  )
  const r = await runWithTools('go', at(api, { tools: ['z_items'], onToolError: 'continue' }))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.deepEqual(toolResults(api, 1), [
    {
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      is_error: true,
      content:
        'Invalid input for z_items: orderId: Order number has a wrong check digit; items[1].sku: SKU must be upper case. ' +
        'Call z_items again with input that matches its input_schema.',
    },
    // The engine's JSON Schema check runs first, in its own words.
    {
      type: 'tool_result',
      tool_use_id: 'toolu_2',
      is_error: true,
      content: 'Invalid input for z_items: orderId: 1236 is not of type "string". Call z_items again with input that matches its input_schema.',
    },
    { type: 'tool_result', tool_use_id: 'toolu_3', content: '{"ok":true,"input":{"orderId":"1236","items":[{"sku":"AB"}]}}' },
  ])
  assert.deepEqual(seen, [{ orderId: '1236', items: [{ sku: 'AB' }] }])
  const calls = r.data.toolCalls
  assert.deepEqual(calls.map((c) => Boolean(c.isError)), [true, true, false])
  assert.match(calls[0].error, /does not match its input_schema: orderId: Order number has a wrong check digit; items\[1\]\.sku: SKU must be upper case\. The tool was not run/)
  unregisterTool('z_items')
})

test('stop: a failed refinement is tool_validation_error with toolName and the issues as cause', async (t) => {
  const api = await startApi(t)
  const seen = zodTool('z_stop', z.object({ orderId: z.string().refine(checkDigitOk, 'Order number has a wrong check digit') }))
  api.script(reply([toolUse('z_stop', { orderId: '1235' }, 'toolu_s')]))
  const r = await runWithTools('go', at(api, { tools: ['z_stop'] }))
  assert.equal(r.data, null)
  assert.equal(r.error.code, 'tool_validation_error')
  assert.equal(r.error.toolName, 'z_stop')
  assert.match(r.error.message, /z_stop does not match its input_schema: orderId: Order number has a wrong check digit/)
  assert.ok(Array.isArray(r.error.cause))
  assert.deepEqual(r.error.cause.map((i) => [i.path, i.message]), [[['orderId'], 'Order number has a wrong check digit']])
  assert.equal(r.error.toolCalls.length, 1)
  assert.equal(r.error.toolCalls[0].isError, true)
  assert.equal(seen.length, 0)
  assert.equal(api.requests.length, 1)
  unregisterTool('z_stop')
})

test('many issues: a few are listed, then how many more', async (t) => {
  const api = await startApi(t)
  zodTool('z_many', z.object({ tags: z.array(z.string().refine(() => false, 'bad tag')) }))
  api.script(reply([toolUse('z_many', { tags: ['a', 'b', 'c', 'd', 'e'] }, 'toolu_m')]), reply([text('ok')]))
  const r = await runWithTools('go', at(api, { tools: ['z_many'], onToolError: 'continue' }))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.equal(
    toolResults(api, 1)[0].content,
    'Invalid input for z_many: tags[0]: bad tag; tags[1]: bad tag; tags[2]: bad tag; (and 2 more). Call z_many again with input that matches its input_schema.',
  )
  unregisterTool('z_many')
})

test('any Standard Schema with ~standard.jsonSchema works, its validate may be async and paths may be { key }', async (t) => {
  const api = await startApi(t)
  const json = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
  const targets = []
  const custom = {
    '~standard': {
      version: 1,
      vendor: 'custom',
      jsonSchema: {
        input: ({ target }) => (targets.push(target), json),
        output: () => json,
      },
      validate: async (value) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        return value.city === 'Atlantis' ? { issues: [{ message: 'No such city', path: [{ key: 'city' }] }] } : { value: { city: value.city.toUpperCase() } }
      },
    },
  }
  const seen = zodTool('custom_ss', custom, ({ city }) => `weather in ${city}: sunny`)
  assert.deepEqual(targets, ['draft-2020-12'])
  assert.deepEqual(listTools().find((d) => d.name === 'custom_ss').input_schema, json)
  api.script(
    reply([toolUse('custom_ss', { city: 'Atlantis' }, 'toolu_1'), toolUse('custom_ss', { city: 'Lima' }, 'toolu_2')]),
    reply([text('done')]),
  )
  const r = await runWithTools('go', at(api, { tools: ['custom_ss'], onToolError: 'continue' }))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.deepEqual(toolResults(api, 1), [
    { type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'Invalid input for custom_ss: city: No such city. Call custom_ss again with input that matches its input_schema.' },
    { type: 'tool_result', tool_use_id: 'toolu_2', content: 'weather in LIMA: sunny' },
  ])
  assert.deepEqual(seen, [{ city: 'LIMA' }])
  unregisterTool('custom_ss')
})

test('zod 4.0–4.1 (no ~standard.jsonSchema): converted through the installed zod’s toJSONSchema, input side', async (t) => {
  const api = await startApi(t)
  const real = z.object({ n: z.string().transform(Number), unit: z.string().default('kg') })
  // What a zod 4.1 schema looks like to us: ~standard without jsonSchema.
  const { vendor, version, validate } = real['~standard']
  const older = Object.create(real, { '~standard': { value: { vendor, version, validate } } })
  const seen = zodTool('z_old', older)
  assert.deepEqual(listTools().find((d) => d.name === 'z_old').input_schema, {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { n: { type: 'string' }, unit: { default: 'kg', type: 'string' } },
    required: ['n'],
  })
  api.script(reply([toolUse('z_old', { n: '5' }, 'toolu_o')]), reply([text('ok')]))
  const r = await runWithTools('go', at(api, { tools: ['z_old'] }))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.deepEqual(seen, [{ n: 5, unit: 'kg' }])
  unregisterTool('z_old')
})

test('bad Standard Schemas still throw a registerTool: TypeError naming the tool and the reason', () => {
  const ok = () => null
  const cases = [
    [z.string(), /^registerTool: definition\.input_schema\.type of bad_1 must be "object", got "string"/],
    [z.object({ when: z.date() }), /^registerTool: input_schema of bad_2 cannot be turned into a JSON Schema \(zod: .*Date/],
    [{ '~standard': { version: 1, vendor: 'nojson', validate: ok } }, /^registerTool: input_schema of bad_3 is a Standard Schema \(nojson\) that gives no JSON Schema/],
    [{ '~standard': { version: 1, vendor: 'zod', validate: ok } }, /^registerTool: input_schema of bad_4 is a zod 3 schema/],
    [{ '~standard': { version: 1, vendor: 'x', validate: ok, jsonSchema: { input: () => 'nope' } } }, /^registerTool: input_schema of bad_5 did not convert: its JSON Schema came out as string nope/],
  ]
  cases.forEach(([schema, message], i) => {
    const name = `bad_${i + 1}`
    assert.throws(() => registerTool({ definition: { name, input_schema: schema }, execute: ok }), (e) => e instanceof TypeError && message.test(e.message), name)
    assert.equal(listTools().some((d) => d.name === name), false)
  })
  // A zod schema with a bad tool name is still refused by the engine's checks.
  assert.throws(() => registerTool({ definition: { name: 'a b', input_schema: z.object({}) }, execute: ok }), (e) => e instanceof TypeError && /^registerTool: definition\.name "a b" must match/.test(e.message))
})

test('a transform that throws is the tool’s failure (tool_execution_error), not a validation error', async (t) => {
  const api = await startApi(t)
  const seen = zodTool('z_throws', z.object({ x: z.string().transform(() => { throw new Error('transform blew up') }) }))
  api.script(reply([toolUse('z_throws', { x: 'a' }, 'toolu_t')]))
  const r = await runWithTools('go', at(api, { tools: ['z_throws'] }))
  assert.equal(r.error.code, 'tool_execution_error')
  assert.match(r.error.message, /transform blew up/)
  assert.equal(seen.length, 0)
  unregisterTool('z_throws')
})

/** How issue messages were put on one line before that was linear, to compare short inputs with. */
const regexOneLine = (s) => s.replace(/\s*\n\s*/g, ' ')

/** A Standard Schema that refuses every input `{ i }` with the issue message `messages[i]` at `q`. */
function refusing(messages) {
  const json = { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] }
  return {
    '~standard': {
      version: 1,
      vendor: 'test',
      jsonSchema: { input: () => json, output: () => json },
      validate: (value) => ({ issues: [{ message: messages[value.i], path: ['q'] }] }),
    },
  }
}

/** Each message as the model is told it, from one round calling `name` once per message. */
async function toldAbout(t, name, messages) {
  const api = await startApi(t)
  zodTool(name, refusing(messages))
  api.script(reply(messages.map((_, i) => toolUse(name, { i }, `toolu_${name}_${i}`))), reply([text('ok')]))
  const r = await runWithTools('go', at(api, { tools: [name], onToolError: 'continue' }))
  assert.equal(r.error, null, r.error && r.error.message)
  unregisterTool(name)
  const prefix = `Invalid input for ${name}: q: `
  const suffix = `. Call ${name} again with input that matches its input_schema.`
  return toolResults(api, 1).map(({ content }) => {
    assert.ok(content.startsWith(prefix) && content.endsWith(suffix), content.slice(0, 200))
    return content.slice(prefix.length, content.length - suffix.length)
  })
}

test('issue messages: each run of whitespace holding a line break becomes one space, exactly as before', async (t) => {
  const messages = [
    'a\nb', 'a \n b', 'a\r\nb', '\ta\t\n\tb\t', '\nleading', 'trailing\n', '\n', '\n\n', ' \n \n ', 'a\n\n\nb',
    'a \n \n b', '  kept  as is  ', 'a\r\n\r\nb', 'a\n b\n  c', 'a\u00a0\n\u3000b', 'x\u2028y\n\u2029z', '\v\n\f', 'a\r\rb',
  ]
  const told = await toldAbout(t, 'ss_lines', messages)
  assert.deepEqual(told, messages.map(regexOneLine))
})

test('issue messages: a long run of whitespace is put on one line in linear time', { timeout: 20_000 }, async (t) => {
  // The regex took minutes on the first: it scanned to the end of the run from every start in it.
  const spaces = ' '.repeat(400_000)
  const messages = [`${spaces}x`, `${spaces}\n${spaces}x`, `x${spaces}\n`, `x\n${spaces}`]
  const told = await toldAbout(t, 'ss_long', messages)
  assert.deepEqual(told.map((m) => m.length), [400_001, 2, 2, 2])
  assert.deepEqual(told, [`${spaces}x`, ' x', 'x ', 'x '])
})
