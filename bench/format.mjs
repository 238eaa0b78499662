// How a figure and a ratio are printed, in every table of the bench (no other module needed, so
// the tests can import the tables' pure parts without the command line being read).

/** A figure with `digits` decimals, or a dash when it was not measured. */
export function fix(v, digits) {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits)
}

export function fmtRatio(r) {
  return r === null || r === undefined || !Number.isFinite(r) ? '–' : `${r.toFixed(2)}×`
}
