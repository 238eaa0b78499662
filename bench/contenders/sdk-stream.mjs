// @anthropic-ai/sdk, streaming: client.messages.stream in a hand-written tool loop (the SDK's tool
// runner does not stream every round to the caller): read each reply's events as they come, run the
// tool_use blocks of the final message (inputs checked with the same Zod schemas as sdk.mjs),
// send the results, until a reply that is not a tool_use. Time to first text part: when the first
// `content_block_delta` / `text_delta` event reaches the loop.
import Anthropic from '@anthropic-ai/sdk'
import { performance } from 'node:perf_hooks'
import * as z from 'zod'
import { MODEL, MAX_TOKENS, executeTool, asText } from '../workloads.mjs'
import { zodSchemas } from '../peer-tools.mjs'

export async function setup({ url, apiKey, workload }) {
  const client = new Anthropic({ apiKey, baseURL: url })
  const schemas = zodSchemas(z, workload)
  return {
    info: { version: Anthropic.VERSION ?? null },
    async run() {
      let firstTextAt = null
      let streamed = ''
      let calls = 0
      const messages = [{ role: 'user', content: workload.prompt }]
      for (let i = 0; i <= workload.rounds; i++) {
        const stream = client.messages.stream({ model: MODEL, max_tokens: MAX_TOKENS, tools: workload.tools, messages })
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
            firstTextAt ??= performance.now()
            streamed += event.delta.text
          }
        }
        const message = await stream.finalMessage()
        messages.push({ role: 'assistant', content: message.content })
        if (message.stop_reason !== 'tool_use') {
          const text = message.content
            .filter((b) => b.type === 'text')
            .map((b) => b.text)
            .join('')
          return { text, calls, streamed, firstTextAt }
        }
        const uses = message.content.filter((b) => b.type === 'tool_use')
        calls += uses.length
        const results = await Promise.all(
          uses.map(async (u) => {
            const schema = schemas[u.name]
            if (!schema) return { type: 'tool_result', tool_use_id: u.id, content: `Unknown tool ${u.name}`, is_error: true }
            const input = schema.safeParse(u.input)
            if (!input.success) return { type: 'tool_result', tool_use_id: u.id, content: `Invalid input: ${input.error.message}`, is_error: true }
            try {
              return { type: 'tool_result', tool_use_id: u.id, content: asText(await executeTool(u.name, input.data)) }
            } catch (e) {
              return { type: 'tool_result', tool_use_id: u.id, content: String(e?.message ?? e), is_error: true }
            }
          }),
        )
        messages.push({ role: 'user', content: results })
      }
      throw new Error('sdk-stream: the conversation did not end')
    },
  }
}
