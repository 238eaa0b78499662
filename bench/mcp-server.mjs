// The benchmark's MCP server: the `mcp` workload's tools (bench/workloads.mjs) served over Streamable
// HTTP on loopback, written with the official TypeScript SDK as its documentation shows a stateful
// server: `createMcpExpressApp` (Express with the Host check against DNS rebinding), one
// `StreamableHTTPServerTransport` and one `McpServer` a session, replies as the SDK sends them by
// default (an SSE stream a request). Each tool answers with the text of the same output the
// stand-in checks, so a contender's conversation is the same whichever MCP client carried the call.
//
// It runs in a process of its own, like the stand-in and for the same reason: its CPU is not the
// contender's. Started by bench/run.mjs with an IPC channel; it says { type: 'ready', url } and
// answers { type: 'stats' } with its counters (tool calls, sessions, its own CPU), which the driver
// reads before and after each measurement of the mcp cell.
//
// By hand: node bench/mcp-server.mjs [--port N]   (prints the URL; Ctrl-C stops it)

import { randomUUID } from 'node:crypto'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import * as z from 'zod'
import { WORKLOADS, asText, executeTool, toolStats } from './workloads.mjs'
import { zodSchemas } from './peer-tools.mjs'

const args = process.argv.slice(2)
const portAt = args.indexOf('--port')
const port = portAt >= 0 ? Number(args[portAt + 1]) : 0
const HOST = '127.0.0.1'
const PATH = '/mcp'

const workload = WORKLOADS.mcp
const schemas = zodSchemas(z, workload)
const stats = { sessions: 0, badRequests: 0, errors: 0, lastError: null }

/** A server for one session, with the workload's tools: same names, descriptions and input schemas. */
function ordersServer() {
  const server = new McpServer({ name: 'orders', version: '1.0.0' })
  for (const t of workload.tools) {
    server.registerTool(t.name, { description: t.description, inputSchema: schemas[t.name] }, async (input) => ({
      content: [{ type: 'text', text: asText(await executeTool(t.name, input)) }],
    }))
  }
  return server
}

/** sessionId → its transport, from `initialize` until the client ends the session. */
const sessions = new Map()

const app = createMcpExpressApp({ host: HOST })

app.post(PATH, async (req, res) => {
  const id = req.headers['mcp-session-id']
  let transport = typeof id === 'string' ? sessions.get(id) : undefined
  if (transport === undefined) {
    if (id !== undefined || !isInitializeRequest(req.body)) return refuse(res, 'no valid session: start one with initialize')
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => {
        sessions.set(sid, transport)
        stats.sessions++
      },
    })
    transport.onclose = () => sessions.delete(transport.sessionId)
    transport.onerror = noteError
    await ordersServer().connect(transport)
  }
  await transport.handleRequest(req, res, req.body)
})

// GET opens the session's stream for server-initiated messages, DELETE ends the session. A GET
// with no session is answered 400, as the spec has it for a server that needs sessions, and is not
// counted: @ai-sdk/mcp tries one (best effort) before it has initialized.
const inSession = async (req, res) => {
  const transport = sessions.get(req.headers['mcp-session-id'])
  if (transport === undefined) return refuse(res, 'no valid session', req.method !== 'GET')
  await transport.handleRequest(req, res)
}
app.get(PATH, inSession)
app.delete(PATH, inSession)

function refuse(res, message, counted = true) {
  if (counted) stats.badRequests++
  res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null })
}

function noteError(error) {
  stats.errors++
  stats.lastError = String(error?.message ?? error).slice(0, 500)
}

const http = await new Promise((resolve, reject) => {
  const s = app.listen(port, HOST, () => resolve(s))
  s.once('error', reject)
})
const url = `http://${HOST}:${http.address().port}${PATH}`

function snapshot() {
  const cpu = process.cpuUsage()
  return { ...stats, toolCalls: toolStats.executions, openSessions: sessions.size, cpuUs: cpu.user + cpu.system }
}

if (process.send) {
  process.on('message', (msg) => {
    if (msg?.type === 'stats') process.send({ type: 'stats', id: msg.id, stats: snapshot() })
    else if (msg?.type === 'stop') stop()
  })
  process.on('disconnect', () => stop())
  process.send({ type: 'ready', url })
} else {
  process.stdout.write(`bench MCP server (Streamable HTTP) listening on ${url}\n`)
}

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  await Promise.allSettled([...sessions.values()].map((t) => t.close()))
  http.closeAllConnections?.()
  http.close(() => process.exit(0))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
