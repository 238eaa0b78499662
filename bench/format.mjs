// How figures are summed up and printed, in every table of the bench (no other module needed, so
// the tests can import the tables' pure parts without the command line being read).

/** The median of the finite numbers in `xs` (the mean of the middle two for an even count); null for none. */
export function median(xs) {
  const s = xs.filter((x) => x !== null && x !== undefined && Number.isFinite(x)).sort((a, b) => a - b)
  if (s.length === 0) return null
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** A figure with `digits` decimals, or a dash when it was not measured. */
export function fix(v, digits) {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits)
}

export function fmtRatio(r) {
  return r === null || r === undefined || !Number.isFinite(r) ? '–' : `${r.toFixed(2)}×`
}
