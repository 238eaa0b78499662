// `npm run demo`: the seed module's conversation, and the lesson's recovery from a tool error.
// With ANTHROPIC_API_KEY set it talks to the real API; without, to the bundled local stand-in;
// with `--provider bedrock|vertex|foundry|aws`, to the stand-in playing that cloud platform.
import { registerTool, runWithTools, ToolError } from '../index.mjs'
import { startMockApi, demoModel } from '../stand-in/index.mjs'
import { demoProvider, providerArgument } from './demo-provider.mjs'

const orders = new Map([
  ['4821', { orderId: '4821', status: 'shipped', carrier: 'UPS', eta: '2026-12-02', deliveredAt: null }],
  ['1234', { orderId: '1234', status: 'delivered', carrier: 'DHL', eta: null, deliveredAt: '2026-11-20' }],
])

registerTool({
  definition: {
    name: 'get_order_status',
    description: 'Look up the status of an order by its ID',
    input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  },
  execute: async ({ orderId }) => orders.get(orderId) ?? { orderId, status: 'not_found' },
})

registerTool({
  definition: {
    name: 'solicitar_devolucion',
    description: 'Start a return for a delivered order (within 30 days of delivery)',
    input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
  },
  execute: async ({ orderId }) => {
    const order = orders.get(orderId)
    if (!order) throw new ToolError(`Order ${orderId} does not exist. Ask the user to check the order number.`)
    if (!order.deliveredAt) throw new ToolError(`Order ${orderId} has not been delivered yet, so it cannot be returned.`)
    return { orderId, returnId: `RET-${orderId}`, status: 'return_started' }
  },
})

let mock = null
// Each round re-sends the whole history: cache its prefix (see the cache figures below).
const options = { cacheControl: { type: 'ephemeral' } }
const provider = providerArgument(process.argv.slice(2))
if (provider !== null) {
  // A cloud platform's front end, played by the stand-in (examples/demo-provider.mjs).
  const chosen = demoProvider(provider)
  mock = await startMockApi({ platform: chosen.door, handler: demoModel })
  Object.assign(options, await chosen.options(mock.url))
  console.log(`--provider ${provider}: running against the stand-in's ${provider} door at ${mock.url}.`)
} else if (process.env.ANTHROPIC_API_KEY || process.env.ANTHROPIC_AUTH_TOKEN) {
  console.log('Using the Anthropic API (ANTHROPIC_API_KEY is set).')
} else {
  mock = await startMockApi({ apiKey: 'sk-ant-local-stand-in', handler: demoModel })
  Object.assign(options, { apiKey: 'sk-ant-local-stand-in', baseURL: mock.url })
  console.log(`No ANTHROPIC_API_KEY: running against the bundled local stand-in of the API at ${mock.url}.`)
  console.log('Set ANTHROPIC_API_KEY to talk to Claude instead.')
}

function show(title, result) {
  console.log(`\n── ${title}`)
  if (result.error) {
    console.log(`error ${result.error.code}: ${result.error.message}`)
    return
  }
  for (const call of result.data.toolCalls) {
    const outcome = call.isError ? `failed: ${call.error}` : JSON.stringify(call.output)
    console.log(`tool ${call.toolName}(${JSON.stringify(call.input)}) → ${outcome}  [${call.durationMs.toFixed(1)} ms]`)
  }
  console.log(`answer: ${result.data.text}`)
  const u = result.data.usage
  console.log(
    `stop: ${result.data.stopReason}, tokens in/out: ${u.inputTokens}/${u.outputTokens}, cache read/written: ${u.cacheReadInputTokens}/${u.cacheCreationInputTokens}`,
  )
}

try {
  const status = await runWithTools("What's the status of order #4821?", options)
  show("What's the status of order #4821?", status)
  const recovered = await runWithTools('Quiero devolver el pedido #9999 o #1234', { ...options, onToolError: 'continue' })
  show('Quiero devolver el pedido #9999 o #1234 (onToolError: "continue": the model hears the ToolError and recovers)', recovered)
  show('The same request with the default onToolError: "stop"', await runWithTools('Quiero devolver el pedido #9999 o #1234', options))
  // The first two are meant to succeed: a failure there is the demo failing.
  if (status.error || recovered.error) process.exitCode = 1
} finally {
  if (mock) await mock.close()
}
