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
  try {
    const standard = standardSchemaOf(output)
    // A function JSON would drop without a word: anything else that is no schema, Rust refuses.
    if (standard === null && typeof output === 'function') {
      return { failed: binding.jsFailure('bad_output', 'must be a JSON Schema object or a Standard Schema with a JSON Schema, got a function') }
    }
    if (standard === null) return { json: output, standard: null }
    return { json: jsonSchemaOf(output, standard, (why) => Object.assign(new TypeError(why), { schemaProblem: true })), standard }
  } catch (e) {
    // A conversion that failed says why; a getter or a Proxy that throws is the schema's fault too.
    const why = e !== null && typeof e === 'object' && e.schemaProblem === true ? e.message : `could not be read as a schema (${describeThrown(e)})`
    return { failed: binding.jsFailure('bad_output', why) }
  }
}

/**
 * The run's result once a Standard Schema has had its say on `data.output` (the answer the engine
 * parsed and checked): its value, or `output_validation_error` with its issues as `cause` and the
 * answer as `text`. A result without `output` (a refusal, a run waiting for approval) is as it was.
 */
async function checkOutput(result, standard, signal) {
  const data = result.data
  if (standard === null || data === null || data.output === undefined) return result
  let checked
  let stop = null
  try {
    const validating = Promise.resolve().then(() => standard.validate(data.output))
    if (signal) {
      // `signal` still ends the run while a validate hangs: the run never outlives it.
      const aborted = new Promise((resolve) => {
        stop = () => resolve(ABORTED)
        if (signal.aborted) stop()
        else signal.addEventListener('abort', stop, { once: true })
      })
      checked = await Promise.race([validating, aborted])
    } else {
      checked = await validating
    }
    if (checked === ABORTED) return failed('aborted', '', undefined, data)
    if (checked === null || typeof checked !== 'object') throw new TypeError(`~standard.validate returned ${describe(checked)}`)
  } catch (e) {
    return failed('output_check_threw', describeThrown(e), e, data)
  } finally {
    if (stop !== null) signal.removeEventListener('abort', stop)
  }
  if (checked.issues) return failed('output_issues', describeIssues(checked.issues), checked.issues, data)
  data.output = checked.value
  return result
}

const ABORTED = Symbol('aborted')

/** The run's failure: `problem` worded by Rust, with what the run did (and the answer, for a check that failed). */
function failed(problem, detail, cause, data) {
  const out = binding.jsFailure(problem, detail)
  if (problem === 'aborted') Object.assign(out.error, { toolCalls: data.toolCalls })
  else Object.assign(out.error, { cause, text: data.text, toolCalls: data.toolCalls, usage: data.usage })
  return out
}

module.exports = { readOutput, checkOutput }
