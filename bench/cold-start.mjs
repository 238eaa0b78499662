// `npm run bench:cold`: how long a fresh process takes to load this package and register its
// first tool, against how long it takes to load the peers (`@anthropic-ai/sdk`, `ai`), in fresh
// processes taking turns. Each child times only the load (not Node's own start), with
// performance.now(). Prints the median of each and the ratios; asserts nothing.
//
//   npm run bench:cold [-- --runs N]     (N children each, default 21)

import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './format.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')
const runsAt = process.argv.indexOf('--runs')
const runs = runsAt >= 0 ? Number(process.argv[runsAt + 1]) : 21
if (!Number.isInteger(runs) || runs < 1) {
  console.error('bench:cold: --runs takes a whole number ≥ 1')
  process.exit(2)
}

const tool = JSON.stringify({ definition: { name: 'get_order_status', description: 'Looks up an order.', input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } }, execute: null })
/** What each contender's child runs: load, (for ours) register one tool, print the elapsed ms. */
const SCRIPTS = {
  ours: `const t0 = performance.now(); const m = require(${JSON.stringify(root)}); const tool = ${tool}; tool.execute = () => 'ok'; m.registerTool(tool); process.stdout.write(String(performance.now() - t0))`,
  sdk: `const t0 = performance.now(); require('@anthropic-ai/sdk'); process.stdout.write(String(performance.now() - t0))`,
  ai: `const t0 = performance.now(); require('ai'); process.stdout.write(String(performance.now() - t0))`,
}

const profile = execFileSync(process.execPath, ['-p', `require(${JSON.stringify(path.join(root, 'binding.js'))}).buildProfile()`], { encoding: 'utf8' }).trim()
if (profile !== 'release') console.warn(`bench:cold: the addon is a ${profile} build: these figures mean nothing`)

const times = Object.fromEntries(Object.keys(SCRIPTS).map((name) => [name, []]))
for (let i = 0; i < runs; i++) {
  for (const [name, script] of Object.entries(SCRIPTS)) {
    // From bench/, so the peers resolve from bench/node_modules.
    const out = execFileSync(process.execPath, ['-e', script], { cwd: here, encoding: 'utf8', env: { ...process.env, ANTHROPIC_API_KEY: '' } })
    times[name].push(Number(out))
  }
}
const m = Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, median(xs)]))
console.log(`cold start, median of ${runs} fresh processes each (taking turns):`)
console.log(`  anthropic-tool-calling (require + first registerTool)  ${m.ours.toFixed(2)} ms`)
console.log(`  @anthropic-ai/sdk (require)                            ${m.sdk.toFixed(2)} ms   ours ÷ sdk ${(m.ours / m.sdk).toFixed(3)}×`)
console.log(`  ai (require)                                           ${m.ai.toFixed(2)} ms   ours ÷ ai ${(m.ours / m.ai).toFixed(3)}×`)
