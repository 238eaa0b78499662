// @anthropic-ai/bedrock-sdk: `AnthropicBedrock` with the bench's static AWS keys, the region and
// `baseURL` at the stand-in's Bedrock door, then the tool runner to the end as sdk.mjs runs it
// (betaZodTool tools). The client signs each request (SigV4) and sends it to /model/{model}/invoke
// with `anthropic_version` in the body; Bedrock has no Threads, so each request carries the history.
//
// Nothing here loads the @anthropic-ai/sdk 1.14.0 of the other cells: the Bedrock client runs on
// the SDK it depends on (1.2.1 needs ≥ 1.16), and the tool helper is taken from that one, as an
// app that installs the Bedrock client alone has it.
import { createRequire } from 'node:module'
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk'
import * as z from 'zod'
import { BEDROCK, MAX_TOKENS, asText, executeTool, zodSchemas } from '../workloads.mjs'

const require = createRequire(import.meta.url)
const { betaZodTool } = createRequire(require.resolve('@anthropic-ai/bedrock-sdk'))('@anthropic-ai/sdk/helpers/beta/zod')

export async function setup({ url, workload }) {
  const client = new AnthropicBedrock({
    awsAccessKey: BEDROCK.accessKeyId,
    awsSecretKey: BEDROCK.secretAccessKey,
    awsRegion: BEDROCK.region,
    // null: never a Bedrock API key from AWS_BEARER_TOKEN_BEDROCK, so every request is signed.
    apiKey: null,
    baseURL: url,
  })
  const schemas = zodSchemas(z, workload)
  const tools = workload.tools.map((t) =>
    betaZodTool({
      name: t.name,
      description: t.description,
      inputSchema: schemas[t.name],
      run: async (input) => asText(await executeTool(t.name, input)),
    }),
  )
  return {
    info: {},
    // The runner does not say how many calls it made: the tool count is checked where the tools run.
    async run() {
      const final = await client.beta.messages.toolRunner({
        model: BEDROCK.model,
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
    },
  }
}
