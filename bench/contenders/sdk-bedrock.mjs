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
import { BEDROCK } from '../workloads.mjs'
import { toolRunnerRun, zodRunnerTools } from '../peer-tools.mjs'

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
  const tools = zodRunnerTools(betaZodTool, z, workload)
  return { info: {}, run: toolRunnerRun(client, tools, workload, BEDROCK.model) }
}
