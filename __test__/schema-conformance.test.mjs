// JSON Schema conformance through the whole loop. Every case of the
// official JSON-Schema-Test-Suite (draft2020-12 and draft7, top-level files; `optional/` is left
// out) whose instance is a JSON object becomes a tool call of the stand-in model: the group's
// schema is a tool's input_schema, the instance is the tool_use input, and `execute` must run
// exactly when the suite says "valid".
//
// Turning a suite schema into a tool's input_schema (the API wants `type: "object"` at the top):
// - `true` → `{ $schema, type: "object" }`; `false` → `{ $schema, type: "object", allOf: [false] }`.
// - an object schema keeps every keyword where it is (so `$id`, `$ref: "#/…"`, `$anchor`,
//   `$dynamicAnchor` and sibling-keyword interactions mean what they meant), gets `$schema` of
//   its draft unless it names one itself, and `type: "object"`. A `type` of its own other than
//   "object" moves into `allOf: [...its allOf, { type }]`: `type` makes no annotations, so the
//   result is the suite's schema and-ed with "is an object", which changes nothing for the
//   object instances tested here.
// - except when a reference inside leads back to the root ("#", the root's `$id`, a root anchor):
//   there `type: "object"` would also apply to the referring subschemas. Such a schema is wrapped
//   instead, `{ $schema, type: "object", allOf: [S] }`, with S given an `$id` of its own (under
//   https://json-schema-test-suite.invalid/, never fetched) when it has none, so "#…" still
//   means S. (7 groups; none of them has a draft-7 root `$ref`, whose sibling `$id` would be
//   ignored.)
// Left out: groups whose schema needs a resource from the suite's remote server
// (http://localhost:1234/…: refRemote, four dynamicRef groups, vocabulary's custom metaschema).
// The engine's jsonschema is built without HTTP resolving, and the vendored copy has no
// `remotes/`, so they cannot compile; the first test proves that is exactly why each of them is
// left out.
//
// The suite is vendored in __test__/fixtures/json-schema-test-suite (its README names the upstream
// commit; MIT licence beside it). The test reads nothing outside the repository.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { registerTool, runWithTools } from '../index.mjs'
import { text, toolUse, reply } from '../stand-in/index.mjs'
import { startApi, at, toolResults } from './helpers.mjs'
import { assertRecordsClean, assertNoKeyIn } from './secrets.mjs'

const SUITE = fileURLToPath(new URL('./fixtures/json-schema-test-suite/tests', import.meta.url))
const DIALECTS = {
  'draft2020-12': 'https://json-schema.org/draft/2020-12/schema',
  draft7: 'http://json-schema.org/draft-07/schema#',
}
/** Tool calls per model response. */
const BATCH = 150

/** Groups left out, and why: each needs a document from the suite's remote server. */
const REMOTE = 'needs a document from the suite\'s remote server http://localhost:1234'
const LEFT_OUT = new Map([
  ['draft2020-12/dynamicRef.json > strict-tree schema, guards against misspelled properties', REMOTE],
  ['draft2020-12/dynamicRef.json > tests for implementation dynamic anchor and reference link', REMOTE],
  ['draft2020-12/dynamicRef.json > $ref and $dynamicAnchor are independent of order - $defs first', REMOTE],
  ['draft2020-12/dynamicRef.json > $ref and $dynamicAnchor are independent of order - $ref first', REMOTE],
  ['draft2020-12/vocabulary.json > schema that uses custom metaschema with with no validation vocabulary', `${REMOTE} (a custom metaschema)`],
])
/** Whole files left out: every group with object instances in them needs the remote server. */
const LEFT_OUT_FILES = new Set(['refRemote.json'])

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The suite's schema as a tool's input_schema (see the comment at the top). */
export function toolSchema(schema, dialect, name) {
  if (schema === true) return { $schema: dialect, type: 'object' }
  if (schema === false) return { $schema: dialect, type: 'object', allOf: [false] }
  if (rootIsReferenced(schema)) {
    // `type: "object"` on this root would also apply wherever the schema refers back to it:
    // wrap it instead, as its own resource so that "#…" still means the suite's root.
    const inner = Object.hasOwn(schema, '$id') ? schema : { $id: `${STAND_IN_BASE}${name}.json`, ...schema }
    return { $schema: dialect, type: 'object', allOf: [inner] }
  }
  const out = { ...schema }
  if (!Object.hasOwn(out, '$schema')) out.$schema = dialect
  if (Object.hasOwn(schema, 'type') && schema.type !== 'object') out.allOf = [...(schema.allOf ?? []), { type: schema.type }]
  out.type = 'object'
  return out
}

/** A base for schemas without `$id` (never fetched: the engine resolves nothing over HTTP). */
const STAND_IN_BASE = 'https://json-schema-test-suite.invalid/'
const REF_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef']

/**
 * Whether a reference in `schema` leads back to its root: "#", the root's `$id` (relative ids
 * resolved), or an `$anchor` / `$dynamicAnchor` / draft-7 "#name" `$id` of the root.
 */
function rootIsReferenced(schema) {
  const rootBase = new URL(typeof schema.$id === 'string' ? schema.$id : 'root.json', STAND_IN_BASE)
  const rootDoc = rootBase.href.replace(/#.*$/, '')
  const rootAnchors = new Set([schema.$anchor, schema.$dynamicAnchor].filter((a) => typeof a === 'string'))
  if (typeof schema.$id === 'string' && schema.$id.startsWith('#')) rootAnchors.add(schema.$id.slice(1))
  let found = false
  const walk = (node, base) => {
    if (found || node === null || typeof node !== 'object') return
    if (Array.isArray(node)) return node.forEach((n) => walk(n, base))
    let here = base
    if (node !== schema && typeof node.$id === 'string' && !node.$id.startsWith('#')) {
      try {
        here = new URL(node.$id, base)
      } catch {}
    }
    for (const keyword of REF_KEYWORDS) {
      if (typeof node[keyword] !== 'string') continue
      let target
      try {
        target = new URL(node[keyword], here)
      } catch {
        continue
      }
      const doc = target.href.replace(/#.*$/, '')
      const fragment = decodeURIComponent(target.hash.slice(1))
      if (doc === rootDoc && (fragment === '' || fragment === '/' || rootAnchors.has(fragment))) found = true
    }
    for (const [key, value] of Object.entries(node)) {
      if (key !== 'enum' && key !== 'const' && key !== 'default' && key !== 'examples') walk(value, here)
    }
  }
  walk(schema, rootBase)
  return found
}

function loadSuite() {
  assert.ok(fs.existsSync(SUITE), `the vendored JSON-Schema-Test-Suite is not at ${SUITE}`)
  const groups = []
  for (const [draft, dialect] of Object.entries(DIALECTS)) {
    const files = fs.readdirSync(path.join(SUITE, draft)).filter((f) => f.endsWith('.json')).sort()
    for (const file of files) {
      const all = JSON.parse(fs.readFileSync(path.join(SUITE, draft, file), 'utf8'))
      all.forEach((group, index) => {
        const cases = group.tests.filter((c) => isObject(c.data))
        if (cases.length === 0) return
        const id = `${draft}/${file} > ${group.description}`
        groups.push({
          id,
          draft,
          file,
          name: `${draft}_${file.replace(/\.json$/, '')}_${index}`.replace(/[^a-zA-Z0-9_-]/g, '_'),
          schema: toolSchema(group.schema, dialect, `${draft}_${file}_${index}`.replace(/[^a-zA-Z0-9_-]/g, '_')),
          cases: cases.map((c) => ({ id: `${id} > ${c.description}`, data: c.data, valid: c.valid })),
          leftOut: LEFT_OUT_FILES.has(file) ? REMOTE : LEFT_OUT.get(id),
        })
      })
    }
  }
  return groups
}

const groups = loadSuite()
/** toolUseId → the tool calls `execute` saw. */
const executed = new Set()

function register(group) {
  registerTool({
    definition: { name: group.name, description: group.id.slice(0, 500), input_schema: group.schema },
    execute: (_input, ctx) => {
      executed.add(ctx.toolUseId)
      return 'ran'
    },
  })
}

function batches(list, size) {
  const out = []
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size))
  return out
}

/** Every included case, with the tool of its group. */
function includedCases() {
  return groups.filter((g) => !g.leftOut).flatMap((g) => g.cases.map((c) => ({ ...c, tool: g.name })))
}

test('every suite schema registers as a tool, except the groups that need the remote server', () => {
  const failures = new Map()
  for (const group of groups) {
    try {
      register(group)
    } catch (e) {
      failures.set(group.id, e.message)
    }
  }
  const leftOut = groups.filter((g) => g.leftOut)
  assert.deepEqual([...failures.keys()].sort(), leftOut.map((g) => g.id).sort(), 'exactly the left-out groups fail to compile')
  for (const [id, message] of failures) {
    assert.match(message, /localhost:1234/, `${id} fails for another reason: ${message}`)
    assert.match(message, /not present in a registry|not a dialect we know/, `${id}: ${message}`)
  }
  // The groups whose `$ref` names the root by its URN `$id` run in both drafts, valid
  // and invalid cases alike (the wrapping above keeps `type: "object"` off `foo`).
  for (const draft of Object.keys(DIALECTS)) {
    const urn = groups.find((g) => g.id === `${draft}/ref.json > simple URN base URI with $ref via the URN`)
    assert.ok(urn, `${draft}: the URN $ref group is missing from the suite`)
    assert.equal(urn.leftOut, undefined, `${draft}: the URN $ref group is left out`)
    assert.deepEqual(urn.cases.map((c) => c.valid), [true, false])
  }
  // Figures for docs/reliability.md.
  const included = includedCases()
  const byDraft = (d) => included.filter((c) => c.id.startsWith(`${d}/`)).length
  console.log(
    `schema conformance: ${included.length} cases (${included.filter((c) => c.valid).length} valid, ${included.filter((c) => !c.valid).length} invalid; ` +
      `draft2020-12 ${byDraft('draft2020-12')}, draft7 ${byDraft('draft7')}) in ${groups.length - leftOut.length} groups; ` +
      `left out ${leftOut.reduce((n, g) => n + g.cases.length, 0)} cases in ${leftOut.length} groups (remote refs)`,
  )
  assert.ok(included.length > 600, `only ${included.length} cases found`)
})

test('continue mode: execute runs exactly for the cases the suite calls valid; the others get is_error', async (t) => {
  const api = await startApi(t)
  const disagreements = []
  let runs = 0
  for (const batch of batches(includedCases(), BATCH)) {
    api.reset()
    executed.clear()
    const uses = batch.map((c, i) => toolUse(c.tool, c.data, `toolu_c${runs}_${i}`))
    api.script(reply(uses), reply([text('checked')]))
    const tools = [...new Set(batch.map((c) => c.tool))]
    const r = await runWithTools('validate', at(api, { tools, onToolError: 'continue', maxToolFailures: 1000 }))
    runs++
    assert.equal(r.error, null, r.error && r.error.message)
    assert.equal(r.data.toolCalls.length, batch.length)
    const results = toolResults(api, 1)
    batch.forEach((c, i) => {
      const id = uses[i].id
      const ran = executed.has(id)
      const call = r.data.toolCalls[i]
      const result = results[i]
      assert.equal(call.toolUseId, id)
      assert.equal(result.tool_use_id, id)
      if (ran !== c.valid) disagreements.push(`${c.id}: suite says ${c.valid ? 'valid' : 'invalid'}, execute ${ran ? 'ran' : 'did not run'} (${result.content})`)
      else if (Boolean(call.isError) === c.valid || Boolean(result.is_error) === c.valid) disagreements.push(`${c.id}: isError ${call.isError} / is_error ${result.is_error}`)
      else if (!c.valid) assert.match(result.content, new RegExp(`^Invalid input for ${c.tool}: `), c.id)
    })
    assertNoKeyIn('a result', r)
    assertRecordsClean(api)
  }
  assert.deepEqual(disagreements, [], `${disagreements.length} cases disagree with the suite:\n${disagreements.join('\n')}`)
})

test('stop mode: an invalid case ends the run with tool_validation_error before execute; valid ones run', async (t) => {
  const api = await startApi(t)
  const cases = includedCases()
  const disagreements = []
  // The valid cases, many per response: all of them run and the run succeeds.
  for (const [n, batch] of batches(cases.filter((c) => c.valid), BATCH).entries()) {
    api.reset()
    executed.clear()
    const uses = batch.map((c, i) => toolUse(c.tool, c.data, `toolu_v${n}_${i}`))
    api.script(reply(uses), reply([text('checked')]))
    const r = await runWithTools('validate', at(api, { tools: [...new Set(batch.map((c) => c.tool))] }))
    if (r.error) {
      disagreements.push(`batch ${n} of valid cases: ${r.error.code} ${r.error.toolName}: ${r.error.message}`)
      continue
    }
    batch.forEach((c, i) => {
      if (!executed.has(uses[i].id)) disagreements.push(`${c.id}: valid, but execute did not run`)
    })
    assertNoKeyIn('a result', r)
    assertRecordsClean(api)
  }
  // Each invalid case on its own: the run ends at once, nothing runs, nothing more is sent.
  for (const c of cases.filter((c) => !c.valid)) {
    api.reset()
    executed.clear()
    api.script(reply([toolUse(c.tool, c.data)]), reply([text('must not be asked')]))
    const r = await runWithTools('validate', at(api, { tools: [c.tool] }))
    if (!r.error || r.error.code !== 'tool_validation_error') {
      disagreements.push(`${c.id}: invalid, but the run ended with ${r.error ? r.error.code : 'success'}`)
      continue
    }
    assert.equal(r.error.toolName, c.tool, c.id)
    assert.equal(executed.size, 0, c.id)
    assert.equal(api.requests.length, 1, c.id)
    assert.equal(r.error.toolCalls.length, 1, c.id)
    assert.equal(r.error.toolCalls[0].isError, true, c.id)
    assertNoKeyIn('an error', r)
    assertRecordsClean(api)
  }
  assert.deepEqual(disagreements, [], `${disagreements.length} cases disagree with the suite:\n${disagreements.join('\n')}`)
})

test('two tools whose schemas carry the same $id both register, and each validates with its own schema', async (t) => {
  const api = await startApi(t)
  const id = 'https://example.com/schemas/shared.json'
  const seen = []
  const orders = {
    $id: id,
    type: 'object',
    properties: { orderId: { $ref: '#/$defs/key' } },
    required: ['orderId'],
    $defs: { key: { type: 'string', pattern: '^[0-9]+$' } },
  }
  const quantities = {
    $id: id,
    type: 'object',
    properties: { qty: { $ref: `${id}#/$defs/key` } },
    required: ['qty'],
    $defs: { key: { type: 'integer', minimum: 1 } },
  }
  registerTool({ definition: { name: 'same_id_orders', input_schema: orders }, execute: (input) => (seen.push(['orders', input]), 'ok') })
  registerTool({ definition: { name: 'same_id_quantities', input_schema: quantities }, execute: (input) => (seen.push(['quantities', input]), 'ok') })
  api.script(
    reply([
      toolUse('same_id_orders', { orderId: '4821' }, 'toolu_s1'),
      toolUse('same_id_orders', { orderId: 4821 }, 'toolu_s2'),
      toolUse('same_id_quantities', { qty: 3 }, 'toolu_s3'),
      toolUse('same_id_quantities', { qty: '3' }, 'toolu_s4'),
      toolUse('same_id_orders', { qty: 3 }, 'toolu_s5'),
      toolUse('same_id_quantities', { qty: 0 }, 'toolu_s6'),
    ]),
    reply([text('done')]),
  )
  const r = await runWithTools('go', at(api, { tools: ['same_id_orders', 'same_id_quantities'], onToolError: 'continue' }))
  assert.equal(r.error, null, r.error && r.error.message)
  assert.deepEqual(seen, [['orders', { orderId: '4821' }], ['quantities', { qty: 3 }]])
  assert.deepEqual(r.data.toolCalls.map((c) => Boolean(c.isError)), [false, true, false, true, true, true])
  const results = toolResults(api, 1)
  assert.match(results[1].content, /orderId: 4821 is not of type "string"/)
  assert.match(results[3].content, /qty: "3" is not of type "integer"/)
  assert.match(results[5].content, /qty: 0 is less than the minimum of 1/)
  // Both are offered, each with its own definition as given.
  assert.deepEqual(api.requests[0].body.tools.map((d) => d.input_schema), [orders, quantities])
  assertRecordsClean(api)
})
