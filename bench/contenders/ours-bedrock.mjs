// This package on Amazon Bedrock: runWithTools with `provider: { type: 'bedrock', region,
// credentials }` and `baseURL` at the stand-in's Bedrock door, the workload's tools registered as
// ours.mjs registers them. The credentials are the bench's static keys, so the engine signs each
// request (SigV4) without looking for any in the environment; no `apiKey` (on Bedrock it would be
// a Bedrock API key, sent as a bearer token, which the bench's door refuses).
import { BEDROCK } from '../workloads.mjs'
import { loadPackage, runner } from './ours.mjs'

export async function setup(config) {
  const { lib, options, info } = loadPackage(config)
  const { apiKey: _firstParty, ...rest } = options
  const onBedrock = {
    ...rest,
    provider: { type: 'bedrock', region: BEDROCK.region, credentials: { accessKeyId: BEDROCK.accessKeyId, secretAccessKey: BEDROCK.secretAccessKey } },
    model: BEDROCK.model,
  }
  return { info, run: runner(lib, onBedrock, config.workload) }
}
