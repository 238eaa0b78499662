// The stand-in API process (bench/server.mjs), and for the mcp cell the MCP server's
// (bench/mcp-server.mjs), from the driver's side: each started once for the whole run, and asked
// for its counters (requests or tool calls, its own CPU) over IPC before and after each
// measurement, so each one is checked on the servers' side as well as the child's, and their CPU
// is theirs, never the contender's.

import { fork } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { launcher, niceArgs, priority } from './settings.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

/** `env`: the children's environment (see preconditions.mjs). */
export const startServer = (env) => startHelper('server.mjs', 'the stand-in API', env)
/** The MCP server, with the same environment and niceness as the stand-in. */
export const startMcpServer = (env) => startHelper('mcp-server.mjs', 'the MCP server', env)

function startHelper(file, what, env) {
  const server = fork(path.join(here, file), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env,
    ...(priority === null ? {} : { execPath: launcher, execArgv: niceArgs }),
  })
  const pending = new Map()
  let nextId = 0
  server.on('message', (msg) => {
    if (msg?.type === 'stats' && pending.has(msg.id)) {
      pending.get(msg.id)(msg.stats)
      pending.delete(msg.id)
    }
  })
  // What it says once it listens: { url } (the stand-in also bedrockUrl, its Bedrock door).
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start within 15 s`)), 15_000)
    server.once('message', (msg) => {
      clearTimeout(timer)
      if (msg?.type === 'ready') resolve(msg)
      else reject(new Error(`${what} said ${JSON.stringify(msg)}`))
    })
    server.once('exit', (code) => reject(new Error(`${what} exited (${code})`)))
  })
  function stats() {
    return new Promise((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => reject(new Error(`${what} did not answer for its stats within 10 s`)), 10_000)
      pending.set(id, (s) => {
        clearTimeout(timer)
        resolve(s)
      })
      server.send({ type: 'stats', id })
    })
  }
  /** Asks it to stop, and kills it if it has not within 5 s. */
  function stop() {
    if (server.connected) server.send({ type: 'stop' })
    setTimeout(() => server.kill('SIGKILL'), 5000).unref()
  }
  return { process: server, ready, stats, stop }
}
