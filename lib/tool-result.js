'use strict'
// toolResult(blocks): content blocks a tool returns as its `tool_result` content, and the one list
// of the block types such content may hold.

const { describe } = require('./describe.js')

const TOOL_RESULT = Symbol.for('anthropic-tool-calling.toolResult')

/**
 * The block types a `tool_result`'s content may hold, as the Messages API takes them: what
 * `toolResult` accepts, and what fromUIMessages sends back as blocks rather than as JSON text.
 */
const RESULT_BLOCK_TYPES = new Set(['text', 'image', 'document', 'search_result', 'tool_reference'])

/**
 * Content blocks a tool returns as its `tool_result` content, as given: text, image, document,
 * search_result (and tool_reference). `output` in `toolCalls` is the array.
 */
function toolResult(blocks) {
  if (!Array.isArray(blocks)) throw new TypeError(`toolResult: expected an array of content blocks, got ${describe(blocks)}`)
  blocks.forEach((block, i) => {
    const type = block !== null && typeof block === 'object' ? block.type : undefined
    if (!RESULT_BLOCK_TYPES.has(type)) {
      throw new TypeError(`toolResult: blocks[${i}] must be a content block whose type is one of ${[...RESULT_BLOCK_TYPES].join(', ')}; got ${type === undefined ? describe(block) : JSON.stringify(type)}`)
    }
  })
  return Object.freeze({ [TOOL_RESULT]: true, blocks })
}

/** Whether what `execute` returned was made by `toolResult` (of this copy of the package or another). */
function isToolResult(output) {
  return output !== null && typeof output === 'object' && output[TOOL_RESULT] === true
}

module.exports = { toolResult, isToolResult, RESULT_BLOCK_TYPES }
