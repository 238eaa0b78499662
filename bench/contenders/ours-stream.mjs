// This package, streaming: streamWithTools with the workload's tools registered, every part read
// as it comes (for await). Time to first text part: when the first `text-delta` part reaches the loop.
import { createRequire } from 'node:module'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { MODEL, MAX_TOKENS, executeTool } from '../workloads.mjs'

const require = createRequire(import.meta.url)

export async function setup({ url, apiKey, workload }) {
  // run.mjs copies the package's JS and addon to BENCH_PACKAGE_DIR (see there); by hand, the tree's.
  const dir = process.env.BENCH_PACKAGE_DIR ?? new URL('../..', import.meta.url).pathname
  const binding = require(path.join(dir, 'binding.js'))
  const lib = require(path.join(dir, 'index.js'))
  if (typeof lib.streamWithTools !== 'function') throw new Error('this build of the package has no streamWithTools')
  for (const definition of workload.tools) {
    lib.registerTool({ definition, execute: (input) => executeTool(definition.name, input) })
  }
  const options = { apiKey, baseURL: url, model: MODEL, maxTokens: MAX_TOKENS, maxToolIterations: workload.rounds }
  return {
    info: { buildProfile: binding.buildProfile(), addon: process.env.NAPI_RS_NATIVE_LIBRARY_PATH ?? null, dir },
    async run() {
      let firstTextAt = null
      let streamed = ''
      let calls = 0
      let result = null
      for await (const part of lib.streamWithTools(workload.prompt, options)) {
        switch (part.type) {
          case 'text-delta':
            firstTextAt ??= performance.now()
            streamed += part.text
            break
          case 'tool-call':
            calls++
            break
          case 'finish':
            result = part.result
            break
        }
      }
      if (result === null) throw new Error('the stream ended without its finish part')
      if (result.error) throw new Error(`${result.error.code}: ${result.error.message}`)
      if (result.data.toolCalls.length !== calls) throw new Error(`${calls} tool-call parts, ${result.data.toolCalls.length} tool calls in the result`)
      return { text: result.data.text, calls, streamed, firstTextAt }
    },
  }
}
