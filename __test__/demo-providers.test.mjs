// `npm run demo -- --provider …`: the demo's conversation against the stand-in's door for each
// cloud platform (AWS-signed on Bedrock and Claude Platform on AWS, a Foundry key, a Vertex token
// from the stand-in's token endpoint), in a child process as a person would run it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const demo = fileURLToPath(new URL('../examples/demo.mjs', import.meta.url))
const run = promisify(execFile)

for (const provider of ['bedrock', 'vertex', 'foundry', 'aws']) {
  test(`npm run demo -- --provider ${provider}`, async () => {
    const env = { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' }
    const { stdout } = await run(process.execPath, [demo, '--provider', provider], { env, timeout: 60_000 })
    assert.match(stdout, new RegExp(`--provider ${provider}: running against the stand-in's ${provider} door`))
    assert.match(stdout, /answer: Order #4821 is shipped/)
    assert.match(stdout, /RET-1234/)
  })
}

test('npm run demo -- --provider refuses a platform it does not know', async () => {
  await assert.rejects(run(process.execPath, [demo, '--provider', 'azure'], { timeout: 60_000 }), /--provider takes one of bedrock, vertex, foundry, aws/)
})
