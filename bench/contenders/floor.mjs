// The floor: bare node:http keep-alive requests doing the same round trips with no loop logic —
// no validation, no error handling, no retries: stringify the new turn, post, parse, run the tools.
import http from 'node:http'
import { MODEL, MAX_TOKENS, executeTool, asText } from '../workloads.mjs'

export async function setup({ url, apiKey, workload }) {
  const { hostname, port } = new URL(url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })

  function post(body) {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: hostname,
          port,
          path: '/v1/messages',
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-api-key': apiKey,
            'anthropic-version': '2026-10-21',
            'anthropic-beta': 'message-threads-2026-08-12',
          },
        },
        (res) => {
          const chunks = []
          res.on('data', (c) => chunks.push(c))
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`))
            else resolve(JSON.parse(text))
          })
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  }

  return {
    info: {},
    async run() {
      // Over the API's Threads, as the default contenders: the first request creates the
      // thread with the whole history, each later one sends only the new turn.
      let turn = [{ role: 'user', content: workload.prompt }]
      let body = { model: MODEL, max_tokens: MAX_TOKENS, tools: workload.tools, messages: turn, thread: { type: 'create' } }
      let calls = 0
      for (let i = 0; i <= workload.rounds; i++) {
        const message = await post(JSON.stringify(body))
        const uses = message.content.filter((b) => b.type === 'tool_use')
        if (message.stop_reason !== 'tool_use') {
          const text = message.content
            .filter((b) => b.type === 'text')
            .map((b) => b.text)
            .join('')
          return { text, calls }
        }
        calls += uses.length
        const results = await Promise.all(
          uses.map(async (u) => ({ type: 'tool_result', tool_use_id: u.id, content: asText(await executeTool(u.name, u.input)) })),
        )
        turn = [{ role: 'user', content: results }]
        body = { model: MODEL, max_tokens: MAX_TOKENS, messages: turn, thread: { type: 'continue', previous_message_id: message.id } }
      }
      throw new Error('floor: the conversation did not end')
    },
  }
}
