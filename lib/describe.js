'use strict'
// How error messages name the values they were given and the values a tool threw.

/**
 * A value as an error message names what it got instead: `null`, `undefined`, `an array`,
 * `an object`, or its type and value (`number 3`, `string abc`). With `quote`, a string is shown
 * in JSON quotes (`string "abc"`) and every other value as its JSON: fromUIMessages names pieces of
 * a browser's request, where the quotes show where the text begins and ends.
 */
function describe(value, { quote = false } = {}) {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  // Quoted, a value is shown as its JSON, as fromUIMessages has always named it (a function or a
  // symbol has none, NaN's is null); a bigint, which JSON cannot write, as its digits.
  if (quote) return `${typeof value} ${typeof value === 'bigint' ? String(value) : JSON.stringify(value)}`
  return `${typeof value} ${String(value)}`.trim()
}

/** The developer's view of anything thrown: an Error's name and message, a string as it is. */
function describeThrown(thrown) {
  if (thrown instanceof Error) return thrown.name && thrown.name !== 'Error' ? `${thrown.name}: ${thrown.message}` : thrown.message || String(thrown)
  if (typeof thrown === 'string') return thrown
  if (thrown === undefined) return 'it threw undefined'
  try {
    return `it threw ${JSON.stringify(thrown)}`
  } catch {
    return `it threw ${String(thrown)}`
  }
}

module.exports = { describe, describeThrown }
