// This package with its tools from an MCP server: `registerMcpServer({ name, url })` once, which
// resolves when the server's tools are registered under their own names, then runWithTools as
// ours.mjs runs it; no tool registered in JS. The package's own MCP client does the calls.
//
// A build of the package without registerMcpServer (it is being written) is skipped, not failed:
// the child says why and measures nothing, so the cell runs with the peers alone until it lands.
import { openPackage, runner } from './ours.mjs'

const SERVER = 'orders'

export async function setup(config) {
  const { lib, options, info } = openPackage(config)
  if (typeof lib.registerMcpServer !== 'function') return { skip: 'this build of the package has no registerMcpServer' }
  await lib.registerMcpServer({ name: SERVER, url: config.mcpUrl })
  return {
    info,
    run: runner(lib, options, config.workload),
    close: () => lib.unregisterMcpServer(SERVER),
  }
}
