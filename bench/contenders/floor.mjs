// The floor: bare node:http keep-alive requests doing the same round trips with no loop logic —
// no validation, no error handling, no retries: stringify the history, post, parse, run the tools.
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
      const messages = [{ role: 'user', content: workload.prompt }]
      let calls = 0
      for (let i = 0; i <= workload.rounds; i++) {
        const message = await post(JSON.stringify({ model: MODEL, max_tokens: MAX_TOKENS, tools: workload.tools, messages }))
        messages.push({ role: 'assistant', content: message.content })
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
        messages.push({ role: 'user', content: results })
      }
      throw new Error('floor: the conversation did not end')
    },
  }
}
