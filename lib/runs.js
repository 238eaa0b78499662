'use strict'
// The runs in progress on this thread, by run id: what their tools need that cannot cross into
// Rust (the `context`, the hooks, each call's ctx, the values tools returned and threw).

const binding = require('../binding.js')
const { abortCall } = require('./call-context.js')

/** runId → the run's record (see `startRun`). */
const runs = new Map()
let lastRunId = 0

/** A new run id (a u32, as the engine takes it). */
function nextRunId() {
  lastRunId = (lastRunId + 1) >>> 0
  return lastRunId
}

// The engine cancels a call it gave up on (a timeout, the end of its run): its `ctx.signal` aborts.
binding.setCancelHook((runId, toolUseId) => {
  const run = runs.get(runId)
  const call = run && run.calls.get(toolUseId)
  if (call) abortCall(call, new DOMException('The tool call was cancelled: it timed out or the run ended.', 'AbortError'))
})

module.exports = { runs, nextRunId }
