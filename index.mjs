// ESM entry: the same module instance as the CommonJS one, so there is one registry per thread
// and one ToolError class whichever way the package is loaded.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('./index.js')

export const {
  registerTool,
  toolResult,
  unregisterTool,
  listTools,
  registerMcpServer,
  unregisterMcpServer,
  runWithTools,
  streamWithTools,
  fromUIMessages,
  createStore,
  resumeRun,
  recoverRuns,
  stopRun,
  resumeStream,
  ToolError,
  DEFAULT_MODEL,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOOL_ITERATIONS,
} = api
export default api
