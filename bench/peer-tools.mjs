// The peers' side of the workloads: the same tools as Zod schemas (the peers want Zod), and the
// official SDK's tool runner as the `sdk` contenders run it. Kept apart from bench/workloads.mjs,
// which the stand-in and our own contenders load too.

import { MAX_TOKENS, MODEL, WINDOWS, asText, executeTool } from './workloads.mjs'

/**
 * The Zod schemas of a workload's tools (the peers want Zod), equivalent to `input_schema`.
 * `z` is passed in: zod is a dependency of bench/ only.
 */
export function zodSchemas(z, workload) {
  if (workload.tools.some((t) => t.name === 'get_order_status')) {
    return { get_order_status: z.object({ orderId: z.string().describe('The order number, digits only') }).strict() }
  }
  return {
    search_docs: z
      .object({
        query: z.string().min(1).describe('What to search for'),
        limit: z.number().int().min(1).max(50).describe('How many hits to return'),
      })
      .strict(),
    fetch_record: z.object({ id: z.string().regex(/^rec-[0-9]{4}$/).describe('The record ID, like rec-0001') }).strict(),
    get_metrics: z
      .object({
        service: z.string().describe('The service name'),
        window: z.enum(WINDOWS).describe('The time window'),
      })
      .strict(),
  }
}

/**
 * The official SDK's tool runner as the `sdk` contenders run it: the workload's tools as
 * `betaZodTool`s (the helper of whichever SDK the client runs on), and one run to the end. The
 * runner does not say how many calls it made: the tool count is checked where the tools run.
 */
export function zodRunnerTools(betaZodTool, z, workload) {
  const schemas = zodSchemas(z, workload)
  return workload.tools.map((t) =>
    betaZodTool({
      name: t.name,
      description: t.description,
      inputSchema: schemas[t.name],
      run: async (input) => asText(await executeTool(t.name, input)),
    }),
  )
}

/** One run of `client`'s tool runner with `tools` to the end, for `model`. */
export function toolRunnerRun(client, tools, workload, model = MODEL) {
  return async () => {
    const final = await client.beta.messages.toolRunner({
      model,
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
