// The run options are written once, in src/binding/options/options.json: index.d.ts's RunOptions
// and docs/options.md are made from it by scripts/options-doc.mjs, and the addon's list of the
// options JS keeps agrees with it. (src/binding/options/tests.rs holds the Rust list and the
// defaults the engine applies to the same table.)
import test from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import ts from 'typescript'
import { readTable, optionsDoc, withRunOptions, DOC, DTS } from '../scripts/options-doc.mjs'

const require = createRequire(import.meta.url)
const table = readTable()
const STALE = 'stale: run `node scripts/options-doc.mjs` after changing src/binding/options/options.json'

test('every option of the table has a name, a type, a default and a doc, once', () => {
  const names = new Set()
  for (const option of table) {
    for (const field of ['name', 'type', 'default', 'doc']) {
      assert.equal(typeof option[field], 'string', `${option.name}.${field}`)
      assert.ok(option[field].length > 0, `${option.name}.${field}`)
    }
    assert.ok(!names.has(option.name), `${option.name} is in the table twice`)
    names.add(option.name)
    // The default has its own column: the doc does not say it again.
    assert.doesNotMatch(option.doc, /\bdefault\b/i, `${option.name}: its doc repeats the default`)
  }
})

test("index.d.ts's RunOptions has exactly the table's options, with their types and defaults", () => {
  const source = ts.createSourceFile('index.d.ts', fs.readFileSync(DTS, 'utf8'), ts.ScriptTarget.Latest, true)
  const declared = source.statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === 'RunOptions')
  assert.ok(declared, 'index.d.ts declares RunOptions')
  const members = declared.members.map((m) => ({
    name: m.name.getText(source),
    optional: m.questionToken !== undefined,
    type: m.type.getText(source),
    doc: (m.jsDoc || []).map((d) => ts.getTextOfJSDocComment(d.comment)).join(' ').replace(/\s+/g, ' '),
  }))
  assert.deepEqual(members.map((m) => m.name), table.map((o) => o.name), STALE)
  for (const [i, option] of table.entries()) {
    const member = members[i]
    assert.ok(member.optional, `${option.name} is optional`)
    assert.equal(member.type, option.type, `${option.name}: ${STALE}`)
    assert.ok(member.doc.endsWith(`Default: ${option.default}.`), `${option.name}'s JSDoc ends with its default (${STALE})`)
  }
})

test('index.d.ts and docs/options.md are what the table makes', () => {
  const dts = fs.readFileSync(DTS, 'utf8')
  assert.equal(dts, withRunOptions(dts, table), `index.d.ts is ${STALE}`)
  assert.ok(fs.existsSync(DOC), `docs/options.md is missing: run \`node scripts/options-doc.mjs\``)
  assert.equal(fs.readFileSync(DOC, 'utf8'), optionsDoc(table), `docs/options.md is ${STALE}`)
})

test('the options JS keeps are those the table marks, with the same kinds', () => {
  const binding = require('../binding.js')
  const kept = table.filter((o) => o.js !== undefined).map((o) => ({ name: o.name, kind: o.js }))
  assert.deepEqual(binding.jsOnlyOptions().map(({ name, kind }) => ({ name, kind })), kept)
})
