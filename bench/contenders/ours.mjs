// This package: runWithTools with the workload's tools registered. bench/preconditions.mjs points
// binding.js at a copy of the addon it checked (NAPI_RS_NATIVE_LIBRARY_PATH), next to a copy of the
// package's JS (BENCH_PACKAGE_DIR); the child reports what it loaded.
import { createRequire } from 'node:module'
import path from 'node:path'
import { MODEL, MAX_TOKENS, executeTool } from '../workloads.mjs'

const require = createRequire(import.meta.url)

/**
 * The package as its contenders load it: its module, the run options, and what the child reports
 * it loaded; no tool registered yet (ours-mcp.mjs gets its tools from the MCP server).
 */
export function openPackage({ url, apiKey, workload }) {
  // bench/preconditions.mjs copies the package's JS and addon to BENCH_PACKAGE_DIR (see there); by hand, the tree's.
  const dir = process.env.BENCH_PACKAGE_DIR ?? new URL('../..', import.meta.url).pathname
  const binding = require(path.join(dir, 'binding.js'))
  const lib = require(path.join(dir, 'index.js'))
  const options = { apiKey, baseURL: url, model: MODEL, maxTokens: MAX_TOKENS, maxToolIterations: workload.rounds }
  // A commit measured with --against may be older than buildProfile(): its addon was built release by the bench.
  const info = { buildProfile: typeof binding.buildProfile === 'function' ? binding.buildProfile() : null, addon: process.env.NAPI_RS_NATIVE_LIBRARY_PATH ?? null, dir }
  return { lib, options, info }
}

/** The package as this contender and ours-stream.mjs load it: opened, with the workload's tools registered. */
export function loadPackage(config) {
  const opened = openPackage(config)
  for (const definition of config.workload.tools) {
    opened.lib.registerTool({ definition, execute: (input) => executeTool(definition.name, input) })
  }
  return opened
}

/** One run: runWithTools on the workload's prompt, as this contender and ours-mcp.mjs do it. */
export function runner(lib, options, workload) {
  return async () => {
    const { data, error } = await lib.runWithTools(workload.prompt, options)
    if (error) throw new Error(`${error.code}: ${error.message}`)
    return { text: data.text, calls: data.toolCalls.length }
  }
}

export async function setup(config) {
  const { lib, options, info } = loadPackage(config)
  return { info, run: runner(lib, options, config.workload) }
}
