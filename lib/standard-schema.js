'use strict'
// Standard Schemas (standardschema.dev: zod, valibot, arktype…) as tool input schemas and as the
// answer's schema: finding one, turning it into the JSON Schema the API and the engine get, and
// wording its issues as the engine words a JSON Schema failure.

const { describe } = require('./describe.js')

/** The `~standard` props of a Standard Schema (standardschema.dev), else null. */
function standardSchemaOf(schema) {
  if (schema === null || (typeof schema !== 'object' && typeof schema !== 'function')) return null
  const props = schema['~standard']
  return props !== null && typeof props === 'object' && typeof props.validate === 'function' ? props : null
}

/**
 * The JSON Schema of a Standard Schema's *input* (what the model must send): through
 * `~standard.jsonSchema` (zod ≥ 4.2, arktype, valibot's toStandardJsonSchema), else, for zod
 * 4.0–4.1, through `z.toJSONSchema` of the zod the application installed (an optional peer).
 * The input side, because the model writes what the schema then parses: a field with a default
 * may be left out, a transformed field has the type it takes in. `fail(why)` makes the error
 * thrown, `why` being the end of a sentence that names the schema.
 */
function jsonSchemaOf(schema, standard, fail) {
  let converted
  if (standard.jsonSchema !== null && typeof standard.jsonSchema === 'object' && typeof standard.jsonSchema.input === 'function') {
    try {
      converted = standard.jsonSchema.input({ target: 'draft-2020-12' })
    } catch (e) {
      throw fail(`cannot be turned into a JSON Schema (${standard.vendor}: ${e && e.message}); use types that JSON can carry`)
    }
  } else if (standard.vendor === 'zod') {
    if (schema._zod === undefined) {
      throw fail('is a zod 3 schema, which gives no JSON Schema; write it with zod 4 (import { z } from "zod" with zod ≥ 4.2)')
    }
    const zod = optionalZod()
    if (!zod) throw fail('is a zod schema without ~standard.jsonSchema (zod < 4.2) and zod\'s toJSONSchema cannot be loaded; install zod ≥ 4.2')
    try {
      converted = zod.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' })
    } catch (e) {
      throw fail(`cannot be turned into a JSON Schema (zod: ${e && e.message}); use types that JSON can carry`)
    }
  } else {
    throw fail(
      `is a Standard Schema (${standard.vendor}) that gives no JSON Schema (no ~standard.jsonSchema); ` +
        'use one that does (zod ≥ 4.2, arktype, valibot through toStandardJsonSchema) or a JSON Schema object',
    )
  }
  if (converted === null || typeof converted !== 'object' || Array.isArray(converted)) {
    throw fail(`did not convert: its JSON Schema came out as ${describe(converted)}, not an object`)
  }
  return converted
}

/** The application's zod 4 (`zod`, or `zod/v4` of zod 3.25), if it has one. */
function optionalZod() {
  for (const id of ['zod', 'zod/v4']) {
    try {
      const zod = require(id)
      if (typeof zod.toJSONSchema === 'function') return zod
    } catch {}
  }
  return null
}

const MAX_LISTED_ISSUES = 3

/** A Standard Schema's issues as the engine words JSON Schema errors: `items[0].name: reason`. */
function describeIssues(issues) {
  const lines = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
    let field = ''
    for (const seg of issue.path || []) {
      const key = seg !== null && typeof seg === 'object' ? seg.key : seg
      // An index is a number; a key that looks like one ("2024" of a record) is still a key.
      if (typeof key === 'number') field += `[${String(key)}]`
      else field += (field ? '.' : '') + String(key)
    }
    const message = oneLine(String(issue.message || 'invalid'))
    return `${field || '(root)'}: ${message}`
  })
  if (issues.length > lines.length) lines.push(`(and ${issues.length - lines.length} more)`)
  return lines.length > 0 ? lines.join('\n') : '(root): the input was refused by its schema'
}

/**
 * `text` with each run of whitespace that holds a line break turned into one space — what
 * replacing the regex `\s*\n\s*` (global) with ' ' gives — in linear time. The regex tries every
 * start inside a long run of whitespace without a newline and scans to its end each time
 * (quadratic), and an issue message may quote the model's input. `trim` removes the same
 * characters as `\s` matches.
 */
function oneLine(text) {
  if (!text.includes('\n')) return text
  const pieces = text.split('\n')
  let out = pieces[0].trimEnd()
  // Whether the run of whitespace around the last newline still waits for its space.
  let open = false
  for (let i = 1; i < pieces.length; i++) {
    const piece = i < pieces.length - 1 ? pieces[i].trim() : pieces[i].trimStart()
    open = true
    if (piece !== '') {
      out += ` ${piece}`
      open = false
    }
  }
  return open ? `${out} ` : out
}

module.exports = { standardSchemaOf, jsonSchemaOf, describeIssues }
