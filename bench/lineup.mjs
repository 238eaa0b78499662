// Who is measured: the contenders, the peers among them (ours is compared with the best of these),
// their names in the tables, and the packages the peers need in bench/node_modules.

import { baseOf } from './against.mjs'
import { WORKLOADS } from './workloads.mjs'

export const ALL_CONTENDERS = ['ours', 'ours-hooks', 'ours-traced', 'ours-sqlite', 'ours-postgres', 'sdk', 'ai', 'floor']
export const PEERS = ['sdk', 'ai']
/** The contenders that load this package (the addon copy measured, its build checked). */
export const OURS = ['ours', 'ours-hooks', 'ours-traced']
/** This package with a store (each run in a thread of its own): SQLite, and PostgreSQL; no twin at another commit. */
export const OURS_STORED = ['ours-sqlite', 'ours-postgres']
/** Every contender that loads this package. */
export const ALL_OURS = [...OURS, ...OURS_STORED]
/**
 * `ours-traced` (this package with an OpenTelemetry SDK registered) is measured only on these
 * workloads: its figure is what tracing adds to a run, and one small run shows it best (on a
 * heavy run the per-span cost would vanish in the work on 300 KB of history).
 */
export const TRACED_WORKLOADS = ['order']
/** `ours-hooks` (this package with its three lifecycle hooks set), likewise: what hooks add to a small run. */
export const HOOKED_WORKLOADS = ['order']
/** The store contenders, likewise: what keeping the conversation adds to a small run. */
export const STORED_WORKLOADS = ['order']
/** Whether a contender (or its twin at another commit, `ours-hooks@1a2b3c4d5`) is measured on a workload at all. */
export function measuredOn(contender, workload) {
  const c = baseOf(contender)
  if (!contendersOf(workload).includes(c)) return false
  if (c === 'ours-traced') return TRACED_WORKLOADS.includes(workload)
  if (c === 'ours-hooks') return HOOKED_WORKLOADS.includes(workload)
  if (OURS_STORED.includes(c)) return STORED_WORKLOADS.includes(workload)
  return true
}
/** The streaming workload has no floor: ours, the SDK's messages.stream loop and the AI SDK's streamText. */
export const STREAM_CONTENDERS = ['ours', 'sdk', 'ai']
/**
 * The mcp workload has no floor either (an MCP client is not a bare request): ours with
 * registerMcpServer, the SDK's toolRunner with its MCP helper, and generateText with @ai-sdk/mcp.
 */
export const MCP_CONTENDERS = ['ours', 'sdk', 'ai']
/**
 * The bedrock workload: ours with `provider: { type: 'bedrock', region, credentials }`, the
 * Bedrock SDK's tool runner (`AnthropicBedrock`) and generateText with @ai-sdk/amazon-bedrock's
 * Anthropic provider (InvokeModel); no floor (a bare request would have to sign itself).
 */
export const BEDROCK_CONTENDERS = ['ours', 'sdk', 'ai']
/** Who has the form a workload is measured in (bench/contenders/<name>-<form>.mjs); every contender when it has none. */
export const contendersOf = (workload) => ({ stream: STREAM_CONTENDERS, mcp: MCP_CONTENDERS, bedrock: BEDROCK_CONTENDERS })[WORKLOADS[workload]?.form] ?? ALL_CONTENDERS
/** The module of a contender for a workload: its form's (ai-stream.mjs, sdk-mcp.mjs …) or its own. */
export const contenderModule = (contender, workload) => `${contender}${WORKLOADS[workload]?.form ? `-${WORKLOADS[workload].form}` : ''}.mjs`
const LABEL = {
  ours: 'anthropic-tool-calling',
  'ours-hooks': 'anthropic-tool-calling, with hooks (onToolCall, onToolResult, onStepFinish)',
  'ours-traced': 'anthropic-tool-calling, traced (OpenTelemetry SDK)',
  'ours-sqlite': 'anthropic-tool-calling, a thread in a SQLite store',
  'ours-postgres': 'anthropic-tool-calling, a thread in a PostgreSQL store',
  sdk: '@anthropic-ai/sdk toolRunner',
  ai: 'ai generateText',
  floor: 'floor: bare node:http',
}
const STREAM_LABEL = {
  ours: 'anthropic-tool-calling streamWithTools',
  sdk: '@anthropic-ai/sdk messages.stream loop',
  ai: 'ai streamText',
}
const MCP_LABEL = {
  ours: 'anthropic-tool-calling registerMcpServer',
  sdk: '@anthropic-ai/sdk toolRunner + mcpTools',
  ai: 'ai generateText + @ai-sdk/mcp',
}
const BEDROCK_LABEL = {
  ours: 'anthropic-tool-calling, provider bedrock',
  sdk: '@anthropic-ai/bedrock-sdk toolRunner',
  ai: 'ai generateText + @ai-sdk/amazon-bedrock/anthropic',
}
/** The name of a contender in the tables of a workload (a workload with a form names that form; a ref's twin, its commit). */
export function label(contender, workload) {
  const base = baseOf(contender)
  const name = (({ stream: STREAM_LABEL, mcp: MCP_LABEL, bedrock: BEDROCK_LABEL })[WORKLOADS[workload]?.form] ?? LABEL)[base]
  return base === contender ? name : `${name}, at ${contender.slice(base.length + 1)}`
}
export const PEER_PACKAGES = ['@anthropic-ai/sdk', 'ai', '@ai-sdk/anthropic', 'zod']
/** What the mcp cell needs beside them: the MCP server's SDK (every contender's server) and the AI SDK's MCP client. */
export const MCP_PACKAGES = ['@modelcontextprotocol/sdk', '@ai-sdk/mcp']
/** What the bedrock cell's peers need beside them: Anthropic's Bedrock client and the AI SDK's Bedrock provider. */
export const BEDROCK_PACKAGES = ['@anthropic-ai/bedrock-sdk', '@ai-sdk/amazon-bedrock']
/** What `ours-traced` registers (bench/contenders/ours-traced.mjs), in bench/node_modules too. */
export const TRACING_PACKAGES = ['@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@opentelemetry/context-async-hooks']
