'use strict'
// The answer's schema (`output`) on the JS side. A Standard Schema (zod…) goes to the engine as
// its JSON Schema, which the engine sends and checks the answer against; its own `validate` then
// runs on the checked answer here, so refinements, transforms and defaults hold, and
// `data.output` is the value it gives.

const binding = require('../binding.js')
const { describe, describeThrown } = require('./describe.js')
const { standardSchemaOf, jsonSchemaOf, describeIssues } = require('./standard-schema.js')

/**
 * `options.output` for the engine: `{ json, standard }`, `json` the JSON Schema to send (a JSON
 * Schema as given), `standard` the Standard Schema's props or null; or `{ failed }`, the run's
 * result when a Standard Schema gives no JSON Schema.
 */
function readOutput(output) {
  const standard = standardSchemaOf(output)
  // A function JSON would drop without a word: anything else that is no schema, Rust refuses.
  if (standard === null && typeof output === 'function') {
    return { failed: binding.jsFailure('bad_output', 'must be a JSON Schema object or a Standard Schema with a JSON Schema, got a function') }
  }
  if (standard === null) return { json: output, standard: null }
  try {
    return { json: jsonSchemaOf(output, standard, (why) => new TypeError(why)), standard }
  } catch (e) {
    return { failed: binding.jsFailure('bad_output', String(e.message)) }
  }
}

/**
 * The run's result once a Standard Schema has had its say on `data.output` (the answer the engine
 * parsed and checked): its value, or `output_validation_error` with its issues as `cause` and the
 * answer as `text`. A result without `output` (a refusal, a run waiting for approval) is as it was.
 */
async function checkOutput(result, standard) {
  const data = result.data
  if (standard === null || data === null || data.output === undefined) return result
  let checked
  try {
    checked = await standard.validate(data.output)
    if (checked === null || typeof checked !== 'object') throw new TypeError(`~standard.validate returned ${describe(checked)}`)
  } catch (e) {
    return failed('output_check_threw', describeThrown(e), e, data)
  }
  if (checked.issues) return failed('output_issues', describeIssues(checked.issues), checked.issues, data)
  data.output = checked.value
  return result
}

function failed(problem, detail, cause, data) {
  const out = binding.jsFailure(problem, detail)
  Object.assign(out.error, { cause, text: data.text, toolCalls: data.toolCalls, usage: data.usage })
  return out
}

module.exports = { readOutput, checkOutput }
