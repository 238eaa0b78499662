// @anthropic-ai/sdk: client.beta.messages.toolRunner with betaZodTool tools, as users get it:
// over the API's Threads (its default), sending only the new turn each round.
import Anthropic from '@anthropic-ai/sdk'
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod'
import * as z from 'zod'
import { MODEL, MAX_TOKENS, executeTool, asText, zodSchemas } from '../workloads.mjs'

export async function setup({ url, apiKey, workload }) {
  const client = new Anthropic({ apiKey, baseURL: url })
  const schemas = zodSchemas(z, workload)
  const tools = workload.tools.map((t) =>
    betaZodTool({
      name: t.name,
      description: t.description,
      inputSchema: schemas[t.name],
      run: async (input) => asText(await executeTool(t.name, input)),
    }),
  )
  return { info: { version: Anthropic.VERSION ?? null }, run: runner(client, tools, workload) }
}

/**
 * One run: the tool runner to the end, as this contender and sdk-mcp.mjs do it. The runner does
 * not say how many calls it made: the tool count is checked where the tools run.
 */
export function runner(client, tools, workload) {
  return async () => {
    const final = await client.beta.messages.toolRunner({
      model: MODEL,
      max_tokens: MAX_TOKENS,
      messages: [{ role: 'user', content: workload.prompt }],
      tools,
      max_iterations: workload.rounds + 1,
    })
    const text = final.content
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('')
    return { text, calls: undefined }
  }
}
