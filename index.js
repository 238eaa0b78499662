'use strict'
// The public API: the entry points and what they re-export. This layer reads process.env at call
// time, runs each tool's `execute` and bridges AbortSignal (lib/); the loop, the HTTP client,
// validation and retries live in Rust (src/engine), reached through the generated binding.js.

const binding = require('./binding.js')
// The first tool's schema needs JSON Schema's meta-schema built: that starts now, off this thread.
binding.warmUp()
const { describe } = require('./lib/describe.js')
const { ToolError } = require('./lib/tool-error.js')
const { toolResult } = require('./lib/tool-result.js')
// lib/standard-schema.js is loaded by the first tool whose input_schema is a Standard Schema (zod…).
let schemas
const standardSchemas = () => (schemas ??= require('./lib/standard-schema.js'))
const { bridge, asker } = require('./lib/tool-bridge.js')
const { startRun } = require('./lib/run.js')

// What a plain run never touches is loaded the first time it is used, not at `require`: a
// serverless function's cold start pays only for what it calls.
let streams, ui, mcp, stores, durable, recording
const partStreams = () => (streams ??= require('./lib/stream/part-stream.js'))

/** Turns `useChat`'s UI messages into a prompt: see lib/ui-messages.js. */
function fromUIMessages(messages) {
  return (ui ??= require('./lib/ui-messages.js')).fromUIMessages(messages)
}

/** Connects an MCP server and registers its tools: see lib/mcp.js. */
function registerMcpServer(server) {
  return (mcp ??= require('./lib/mcp.js')).registerMcpServer(server)
}

/** Disconnects an MCP server and removes its tools: see lib/mcp.js. */
function unregisterMcpServer(name) {
  return (mcp ??= require('./lib/mcp.js')).unregisterMcpServer(name)
}

/** A database the package keeps threads in: see lib/store.js. */
function createStore(url, options) {
  return (stores ??= require('./lib/store.js')).createStore(url, options)
}

const { DEFAULT_MODEL, DEFAULT_MAX_TOKENS, DEFAULT_MAX_TOOL_ITERATIONS } = binding

/** Registers a tool, replacing one of the same name; a TypeError (`registerTool: …`) for a bad tool. */
function registerTool(tool) {
  if (tool === null || typeof tool !== 'object') {
    throw new TypeError(`registerTool: expected { definition, execute }, got ${describe(tool)}`)
  }
  const { definition, execute, needsApproval, onInterrupted } = tool
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
    throw new TypeError(`registerTool: definition must be an object { name, description, input_schema }, got ${describe(definition)}`)
  }
  const name = typeof definition.name === 'string' ? definition.name : '(unnamed)'
  if (typeof execute !== 'function') {
    throw new TypeError(`registerTool: execute of ${name} must be a function, got ${describe(execute)}`)
  }
  // A Standard Schema (zod, valibot, arktype…): the API and the Rust engine get its JSON Schema;
  // its own `validate` runs on each input after the engine's check.
  const schema = definition.input_schema
  const standard = schema !== null && (typeof schema === 'object' || typeof schema === 'function') && '~standard' in schema ? standardSchemas().standardSchemaOf(schema) : null
  const fail = (why) => new TypeError(`registerTool: input_schema of ${name} ${why}`)
  const sent = standard ? { ...definition, input_schema: standardSchemas().jsonSchemaOf(schema, standard, fail) } : definition
  let json
  try {
    json = JSON.stringify(sent)
  } catch (e) {
    throw new TypeError(`registerTool: definition of ${name} cannot be turned into JSON: ${e.message}`)
  }
  if (needsApproval !== undefined && needsApproval !== null && typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    throw new TypeError(`registerTool: needsApproval of ${name} must be true, false or a function (input, ctx) => boolean, got ${describe(needsApproval)}`)
  }
  if (onInterrupted !== undefined && onInterrupted !== 'retry' && onInterrupted !== 'report') {
    throw new TypeError(`registerTool: onInterrupted of ${name} must be "retry" (the default) or "report", got ${describe(onInterrupted)}`)
  }
  try {
    binding.registerTool(json, bridge(name, execute, standard), needsApproval === true, typeof needsApproval === 'function' ? asker(needsApproval) : undefined, onInterrupted === 'report')
  } catch (e) {
    throw new TypeError(e.message)
  }
}

/** Removes a tool; whether it was registered. */
function unregisterTool(name) {
  return typeof name === 'string' && binding.unregisterTool(name)
}

/** The registered definitions, in registration order. */
function listTools() {
  return JSON.parse(binding.listTools())
}

/** Runs a conversation with the registered tools. Never rejects, never throws. */
function runWithTools(prompt, options) {
  return startRun(prompt, options, null)
}

/**
 * Runs a conversation as `runWithTools` does, with each reply streamed: returns at once a
 * single-consumer async iterable of StreamParts with `result` and the two Response makers.
 * Never throws.
 */
function streamWithTools(prompt, options) {
  const streaming = { push: null, control: null }
  // With a store the run's UI message stream is recorded (resumeStream follows it), and a
  // Response body cancelled (the browser went away) leaves the run going; without one it aborts it.
  const recorder = options !== null && typeof options === 'object' && options.store !== undefined ? (recording ??= require('./lib/stream/record.js')).recorderFor(options.store) : null
  const onCancel = recorder === null ? () => streaming.control && streaming.control.abort() : undefined
  const { stream, push, end } = partStreams().createPartStream({ onCancel })
  streaming.push = recorder === null ? push : (parts) => {
    recorder.feed(parts)
    push(parts)
  }
  startRun(prompt, options, streaming).then((result) => {
    if (recorder !== null) recorder.end(result)
    end(result)
  })
  return stream
}

/** A run's UI message stream, replayed and followed (a store): see lib/stream/resume.js. */
function resumeStream(target, options) {
  return require('./lib/stream/resume.js').resumeStream(target, options)
}

/** Durable runs (a store): see lib/durable.js. */
function resumeRun(runId, options) {
  return (durable ??= require('./lib/durable.js')).resumeRun(runId, options)
}
function recoverRuns(options) {
  return (durable ??= require('./lib/durable.js')).recoverRuns(options)
}
function stopRun(runId, options) {
  return (durable ??= require('./lib/durable.js')).stopRun(runId, options)
}

module.exports = {
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
}
