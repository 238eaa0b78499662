'use strict'
// MCP servers as tools. The Rust engine is the MCP client: this only checks what Rust cannot
// (needsApproval, a JS value) and hands the rest over as JSON.

const binding = require('../binding.js')
const { describe } = require('./describe.js')
const { asker } = require('./tool-bridge.js')

/**
 * Connects to an MCP server (`{ name, url, headers? }` or `{ name, command, args?, env?, cwd? }`,
 * with `prefix?`, `tools?`, `needsApproval?`), lists its tools and registers them. Resolves
 * with the names registered; rejects with a TypeError for bad options and an Error naming the
 * server and the cause when it cannot be reached or its tools cannot be registered.
 */
async function registerMcpServer(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`registerMcpServer: expected { name, url } or { name, command }, got ${describe(options)}`)
  }
  const { needsApproval } = options
  const name = typeof options.name === 'string' ? options.name : '(unnamed)'
  if (needsApproval !== undefined && needsApproval !== null && typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    throw new TypeError(`registerMcpServer: needsApproval of the MCP server ${JSON.stringify(name)} must be true, false or a function (toolName, input, ctx) => boolean, got ${describe(needsApproval)}`)
  }
  let json
  try {
    json = JSON.stringify({ ...options, needsApproval: undefined })
  } catch (e) {
    throw new TypeError(`registerMcpServer: the options of ${JSON.stringify(name)} cannot be turned into JSON: ${e.message}`)
  }
  let pending
  try {
    pending = binding.registerMcpServer(json, needsApproval === true, typeof needsApproval === 'function' ? asker(needsApproval, { named: true }) : undefined)
  } catch (e) {
    throw new TypeError(e.message)
  }
  try {
    return await pending
  } catch (e) {
    // A plain Error with the engine's sentence, thrown from here (the native stack says nothing).
    throw new Error(e.message)
  }
}

/** Closes an MCP server's session and removes its tools; whether it was registered. */
async function unregisterMcpServer(name) {
  if (typeof name !== 'string') return false
  return binding.unregisterMcpServer(name)
}

module.exports = { registerMcpServer, unregisterMcpServer }
