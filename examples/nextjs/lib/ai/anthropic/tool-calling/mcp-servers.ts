// The MCP servers whose tools the model gets beside those of tools.ts. Here one, standing for a
// shipping partner's service: mcp/shipping-server.mjs, started as a child process of this server
// and spoken to over stdin/stdout by the package's engine (the MCP client). Its tool,
// get_shipping_estimate, is then offered like any registered tool (listTools() shows it).
//
// Registered on the first run that offers tools, not at import: `next build` imports this module
// too, and must not start a child. A registration that fails is logged once and the runs go on
// without the tool; a later request tries again.
import { registerMcpServer } from 'anthropic-tool-calling'
import path from 'node:path'

/**
 * The script is run by `node`, never imported, so no bundler follows it: it is found from the
 * app's directory, the working directory of `next start` and `next dev`. It needs the app's
 * node_modules (the MCP SDK, zod) at run time.
 */
const SHIPPING_SERVER = path.join(process.cwd(), 'mcp', 'shipping-server.mjs')

/** After a failure, how long the runs go without the tool before a request tries again (each try starts a process). */
const RETRY_AFTER_MS = 30_000

interface Registration {
  settled: Promise<void>
  failedAt?: number
}

// One per process, on globalThis: the engine's registry is the process's, but Next.js may load
// this module more than once in it (the route handler and the server actions are bundled apart,
// a dev reload loads it again), and a second registration of the same name is refused.
const processWide = globalThis as typeof globalThis & { __anthropicToolCallingMcp?: Registration }

/**
 * Resolves once the MCP servers are registered, or once registering them has failed (logged): it
 * never rejects, so a run awaits it and goes on either way.
 */
export function ensureMcpServers(): Promise<void> {
  const current = processWide.__anthropicToolCallingMcp
  if (current && (current.failedAt === undefined || Date.now() - current.failedAt < RETRY_AFTER_MS)) return current.settled
  const registration: Registration = {
    settled: registerMcpServer({ name: 'shipping', command: process.execPath, args: [SHIPPING_SERVER] }).then(
      (names) => console.log(`[tool-calling] MCP server shipping registered: ${names.join(', ')}`),
      (err: Error) => {
        registration.failedAt = Date.now()
        console.error(`[tool-calling] ${err.message} — the chat goes on without its tools; a request after ${RETRY_AFTER_MS / 1000} s tries again`)
      },
    ),
  }
  processWide.__anthropicToolCallingMcp = registration
  return registration.settled
}
