// Vercel AI SDK on Amazon Bedrock: generateText as ai.mjs runs it (tools with Zod input schemas,
// stopWhen: stepCountIs(rounds + 1)), with the Anthropic provider of @ai-sdk/amazon-bedrock
// (`createBedrockAnthropic` of `@ai-sdk/amazon-bedrock/anthropic`), which sends the Messages body to
// InvokeModel (/model/{model}/invoke, `anthropic_version` in the body) rather than the Converse
// API; signed (SigV4, aws4fetch) with the bench's static AWS keys, at the stand-in's Bedrock door.
// Nothing here loads the first-party @ai-sdk/anthropic of ai.mjs: the provider brings its own.
import { generateText, tool, stepCountIs } from 'ai'
import { createBedrockAnthropic } from '@ai-sdk/amazon-bedrock/anthropic'
import * as z from 'zod'
import { BEDROCK, MAX_TOKENS, executeTool } from '../workloads.mjs'
import { zodSchemas } from '../peer-tools.mjs'

globalThis.AI_SDK_LOG_WARNINGS = false

export async function setup({ url, workload }) {
  const model = createBedrockAnthropic({
    region: BEDROCK.region,
    accessKeyId: BEDROCK.accessKeyId,
    secretAccessKey: BEDROCK.secretAccessKey,
    baseURL: url,
  })(BEDROCK.model)
  const schemas = zodSchemas(z, workload)
  const tools = {}
  for (const t of workload.tools) {
    tools[t.name] = tool({ description: t.description, inputSchema: schemas[t.name], execute: (input) => executeTool(t.name, input) })
  }
  return {
    info: {},
    async run() {
      const result = await generateText({ model, prompt: workload.prompt, tools, maxOutputTokens: MAX_TOKENS, stopWhen: stepCountIs(workload.rounds + 1) })
      let calls = 0
      for (const step of result.steps) calls += step.toolCalls.length
      return { text: result.text, calls }
    },
  }
}
