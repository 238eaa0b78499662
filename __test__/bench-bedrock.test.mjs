// The bench's bedrock cell (`npm run bench -- --workloads bedrock`), checked the way it checks its
// contenders, so that a wrong conversation fails it: bench/server.mjs (its process, as the driver
// starts it) plays Bedrock's door on a port of its own and scripts the workload's conversation,
// answering `MISMATCH: …` to a conversation that is not the workload's; bench/child.mjs checks
// the final text, the tool count and each tool run. Here, with this package and with the Bedrock
// SDK's tool runner (the root's @anthropic-ai/bedrock-sdk, the one bench/package.json pins too):
// the right conversation passes, a wrong tool output or the wrong door does not, and an unsigned
// or key-only request never reaches the script. The AI SDK's Bedrock provider is in bench/
// only; the smoke run (`npm run bench -- --quick`, in CI) checks its conversations.
import { test, after, before } from 'node:test'
import assert from 'node:assert/strict'
import { fork, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk'
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod'
import * as z from 'zod'
import { registerTool, runWithTools } from '../index.mjs'
import { API_KEY, BEDROCK, WORKLOADS, toolOutput } from '../bench/workloads.mjs'

const bench = (file) => fileURLToPath(new URL(`../bench/${file}`, import.meta.url))
const W = WORKLOADS.bedrock
const ORDER = WORKLOADS.order
const RIGHT = toolOutput('get_order_status', { orderId: '4821' })
const WRONG = { ...RIGHT, status: 'lost' }
const KEYS = { accessKeyId: BEDROCK.accessKeyId, secretAccessKey: BEDROCK.secretAccessKey }

/** bench/server.mjs in its own process, as bench/start-server.mjs starts it: its URLs and its counters. */
let server
let urls
let nextId = 0
before(async () => {
  server = fork(bench('server.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  urls = await new Promise((resolve, reject) => {
    server.once('message', resolve)
    server.once('exit', (code) => reject(new Error(`bench/server.mjs exited (${code})`)))
  })
  assert.equal(urls.type, 'ready')
  assert.match(urls.bedrockUrl, /^http:\/\/127\.0\.0\.1:\d+$/)
  assert.notEqual(urls.bedrockUrl, urls.url)
})
after(() => server?.kill())

function stats() {
  const id = nextId++
  return new Promise((resolve) => {
    const on = (msg) => {
      if (msg?.type !== 'stats' || msg.id !== id) return
      server.off('message', on)
      resolve(msg.stats)
    }
    server.on('message', on)
    server.send({ type: 'stats', id })
  })
}

/** What a few runs did on the server's side: requests, mismatches, statuses other than 200, the last mismatch or refusal. */
async function counted(fn) {
  const a = await stats()
  const value = await fn()
  const b = await stats()
  const non200 = Object.entries(b.statuses).filter(([code, n]) => code !== '200' && n > (a.statuses[code] ?? 0)).map(([code]) => code)
  return { value, requests: b.requests - a.requests, mismatches: b.mismatches - a.mismatches, non200, lastMismatch: b.lastMismatch, lastRefusal: b.lastRefusal }
}

// This package's tool, answering right or wrong as the test says (registered once: the registry is the process's).
let output = RIGHT
registerTool({ definition: W.tools[0], execute: async () => output })
const onBedrock = {
  provider: { type: 'bedrock', region: BEDROCK.region, credentials: KEYS },
  model: BEDROCK.model,
  maxToolIterations: 1,
  tools: ['get_order_status'],
}

test("ours on Bedrock: the bedrock workload's conversation passes; a wrong tool output is a mismatch", async () => {
  output = RIGHT
  const ok = await counted(() => runWithTools(W.prompt, { ...onBedrock, baseURL: urls.bedrockUrl }))
  assert.equal(ok.value.error, null, JSON.stringify(ok.value.error))
  assert.equal(ok.value.data.text, W.finalText)
  assert.deepEqual([ok.requests, ok.mismatches, ok.non200], [2, 0, []])

  output = WRONG
  const wrong = await counted(() => runWithTools(W.prompt, { ...onBedrock, baseURL: urls.bedrockUrl }))
  output = RIGHT
  assert.match(wrong.value.data.text, /^MISMATCH: round 1: the result of get_order_status is not its output/)
  assert.notEqual(wrong.value.data.text, W.finalText)
  assert.deepEqual([wrong.requests, wrong.mismatches], [2, 1])
})

test('each workload only through its own door: the bedrock prompt on the Anthropic API, the order prompt on Bedrock, are mismatches', async () => {
  const firstParty = await counted(() => runWithTools(W.prompt, { apiKey: API_KEY, baseURL: urls.url, maxToolIterations: 1, tools: ['get_order_status'], apiThreads: false }))
  assert.equal(firstParty.value.data.text, 'MISMATCH: the bedrock workload came through the Anthropic API')
  assert.equal(firstParty.mismatches, 1)
  const order = await counted(() => runWithTools(ORDER.prompt, { ...onBedrock, baseURL: urls.bedrockUrl }))
  assert.equal(order.value.data.text, 'MISMATCH: the order workload came through bedrock')
  assert.equal(order.mismatches, 1)
})

test("the Bedrock SDK's tool runner: the right tool passes, a wrong one is a mismatch", async () => {
  const client = new AnthropicBedrock({ awsAccessKey: KEYS.accessKeyId, awsSecretKey: KEYS.secretAccessKey, awsRegion: BEDROCK.region, apiKey: null, baseURL: urls.bedrockUrl })
  const runWith = (answer) =>
    client.beta.messages.toolRunner({
      model: BEDROCK.model,
      max_tokens: 1024,
      messages: [{ role: 'user', content: W.prompt }],
      tools: [betaZodTool({ name: 'get_order_status', description: W.tools[0].description, inputSchema: z.object({ orderId: z.string() }), run: async () => JSON.stringify(answer) })],
      max_iterations: 2,
    })
  const textOf = (message) => message.content.filter((b) => b.type === 'text').map((b) => b.text).join('')
  const ok = await counted(() => runWith(RIGHT))
  assert.equal(textOf(ok.value), W.finalText)
  assert.deepEqual([ok.requests, ok.mismatches, ok.non200], [2, 0, []])
  const wrong = await counted(() => runWith(WRONG))
  assert.match(textOf(wrong.value), /^MISMATCH: round 1: the result of get_order_status is not its output/)
  assert.equal(wrong.mismatches, 1)
})

test('the Bedrock door refuses what is not signed with the bench key: no signature, a Bedrock API key, another key, another region', async () => {
  const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 16, messages: [{ role: 'user', content: W.prompt }] })
  const path = `/model/${encodeURIComponent(BEDROCK.model)}/invoke`
  const post = (headers) => fetch(`${urls.bedrockUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
  const refused = await counted(async () => {
    const refusal = async (answer) => [answer.status, String(answer.headers.get('x-amzn-errortype')).split(':')[0], (await answer.json()).Message]
    assert.deepEqual(await refusal(await post({})), [403, 'MissingAuthenticationTokenException', 'Missing Authentication Token'])
    const bearer = await refusal(await post({ authorization: 'Bearer ABSKQmVkcm9ja0FQSUtleS1iZW5jaA==' }))
    assert.deepEqual(bearer.slice(0, 2), [403, 'UnrecognizedClientException'])
    const sha1 = await refusal(await post({ authorization: `AWS4-HMAC-SHA1 Credential=${KEYS.accessKeyId}/20261206/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=00` }))
    assert.deepEqual(sha1.slice(0, 2), [403, 'IncompleteSignatureException'])
    for (const [keys, region, type] of [
      [{ accessKeyId: 'AKIANOTTHEBENCHKEY01', secretAccessKey: 'x'.repeat(40) }, BEDROCK.region, 'UnrecognizedClientException'],
      [KEYS, 'eu-west-1', 'InvalidSignatureException'],
    ]) {
      const client = new AnthropicBedrock({ awsAccessKey: keys.accessKeyId, awsSecretKey: keys.secretAccessKey, awsRegion: region, apiKey: null, baseURL: urls.bedrockUrl, maxRetries: 0 })
      const err = await client.messages.create({ model: BEDROCK.model, max_tokens: 16, messages: [{ role: 'user', content: W.prompt }] }).then(() => null, (e) => e)
      assert.equal(err?.status, 403, `${region}: ${err}`)
      assert.match(String(err.message), new RegExp(type === 'UnrecognizedClientException' ? 'security token included in the request is invalid' : 'scoped to a valid region'))
    }
  })
  assert.equal(refused.requests, 5)
  assert.deepEqual(refused.non200, ['403'])
  assert.equal(refused.mismatches, 0, 'a refused request never reaches the script')
})

/** bench/child.mjs for one contender on the bedrock workload against `url`: a few counted runs, its JSON line. */
function child(contender, url, runs = 8) {
  const args = [bench('child.mjs'), '--contender', contender, '--workload', 'bedrock', '--concurrency', '4', '--url', url, '--warmup-runs', '2', '--max-runs', String(runs), '--seconds', '20', '--no-eld']
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { cwd: bench(''), stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    p.stdout.on('data', (d) => (out += d))
    p.on('error', reject)
    p.on('close', () => resolve(JSON.parse(out.trim().split('\n').pop())))
  })
}

test('bench/child.mjs measures ours and the Bedrock SDK on the bedrock workload with every run checked, and none failed', async () => {
  for (const contender of ['ours', 'sdk']) {
    const r = await counted(() => child(contender, urls.bedrockUrl))
    assert.equal(r.value.fatal, undefined, r.value.fatal)
    assert.equal(r.value.failures, 0, `${contender}: ${r.value.firstFailure}`)
    assert.ok(r.value.runs >= 8, `${contender}: ${r.value.runs} runs`)
    assert.equal(r.requests, r.value.totalRuns * 2, contender)
    assert.deepEqual([r.mismatches, r.non200], [0, []], `${contender}: ${r.lastMismatch ?? r.lastRefusal}`)
  }
})

test('bench/child.mjs counts a failure for every run of a Bedrock contender sent to the Anthropic API door', async () => {
  for (const contender of ['ours', 'sdk']) {
    const r = await counted(() => child(contender, urls.url, 2))
    // Every run, and the tool count of the measurement (no tool ran).
    assert.equal(r.value.failures, r.value.totalRuns + 1, `${contender}: every run fails`)
    assert.ok(r.value.totalRuns >= 4, `${contender}: ${r.value.totalRuns} runs`)
    assert.deepEqual(r.non200, ['404'], `${contender}: the Anthropic API has no /model/{model}/invoke`)
  }
})
