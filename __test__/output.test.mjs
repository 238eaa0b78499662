// Typed answers (`output`): the schema goes out as output_config.format in the form the API takes
// (what the official SDK's transformJSONSchema makes of it), the final answer is parsed and checked
// in Rust against the full schema, then by a Standard Schema's validate; what fails is
// output_validation_error, a cut answer output_truncated, a refusal has no output.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { z } from 'zod'
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema'
import { registerTool, runWithTools, streamWithTools } from '../index.mjs'
import { reply, text, toolUse } from '../stand-in/index.mjs'
import { message } from 'anthropic-tool-calling/testing'
import { startApi, at, freshName, orderTool, standIn, via } from './helpers.mjs'

/** A scripted answer that is deliberately not what the format asks for (the stand-in lets it through). */
const broken = (step) => ({ ...step, ignoresFormat: true })

/** The input-side JSON Schema of a zod schema, as the package converts it. */
const inputSide = (schema) => schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' })

const summary = z.object({
  status: z.enum(['shipped', 'delivered', 'lost']).describe('Where the order is'),
  eta: z.string().nullable(),
  items: z.number().int().default(1),
  total: z.string().transform((s) => Number(s)),
})

test('the schema is sent as the official SDK\'s transformJSONSchema makes it, byte for byte, on every request', async (t) => {
  const api = await startApi(t)
  const schemas = [
    inputSide(summary),
    inputSide(z.object({ id: z.string().min(3).max(9), tags: z.array(z.string().email()).min(2).max(5), when: z.iso.date(), n: z.number().gt(0).lt(100).multipleOf(5) })),
    inputSide(z.object({ kind: z.union([z.literal('a'), z.literal('b')]), nested: z.object({ x: z.boolean().optional() }), note: z.string().optional() })),
    inputSide(z.object({ choice: z.discriminatedUnion('t', [z.object({ t: z.literal('one'), v: z.number() }), z.object({ t: z.literal('two'), w: z.string() })]) })),
    {
      type: 'object',
      title: 'Answer',
      properties: {
        code: { type: 'string', pattern: '^[A-Z]{3}$', format: 'regex', description: 'Three letters' },
        either: { oneOf: [{ type: 'string' }, { type: 'integer', minimum: 1 }], type: 'string' },
        both: { allOf: [{ type: 'object', properties: { a: { type: 'string' } } }] },
        fixed: { const: 'x', type: 'string' },
        objEnum: { enum: [{ a: 1 }], type: 'object' },
        list: { type: 'array', items: { $ref: '#/$defs/Item' }, minItems: 1, uniqueItems: true },
        open: { type: 'object', additionalProperties: { type: 'number' }, patternProperties: { '^x': { type: 'string' } } },
      },
      required: ['code'],
      additionalProperties: true,
      $defs: { Item: { type: 'object', properties: { n: { type: 'number', exclusiveMinimum: 0, default: 1.5 } } } },
    },
  ]
  for (const [i, schema] of schemas.entries()) {
    api.reset()
    const tool = freshName('lookup')
    orderTool(tool)
    api.script(reply([toolUse(tool, { orderId: '4821' })]), broken(reply([text('{}')])))
    await runWithTools('Summarise #4821', at(api, { tools: [tool], output: schema, outputConfig: { effort: 'low' } }))
    assert.equal(api.requests.length, 2, `schema ${i}`)
    const expected = transformJSONSchema(schema)
    for (const request of api.requests) {
      assert.deepEqual(request.body.output_config, { effort: 'low', format: { type: 'json_schema', schema: expected } }, `schema ${i}`)
      // Byte for byte, the description texts' order included.
      assert.ok(request.rawBody.includes(`"output_config":${JSON.stringify({ effort: 'low', format: { type: 'json_schema', schema: expected } })}`), `schema ${i}`)
    }
  }
})

test('zod: a tool runs, then data.output is the schema\'s value (defaults and transforms applied), data.text the raw answer', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  const calls = orderTool(tool, async (input) => ({ orderId: input.orderId, status: 'shipped', eta: '2026-12-09' }))
  const answer = '{"status":"shipped","eta":"2026-12-09","total":"42.5"}'
  api.script(reply([toolUse(tool, { orderId: '4821' })]), reply([text(answer)]))
  const r = await runWithTools('Summarise order #4821', at(api, { tools: [tool], output: summary }))
  assert.equal(r.error, null, r.error?.message)
  assert.equal(calls.length, 1)
  assert.deepEqual(r.data.output, { status: 'shipped', eta: '2026-12-09', items: 1, total: 42.5 })
  assert.equal(r.data.text, answer)
  assert.equal(r.data.stopReason, 'end_turn')
  assert.equal(r.data.toolCalls.length, 1)
  // The answer is history like any other: the next turn sends it back as it came.
  assert.equal(r.data.messages.at(-1).content[0].text, answer)
})

test('a JSON Schema: data.output is the parsed answer; a constraint the API was only told in words is checked here', async (t) => {
  const api = await startApi(t)
  const schema = { type: 'object', properties: { id: { type: 'string', minLength: 3 }, n: { type: 'integer', maximum: 10 } }, required: ['id', 'n'] }
  api.script(reply([text(' {"id":"A-17","n":3}\n')]))
  const ok = await runWithTools('hi', at(api, { output: schema }))
  assert.equal(ok.error, null, ok.error?.message)
  assert.deepEqual(ok.data.output, { id: 'A-17', n: 3 })
  // Valid for the schema the API got (no minLength, no maximum there), not for the full one.
  api.script(reply([text('{"id":"A","n":11}')]))
  const r = await runWithTools('hi', at(api, { output: schema }))
  assert.equal(r.data, null)
  assert.equal(r.error.code, 'output_validation_error')
  assert.match(r.error.message, /^The model's answer does not match output:\nid: "A" is shorter than 3 characters\nn: 11 is greater than the maximum of 10\n/)
  assert.deepEqual(r.error.cause, [
    { message: '"A" is shorter than 3 characters', path: ['id'] },
    { message: '11 is greater than the maximum of 10', path: ['n'] },
  ])
  assert.equal(r.error.text, '{"id":"A","n":11}')
  assert.equal(r.error.usage.outputTokens, 5)
})

test('an answer that is not JSON, or empty, is output_validation_error with the answer and the tool calls made', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  orderTool(tool)
  api.script(reply([toolUse(tool, { orderId: '1' })]), broken(reply([text('Sure! The order has shipped.')])))
  const r = await runWithTools('hi', at(api, { tools: [tool], output: summary }))
  assert.equal(r.error.code, 'output_validation_error')
  assert.match(r.error.message, /^The model's answer is not JSON \(expected value at line 1 column 1\)/)
  assert.deepEqual(r.error.cause, [{ message: 'not JSON: expected value at line 1 column 1', path: [] }])
  assert.equal(r.error.text, 'Sure! The order has shipped.')
  assert.equal(r.error.toolCalls.length, 1)
  assert.equal(r.error.toolCalls[0].toolName, tool)
  api.script(broken(reply([])))
  const empty = await runWithTools('hi', at(api, { output: { type: 'object' } }))
  assert.equal(empty.error.code, 'output_validation_error')
  assert.equal(empty.error.text, '')
  // An answer nested beyond what is read (a hostile gateway's, say) is refused, never followed down.
  const deep = '['.repeat(5000) + ']'.repeat(5000)
  api.script(broken(reply([text(deep)])))
  const nested = await runWithTools('hi', at(api, { tools: [tool], output: { type: 'array' } }))
  assert.equal(nested.error.code, 'output_validation_error')
  assert.match(nested.error.message, /^The model's answer is not JSON \(recursion limit exceeded/)
})

test('a zod refinement the JSON Schema cannot say fails in JS, with zod\'s issues as cause', async (t) => {
  const api = await startApi(t)
  const schema = z.object({ orderId: z.string().refine((s) => s.startsWith('#'), 'must start with #'), count: z.number() })
  api.script(reply([text('{"orderId":"4821","count":2}')]))
  const r = await runWithTools('hi', at(api, { output: schema }))
  assert.equal(r.error.code, 'output_validation_error')
  assert.match(r.error.message, /^The model's answer does not match output:\norderId: must start with #\n/)
  assert.ok(Array.isArray(r.error.cause) && r.error.cause[0].message === 'must start with #', JSON.stringify(r.error.cause))
  assert.deepEqual(r.error.cause[0].path, ['orderId'])
  assert.equal(r.error.text, '{"orderId":"4821","count":2}')
  assert.equal(r.error.usage.inputTokens, 10)
  // And one that passes keeps zod's value.
  api.script(reply([text('{"orderId":"#4821","count":2}')]))
  const ok = await runWithTools('hi', at(api, { output: schema }))
  assert.deepEqual(ok.data.output, { orderId: '#4821', count: 2 })
})

test('a Standard Schema whose validate throws (or returns junk) is output_validation_error with what it threw', async (t) => {
  const api = await startApi(t)
  const boom = new Error('validator exploded')
  const schema = (validate) => ({
    '~standard': { version: 1, vendor: 'acme', validate, jsonSchema: { input: () => ({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }) } },
  })
  api.script(reply([text('{"a":"x"}')]), reply([text('{"a":"x"}')]), reply([text('{"a":"x"}')]))
  const threw = await runWithTools('hi', at(api, { output: schema(() => { throw boom }) }))
  assert.equal(threw.error.code, 'output_validation_error')
  assert.equal(threw.error.cause, boom)
  assert.match(threw.error.message, /validate threw on the model's answer \(validator exploded\)/)
  const rejected = await runWithTools('hi', at(api, { output: schema(async () => Promise.reject(boom)) }))
  assert.equal(rejected.error.cause, boom)
  const junk = await runWithTools('hi', at(api, { output: schema(() => 42) }))
  assert.equal(junk.error.code, 'output_validation_error')
  assert.match(junk.error.message, /returned number 42/)
})

test('an answer cut by max_tokens is output_truncated; a refusal has stopReason refusal and no output', async (t) => {
  // Through the public test kit: replies with the stop reason the API gave.
  const api = await standIn(t, { replies: [message('{"status":"ship', 'max_tokens'), message('I cannot help with that.', 'refusal')] })
  const cut = await runWithTools('hi', via(api, { output: summary, maxTokens: 64 }))
  assert.equal(cut.error.code, 'output_truncated')
  assert.match(cut.error.message, /raise maxTokens \(now 64\)/)
  const refused = await runWithTools('hi', via(api, { output: summary }))
  assert.equal(refused.error, null)
  assert.equal(refused.data.stopReason, 'refusal')
  assert.equal(refused.data.text, 'I cannot help with that.')
  assert.equal('output' in refused.data, false)
})

test('streamed: the same data.output in result, the parts unchanged (the JSON text as text deltas), failures in the finish part', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  orderTool(tool)
  const answer = '{"status":"delivered","eta":null,"items":2,"total":"9"}'
  api.script(reply([toolUse(tool, { orderId: '7' })]), reply([text(answer)]))
  const stream = streamWithTools('hi', at(api, { tools: [tool], output: summary }))
  let said = ''
  const kinds = new Set()
  for await (const part of stream) {
    kinds.add(part.type)
    if (part.type === 'text-delta') said += part.text
  }
  const r = await stream.result
  assert.equal(r.error, null, r.error?.message)
  assert.deepEqual(r.data.output, { status: 'delivered', eta: null, items: 2, total: 9 })
  assert.equal(said, answer)
  for (const kind of ['start-step', 'tool-call', 'tool-result', 'finish-step', 'text-delta', 'finish']) assert.ok(kinds.has(kind), kind)
  assert.ok(api.requests.every((req) => req.body.stream === true && req.body.output_config.format.type === 'json_schema'))

  api.script(broken(reply([text('{"status":"unknown"}')])))
  const failing = streamWithTools('hi', at(api, { output: summary }))
  const chunks = []
  for await (const chunk of failing.toUIMessageStreamResponse().body.pipeThrough(new TextDecoderStream())) chunks.push(chunk)
  const failed = await failing.result
  assert.equal(failed.error.code, 'output_validation_error')
  const ui = chunks.join('')
  assert.match(ui, /"type":"error","errorText":"The reply did not come out in the expected form. Please try again."/)
  // The answer streamed as it came (that is the text); the issues stay on the server.
  assert.doesNotMatch(ui, /is not one of/)
})

test('bad output options are invalid_request naming output, and nothing is sent', async (t) => {
  const api = await startApi(t)
  const noJson = { '~standard': { version: 1, vendor: 'acme', validate: (v) => ({ value: v }) } }
  const cases = [
    ['json', /^Option output must be a JSON Schema object or a Standard Schema with a JSON Schema \(zod ≥ 4, arktype, valibot\); got "json"\. Nothing was sent\.$/],
    [42, /^Option output must be a JSON Schema object/],
    [[{ type: 'object' }], /^Option output must be a JSON Schema object/],
    [() => ({}), /^Option output must be a JSON Schema object or a Standard Schema with a JSON Schema, got a function\. Nothing was sent\.$/],
    [noJson, /^Option output is a Standard Schema \(acme\) that gives no JSON Schema/],
    [{ type: 'object', properties: { x: { type: 'strin' } } }, /^Option output cannot be sent as the API's output_config\.format: not a valid JSON Schema: at \/properties\/x\/type/],
    [{ type: 'object', properties: { x: { $ref: 'https://example.com/x.json' } } }, /points outside the schema/],
    [inputSide(z.object({ anything: z.unknown() })), /the schema at \/properties\/anything has no type/],
  ]
  const tree = z.object({ name: z.string(), get children() { return z.array(tree) } })
  cases.push([inputSide(tree), /the schema is recursive/])
  for (const [output, message] of cases) {
    const r = await runWithTools('hi', at(api, { output }))
    assert.equal(r.error?.code, 'invalid_request', String(output))
    assert.match(r.error.message, message)
  }
  const both = await runWithTools('hi', at(api, { output: summary, outputConfig: { format: { type: 'json_schema', schema: { type: 'object' } } } }))
  assert.match(both.error.message, /^Options output and outputConfig\.format both set the answer's format/)
  const extra = await runWithTools('hi', at(api, { output: summary, extraBody: { output_config: { effort: 'high' } } }))
  assert.match(extra.error.message, /^Option extraBody sets "output_config", which would replace the format that output sends/)
  const deprecated = await runWithTools('hi', at(api, { output: summary, extraBody: { output_format: { type: 'json_schema', schema: {} } } }))
  assert.match(deprecated.error.message, /^Option extraBody sets "output_format"/)
  assert.equal(api.requests.length, 0)
})

test('outputConfig keeps its other keys beside the format; a task_budget adds its beta; no output, no format', async (t) => {
  const api = await startApi(t)
  api.script(reply([text('{"status":"lost","eta":null,"total":"0"}')]), reply([text('plain')]))
  const r = await runWithTools('hi', at(api, { output: summary, outputConfig: { effort: 'high', task_budget: { type: 'tokens', total: 64000 } } }))
  assert.equal(r.error, null, r.error?.message)
  const first = api.requests[0]
  assert.deepEqual(Object.keys(first.body.output_config), ['effort', 'task_budget', 'format'])
  assert.ok(first.betas.includes('task-budgets-2026-03-13'), first.betas.join())
  const plain = await runWithTools('hi', at(api, { outputConfig: { effort: 'low' } }))
  assert.equal(plain.data.text, 'plain')
  assert.deepEqual(api.requests[1].body.output_config, { effort: 'low' })
  assert.equal(api.requests[1].betas.includes('task-budgets-2026-03-13'), false)
})

test('the answer at the tool-round limit is checked too; a run that waits for approval has no output', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  orderTool(tool)
  api.script(reply([toolUse(tool, { orderId: '1' })]), reply([text('{"status":"shipped","eta":null,"total":"1"}')]))
  const limited = await runWithTools('hi', at(api, { tools: [tool], output: summary, maxToolIterations: 0, onMaxIterations: 'answer' }))
  assert.equal(limited.error, null, limited.error?.message)
  assert.equal(limited.data.limitReached, true)
  assert.deepEqual(limited.data.output, { status: 'shipped', eta: null, items: 1, total: 1 })

  const risky = freshName('refund')
  registerTool({ definition: { name: risky, input_schema: { type: 'object' } }, needsApproval: true, execute: () => 'refunded' })
  api.script(reply([toolUse(risky, {})]))
  const paused = await runWithTools('hi', at(api, { tools: [risky], output: summary, approvalSecret: 'a'.repeat(32) }))
  assert.equal(paused.data.stopReason, 'approval_required')
  assert.equal('output' in paused.data, false)
})

test('a validate that never settles still ends with the signal (aborted, the calls made kept)', async (t) => {
  const api = await startApi(t)
  const tool = freshName('get_order')
  orderTool(tool)
  const hanging = { '~standard': { version: 1, vendor: 'acme', validate: () => new Promise(() => {}), jsonSchema: { input: () => ({ type: 'object' }) } } }
  api.script(reply([toolUse(tool, { orderId: '1' })]), reply([text('{}')]))
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 200)
  const r = await runWithTools('hi', at(api, { tools: [tool], output: hanging, signal: controller.signal }))
  assert.equal(r.error.code, 'aborted')
  assert.equal(r.error.toolCalls.length, 1)
  const late = new AbortController()
  late.abort()
  api.script(reply([text('{}')]))
  const already = await runWithTools('hi', at(api, { tools: [], output: hanging, signal: late.signal }))
  assert.equal(already.error.code, 'aborted')
})

test('odd schemas: formats the API only reads about are checked, definitions kept, keys that look like numbers stay keys', async (t) => {
  const api = await startApi(t)
  const schema = {
    type: 'object',
    properties: { link: { type: 'string', format: 'json-pointer' }, byYear: { type: 'object', properties: { 2024: { $ref: '#/definitions/Count' } }, required: ['2024'] } },
    required: ['link', 'byYear'],
    definitions: { Count: { type: 'integer', minimum: 0 } },
  }
  // Valid for what the API got (no format, no minimum there), not for the full schema.
  api.script(reply([text('{"link":"nope","byYear":{"2024":-1}}')]))
  const r = await runWithTools('hi', at(api, { tools: [], output: schema }))
  assert.equal(r.error.code, 'output_validation_error', r.error.message)
  assert.deepEqual(r.error.cause, [
    { message: '-1 is less than the minimum of 0', path: ['byYear', '2024'] },
    { message: '"nope" is not a "json-pointer"', path: ['link'] },
  ])
  assert.match(r.error.message, /\nbyYear\.2024: -1 is less than the minimum of 0\nlink: "nope" is not a "json-pointer"\n/)
  const sent = api.requests[0].body.output_config.format.schema
  assert.deepEqual(sent.definitions, { Count: { type: 'integer', description: '{minimum: 0}' } })
  assert.equal(sent.properties.link.description, '{format: "json-pointer"}')
  // A property named like a data keyword is a schema: its recursion is refused.
  const recursive = await runWithTools('hi', at(api, { tools: [], output: { type: 'object', properties: { default: { $ref: '#' } } } }))
  assert.match(recursive.error.message, /the schema is recursive/)
  // A recursion only in what the API is not sent is no recursion of what it gets.
  api.script(reply([text('{"name":"a"}')]))
  const open = await runWithTools('hi', at(api, { tools: [], output: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: { $ref: '#' } } }))
  assert.equal(open.error, null, open.error?.message)
  // A schema that throws when looked at, or is nested beyond what JSON is read to, is the option's fault.
  const trap = new Proxy({}, { get() { throw new Error('trap') } })
  const trapped = await runWithTools('hi', at(api, { tools: [], output: trap }))
  assert.equal(trapped.error.code, 'invalid_request')
  assert.match(trapped.error.message, /^Option output could not be read as a schema \(trap\)/)
  let deep = { type: 'object' }
  for (let i = 0; i < 80; i++) deep = { type: 'object', properties: { x: deep } }
  const tooDeep = await runWithTools('hi', at(api, { tools: [], output: deep }))
  assert.match(tooDeep.error.message, /^Option output cannot be read as JSON \(recursion limit exceeded/)
  assert.equal(api.requests.length, 2)
})
