// Vercel AI SDK: generateText with @ai-sdk/anthropic, tools with Zod input schemas, and
// stopWhen: stepCountIs(rounds + 1) (one step per model request).
import { generateText, tool, stepCountIs } from 'ai'
import { createAnthropic } from '@ai-sdk/anthropic'
import * as z from 'zod'
import { MODEL, MAX_TOKENS, executeTool } from '../workloads.mjs'
import { zodSchemas } from '../peer-tools.mjs'

globalThis.AI_SDK_LOG_WARNINGS = false

/** The model on the stand-in, as every AI SDK contender uses it. */
export const modelOf = ({ url, apiKey }) => createAnthropic({ apiKey, baseURL: `${url}/v1` })(MODEL)

/** The model and the workload's tools (Zod input schemas), as this contender and ai-stream.mjs use them. */
export function modelAndTools(config) {
  const { workload } = config
  const schemas = zodSchemas(z, workload)
  const tools = {}
  for (const t of workload.tools) {
    tools[t.name] = tool({
      description: t.description,
      inputSchema: schemas[t.name],
      execute: (input) => executeTool(t.name, input),
    })
  }
  return { model: modelOf(config), tools }
}

/** One run: generateText with one step per model request, as this contender and ai-mcp.mjs do it. */
export function runner(model, tools, workload) {
  return async () => {
    const result = await generateText({
      model,
      prompt: workload.prompt,
      tools,
      maxOutputTokens: MAX_TOKENS,
      stopWhen: stepCountIs(workload.rounds + 1),
    })
    let calls = 0
    for (const step of result.steps) calls += step.toolCalls.length
    return { text: result.text, calls }
  }
}

export async function setup(config) {
  const { model, tools } = modelAndTools(config)
  return { info: {}, run: runner(model, tools, config.workload) }
}
