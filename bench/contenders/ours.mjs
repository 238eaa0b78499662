// This package: runWithTools with the workload's tools registered. run.mjs points binding.js at a
// copy of the addon it checked (NAPI_RS_NATIVE_LIBRARY_PATH); the child reports what it loaded.
import { createRequire } from 'node:module'
import { MODEL, MAX_TOKENS, executeTool } from '../workloads.mjs'

const require = createRequire(import.meta.url)

export async function setup({ url, apiKey, workload }) {
  const binding = require('../../binding.js')
  const lib = require('../../index.js')
  for (const definition of workload.tools) {
    lib.registerTool({ definition, execute: (input) => executeTool(definition.name, input) })
  }
  const options = { apiKey, baseURL: url, model: MODEL, maxTokens: MAX_TOKENS, maxToolIterations: workload.rounds }
  return {
    info: { buildProfile: binding.buildProfile(), addon: process.env.NAPI_RS_NATIVE_LIBRARY_PATH ?? null },
    async run() {
      const { data, error } = await lib.runWithTools(workload.prompt, options)
      if (error) throw new Error(`${error.code}: ${error.message}`)
      return { text: data.text, calls: data.toolCalls.length }
    },
  }
}
