// @anthropic-ai/sdk: client.beta.messages.toolRunner with betaZodTool tools, as users get it:
// over the API's Threads (its default), sending only the new turn each round.
import Anthropic from '@anthropic-ai/sdk'
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod'
import * as z from 'zod'
import { toolRunnerRun, zodRunnerTools } from '../peer-tools.mjs'

export async function setup({ url, apiKey, workload }) {
  const client = new Anthropic({ apiKey, baseURL: url })
  const tools = zodRunnerTools(betaZodTool, z, workload)
  return { info: { version: Anthropic.VERSION ?? null }, run: toolRunnerRun(client, tools, workload) }
}
