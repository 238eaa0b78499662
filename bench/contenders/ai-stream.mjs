// Vercel AI SDK, streaming: streamText with @ai-sdk/anthropic, the same Zod tools as ai.mjs and
// stopWhen: stepCountIs(rounds + 1), every part of `fullStream` read as it comes. Time to first
// text part: when the first `text-delta` part reaches the loop. `toolStreaming: false`: by default
// @ai-sdk/anthropic adds `eager_input_streaming: true` to every tool of a streamed request (fine-grained
// tool streaming), which the strict stand-in refuses and which the other contenders do not ask for;
// off, the tools go out as they do for everyone else.
import { streamText, stepCountIs } from 'ai'
import { performance } from 'node:perf_hooks'
import { MAX_TOKENS } from '../workloads.mjs'
import { modelAndTools } from './ai.mjs'

export async function setup(config) {
  const { workload } = config
  const { model, tools } = modelAndTools(config)
  return {
    info: {},
    async run() {
      let firstTextAt = null
      let streamed = ''
      let stepText = ''
      let text = ''
      let calls = 0
      const result = streamText({
        model,
        prompt: workload.prompt,
        tools,
        maxOutputTokens: MAX_TOKENS,
        stopWhen: stepCountIs(workload.rounds + 1),
        providerOptions: { anthropic: { toolStreaming: false } },
        onError: () => {}, // errors are parts of fullStream, checked below
      })
      for await (const part of result.fullStream) {
        switch (part.type) {
          case 'start-step':
            stepText = ''
            break
          case 'text-delta':
            firstTextAt ??= performance.now()
            streamed += part.text
            stepText += part.text
            break
          case 'tool-call':
            calls++
            break
          case 'finish-step':
            text = stepText
            break
          case 'tool-error':
            throw new Error(`tool-error: ${part.error?.message ?? part.error}`)
          case 'error':
            throw part.error instanceof Error ? part.error : new Error(String(part.error))
        }
      }
      return { text, calls, streamed, firstTextAt }
    },
  }
}
