// The benchmark's workloads, shared by the stand-in API's script (bench/server.mjs) and every
// contender (bench/contenders/*.mjs): the same tools, the same prompt, the same conversation.
//
//   order  one tool round: get_order_status({ orderId: '4821' }) → a tiny JSON object → the answer.
//   heavy  5 tool rounds, 3 parallel tool calls per round, each tool output 20 KB of JSON text, so
//          the history grows by ~60 KB a round (the 6th request carries ~300 KB of tool results).
//   heavy-objects  heavy, with tools that return objects (the parsed JSON of the same ~20 KB outputs)
//          as most tools do, not pre-serialised strings: each contender turns them into JSON itself.
//   stream one tool round, every reply streamed (SSE, `stream: true` required): a short text before
//          the call, then a ~170-character answer. The stand-in paces the events (STREAM_DELAY_MS
//          between two events, the same for every contender), so time to the first text part means
//          something. Its contenders are the streaming ones (bench/contenders/*-stream.mjs).
//   mcp    order's one tool round, with the tool served by a local MCP server (bench/mcp-server.mjs,
//          Streamable HTTP) instead of running in the contender's process: its contenders are the
//          MCP forms (bench/contenders/*-mcp.mjs), each with its own MCP client. The MCP server's
//          text comes back to the stand-in as the tool_result's content, a string or text blocks
//          depending on the client; the check reads the text of either, as for every workload.
//   bedrock order's one tool round on Amazon Bedrock: the stand-in plays Bedrock's door
//          (`POST /model/{model}/invoke`, SigV4-signed, `anthropic_version` in the body, no
//          `model`), on a port of its own (bench/server.mjs), and its contenders are the Bedrock
//          forms (bench/contenders/*-bedrock.mjs). A conversation of this workload that reaches
//          the first-party door, or one of another workload that reaches Bedrock's, is a mismatch.
//
// The stand-in checks every tool_result against `toolOutput` and answers with a text that starts
// `MISMATCH` when anything is off; each contender checks the final text and its tool call count.

export const API_KEY = 'sk-ant-bench-local-key'
export const MODEL = 'claude-sonnet-5-5'
export const MAX_TOKENS = 1024

export const WINDOWS = ['1h', '24h', '7d']

/**
 * The bedrock workload's platform: the model id (Bedrock's own: an inference profile of the
 * model the other cells name), the region the stand-in plays, and the AWS keys every contender
 * signs with. Static test keys, known only to this stand-in on 127.0.0.1, so no contender looks
 * for credentials in the environment, the files or the instance metadata.
 */
export const BEDROCK = Object.freeze({
  model: 'us.anthropic.claude-sonnet-5-5-v1:0',
  region: 'us-east-1',
  accessKeyId: 'AKIABENCHLOCALKEY001',
  secretAccessKey: 'bench/local/stand-in/secret/not/a/real/key01',
})

/**
 * The stand-in's pause between two SSE events of a streamed reply (message_start goes out at once;
 * ping, each content_block_start / _delta / _stop, message_delta and message_stop each wait this
 * long first). Text deltas are 2–7 characters, as the Messages API sends them.
 */
export const STREAM_DELAY_MS = 2

const ORDER_TOOL = {
  name: 'get_order_status',
  description: 'Look up the status of an order by its ID',
  input_schema: {
    type: 'object',
    properties: { orderId: { type: 'string', description: 'The order number, digits only' } },
    required: ['orderId'],
    additionalProperties: false,
  },
}

export const WORKLOADS = {
  order: {
    name: 'order',
    prompt: "What's the status of order #4821?",
    rounds: 1,
    callsPerRound: 1,
    tools: [ORDER_TOOL],
    /** The tool_use blocks of round `k` (0-based). */
    calls(k) {
      return [{ id: `toolu_order_${k}_0`, name: 'get_order_status', input: { orderId: '4821' } }]
    },
    roundText: null,
    finalText: 'Order #4821 is shipped. Carrier: UPS. Expected delivery: 2026-12-02.',
  },
  heavy: {
    name: 'heavy',
    prompt: 'Prepare the weekly incident report for the payments service: search the docs, fetch the incident records and pull the metrics.',
    rounds: 5,
    callsPerRound: 3,
    tools: [
      {
        name: 'search_docs',
        description: 'Full-text search over the internal runbooks and postmortems',
        input_schema: {
          type: 'object',
          properties: {
            query: { type: 'string', minLength: 1, description: 'What to search for' },
            limit: { type: 'integer', minimum: 1, maximum: 50, description: 'How many hits to return' },
          },
          required: ['query', 'limit'],
          additionalProperties: false,
        },
      },
      {
        name: 'fetch_record',
        description: 'Fetch one incident record by its ID',
        input_schema: {
          type: 'object',
          properties: { id: { type: 'string', pattern: '^rec-[0-9]{4}$', description: 'The record ID, like rec-0001' } },
          required: ['id'],
          additionalProperties: false,
        },
      },
      {
        name: 'get_metrics',
        description: 'Latency and error-rate metrics of a service over a time window',
        input_schema: {
          type: 'object',
          properties: {
            service: { type: 'string', description: 'The service name' },
            window: { type: 'string', enum: WINDOWS, description: 'The time window' },
          },
          required: ['service', 'window'],
          additionalProperties: false,
        },
      },
    ],
    calls(k) {
      return [
        { id: `toolu_heavy_${k}_0`, name: 'search_docs', input: { query: `payments incident round ${k + 1}`, limit: 10 + k } },
        { id: `toolu_heavy_${k}_1`, name: 'fetch_record', input: { id: `rec-${String(k + 1).padStart(4, '0')}` } },
        { id: `toolu_heavy_${k}_2`, name: 'get_metrics', input: { service: 'payments', window: WINDOWS[k % WINDOWS.length] } },
      ]
    },
    roundText: (k) => `Round ${k + 1} of 5: searching the docs, fetching the record and pulling the metrics.`,
    finalText: 'Report ready: 15 tool results checked, 307200 bytes of tool output.',
  },
  'heavy-objects': null, // below: heavy with object outputs
  stream: {
    name: 'stream',
    stream: true,
    form: 'stream',
    prompt: 'Where is my order #4821, and when will it arrive?',
    rounds: 1,
    callsPerRound: 1,
    tools: [ORDER_TOOL],
    calls(k) {
      return [{ id: `toolu_stream_${k}_0`, name: 'get_order_status', input: { orderId: '4821' } }]
    },
    roundText: () => 'Let me look up order #4821 for you.',
    finalText:
      'Your order #4821 has shipped with UPS and is on its way. The expected delivery date is 2026-12-02; ' +
      'you will get an email with the tracking link when it is out for delivery.',
  },
  mcp: {
    name: 'mcp',
    form: 'mcp',
    prompt: "Ask the orders service: what's the status of order #4821?",
    rounds: 1,
    callsPerRound: 1,
    tools: [ORDER_TOOL],
    calls(k) {
      return [{ id: `toolu_mcp_${k}_0`, name: 'get_order_status', input: { orderId: '4821' } }]
    },
    roundText: null,
    finalText: 'Order #4821 is shipped. Carrier: UPS. Expected delivery: 2026-12-02.',
  },
  bedrock: {
    name: 'bedrock',
    form: 'bedrock',
    platform: 'bedrock',
    prompt: "On Bedrock: what's the status of order #4821?",
    rounds: 1,
    callsPerRound: 1,
    tools: [ORDER_TOOL],
    calls(k) {
      return [{ id: `toolu_bedrock_${k}_0`, name: 'get_order_status', input: { orderId: '4821' } }]
    },
    roundText: null,
    finalText: 'Order #4821 is shipped. Carrier: UPS. Expected delivery: 2026-12-02.',
  },
}

WORKLOADS['heavy-objects'] = {
  ...WORKLOADS.heavy,
  name: 'heavy-objects',
  objects: true,
  prompt: 'Prepare the weekly incident report for the payments service as objects: search the docs, fetch the incident records and pull the metrics.',
}

/** Every text delta of a run, joined: each round's text, then the final answer. */
export function streamedText(workload) {
  let text = ''
  for (let k = 0; k < workload.rounds; k++) if (workload.roundText) text += workload.roundText(k)
  return text + workload.finalText
}

/** Tool outputs of the heavy workload are this many characters (ASCII, so bytes too). */
export const HEAVY_OUTPUT_CHARS = 20 * 1024

// ---------------------------------------------------------------------------------------------
// The tools themselves: deterministic, and cheap after the first call (outputs are cached), so
// the benchmark measures the loop, not the tools.
// ---------------------------------------------------------------------------------------------

const cache = new Map()

/** How many times a tool ran in this process (a contender must run each call exactly once). */
export const toolStats = { executions: 0 }

function heavyOutput(name, input) {
  const head = `{"tool":${JSON.stringify(name)},"input":${JSON.stringify(input)},"rows":[\n`
  let body = ''
  for (let i = 0; body.length + head.length < HEAVY_OUTPUT_CHARS; i++) {
    body +=
      `  {"n":${i},"id":"row-${String(i).padStart(5, '0')}","title":"Payment retries \\"timed out\\" on shard ${i % 7}",` +
      `"score":${((i * 37) % 100) / 100},"tags":["payments","p${i % 3}"],"text":"line one\\nline two\\ttabbed"},\n`
  }
  const text = head + body
  // Cut to the exact size and close the JSON (a valid document that keeps the size exact).
  const tail = ',{}]}'
  return text.slice(0, HEAVY_OUTPUT_CHARS - tail.length).replace(/,?\n?[^\n]*$/, (m) => ' '.repeat(m.length)) + tail
}

/**
 * The output of a tool call: an object for `get_order_status`, a 20 KB string for the heavy tools,
 * and for them with `objects` (the heavy-objects workload) that string parsed: an object.
 */
export function toolOutput(name, input, objects = false) {
  const key = `${name}\u0000${objects}\u0000${JSON.stringify(input)}`
  let out = cache.get(key)
  if (out === undefined) {
    if (name === 'get_order_status') {
      out = input.orderId === '4821' ? { orderId: '4821', status: 'shipped', carrier: 'UPS', eta: '2026-12-02' } : { orderId: input.orderId, status: 'not_found' }
    } else {
      out = heavyOutput(name, input)
      if (objects) out = JSON.parse(out)
    }
    cache.set(key, out)
  }
  return out
}

/** Whether this process's tools return objects (bench/child.mjs sets it from its workload). */
let objectOutputs = false

/** A contender's process runs one workload: its tools answer as that workload's do. */
export function useWorkload(workload) {
  objectOutputs = workload.objects === true
}

/** The tool as a contender calls it: async, like a real tool. */
export async function executeTool(name, input) {
  toolStats.executions++
  return toolOutput(name, input, objectOutputs)
}

/** The text a contender whose tools must return strings sends for a tool output. */
export function asText(output) {
  return typeof output === 'string' ? output : JSON.stringify(output)
}

// ---------------------------------------------------------------------------------------------
// The stand-in's side: the scripted "model"
// ---------------------------------------------------------------------------------------------

function textOf(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter((b) => b && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('')
}

const byPrompt = new Map(Object.values(WORKLOADS).map((w) => [w.prompt, w]))

/** Why the tool results in `user` do not answer the calls of round `k`, or null when they do. */
function checkResults(workload, k, assistant, user) {
  const calls = workload.calls(k)
  const uses = Array.isArray(assistant?.content) ? assistant.content.filter((b) => b?.type === 'tool_use') : []
  if (uses.length !== calls.length || uses.some((u, i) => u.id !== calls[i].id)) return `round ${k + 1}: the assistant turn was not sent back as given`
  const results = Array.isArray(user?.content) ? user.content.filter((b) => b?.type === 'tool_result') : []
  if (results.length !== calls.length) return `round ${k + 1}: ${results.length} tool results for ${calls.length} calls`
  for (const call of calls) {
    const r = results.find((b) => b.tool_use_id === call.id)
    if (!r) return `round ${k + 1}: no result for ${call.id}`
    if (r.is_error === true) return `round ${k + 1}: ${call.name} failed: ${textOf(r.content).slice(0, 200)}`
    const got = textOf(r.content)
    const want = toolOutput(call.name, call.input, workload.objects === true)
    if (typeof want === 'string' ? got !== want : !sameJson(got, want)) {
      return `round ${k + 1}: the result of ${call.name} is not its output (${got.length} chars: ${JSON.stringify(got.slice(0, 80))})`
    }
  }
  return null
}

/**
 * Whether `text` is JSON for `value`. The text `JSON.stringify(value)` makes is compared as text
 * (a contender that stringifies sends exactly it); any other text is parsed and compared in its
 * canonical form, so a serialiser that spaces or orders differently still passes and a wrong
 * value never does. The canonical text of each expected value is made once: it is the stand-in's
 * own constant, and re-serialising it for every request was ~a third of the stand-in's CPU on
 * `heavy-objects` (`--cpu-prof`), CPU taken from the contender on this 2-core machine.
 */
function sameJson(text, value) {
  let want = canonical.get(value)
  if (want === undefined) {
    want = JSON.stringify(value)
    canonical.set(value, want)
  }
  if (text === want) return true
  try {
    return JSON.stringify(JSON.parse(text)) === want
  } catch {
    return false
  }
}

/** `JSON.stringify` of each expected tool output (`toolOutput`'s cached objects). */
const canonical = new WeakMap()

/** The mock's step option for the pause between SSE events (used only when the request streams). */
function pacing(workload) {
  return workload.stream ? { streamDelayMs: STREAM_DELAY_MS } : {}
}

/**
 * The stand-in's answer to a valid request: the next step of the workload's conversation, or a
 * text starting `MISMATCH` (so the contender's check fails) when the request is not the expected
 * conversation. Stateless: the round is read from the history. `platform`: the door the request
 * came through (the stand-in record's `platform`; undefined for the Anthropic API's own), which
 * must be the workload's.
 */
export function scriptedReply(body, platform) {
  const messages = body.messages
  const workload = byPrompt.get(textOf(messages[0]?.content))
  if (!workload) return { mismatch: 'the first user message is not a workload prompt' }
  const door = platform ?? 'the Anthropic API'
  if (door !== (workload.platform ?? 'the Anthropic API')) return { mismatch: `the ${workload.name} workload came through ${door}` }
  const offered = (body.tools ?? []).map((t) => t.name).sort().join(',')
  const expected = workload.tools.map((t) => t.name).sort().join(',')
  if (offered !== expected) return { mismatch: `tools offered: ${offered || 'none'}; expected ${expected}` }
  if (workload.stream && body.stream !== true) return { mismatch: 'the stream workload is streamed: the request must have stream: true' }
  if (!workload.stream && body.stream === true) return { mismatch: `the ${workload.name} workload is not streamed` }
  if (messages.length % 2 !== 1) return { mismatch: `${messages.length} messages: the history should end with a user turn` }
  const k = (messages.length - 1) / 2
  if (k > 0) {
    const why = checkResults(workload, k - 1, messages[messages.length - 2], messages[messages.length - 1])
    if (why) return { mismatch: why }
  }
  if (k < workload.rounds) {
    const content = workload.calls(k).map((c) => ({ type: 'tool_use', ...c }))
    if (workload.roundText) content.unshift({ type: 'text', text: workload.roundText(k) })
    return { content, stop_reason: 'tool_use', ...pacing(workload) }
  }
  if (k === workload.rounds) return { content: [{ type: 'text', text: workload.finalText }], stop_reason: 'end_turn', ...pacing(workload) }
  return { mismatch: `request ${k + 1} of a conversation that has ${workload.rounds + 1}` }
}
