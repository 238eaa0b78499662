// This package, streaming: streamWithTools with the workload's tools registered, every part read
// as it comes (for await). Time to first text part: when the first `text-delta` part reaches the loop.
import { performance } from 'node:perf_hooks'
import { loadPackage } from './ours.mjs'

export async function setup(config) {
  const { workload } = config
  const { lib, options, info } = loadPackage(config)
  // A commit measured with --against may be older than streamWithTools: skipped, as ours-mcp.mjs is without registerMcpServer.
  if (typeof lib.streamWithTools !== 'function') return { skip: 'this build of the package has no streamWithTools' }
  return {
    info,
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
