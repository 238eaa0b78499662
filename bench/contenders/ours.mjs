// This package: runWithTools with the workload's tools registered (the release addon; run.mjs checks).
import { createRequire } from 'node:module'
import { statSync } from 'node:fs'
import { MODEL, MAX_TOKENS, executeTool } from '../workloads.mjs'

const require = createRequire(import.meta.url)

export async function setup({ url, apiKey, workload }) {
  const binding = require('../../binding.js')
  const lib = require('../../index.js')
  for (const definition of workload.tools) {
    lib.registerTool({ definition, execute: (input) => executeTool(definition.name, input) })
  }
  const options = { apiKey, baseURL: url, model: MODEL, maxTokens: MAX_TOKENS, maxToolIterations: workload.rounds }
  const addon = require.resolve('../../anthropic-tool-calling.linux-x64-gnu.node')
  return {
    info: { buildProfile: binding.buildProfile(), addonMtimeMs: statSync(addon).mtimeMs },
    async run() {
      const { data, error } = await lib.runWithTools(workload.prompt, options)
      if (error) throw new Error(`${error.code}: ${error.message}`)
      return { text: data.text, calls: data.toolCalls.length }
    },
  }
}
