'use strict'
// The hand-over of finished tool calls to the engine, in slices of the event loop: a burst of
// finished calls never holds the JS thread for long.

/**
 * How long the JS thread may spend per event-loop turn handing finished calls over (an output
 * turned into JSON, then `settle`). The engine's threads answer many runs at once, so at high
 * concurrency one turn could receive a hundred calls whose outputs are objects: serialising all
 * of them in that turn held the event loop for 10-20 ms (the benchmark's `heavy-objects`
 * workload). What does not fit waits, first in first out, for the next turn, after its timers
 * and I/O.
 */
const SLICE_MS = 1
/** Hand-overs waiting for a turn (from `handOvers[handOversHead]` on), oldest first. */
let handOvers = []
let handOversHead = 0
/** When this turn's slice ends (`performance.now()`); -1 when none is open. */
let sliceEnd = -1

/**
 * Runs `job` (which never throws) now if this turn's slice has time left and nothing waits. In
 * a run with `toolTimeoutMs`, the engine is first told that the call finished now: the time its
 * hand-over takes (turning an output into JSON, waiting for a later turn) is not the tool's, and
 * never makes a call that finished in time a timeout.
 */
function handOver(run, toolUseId, job) {
  const now = performance.now()
  if (sliceEnd < 0) {
    sliceEnd = now + SLICE_MS
    setImmediate(endSlice)
  }
  if (run.timed) {
    try {
      run.control.finished(toolUseId)
    } catch {}
  }
  if (handOversHead === handOvers.length && now < sliceEnd) job()
  else handOvers.push(job)
}

/** The check phase of the turn that opened the slice: what waits goes on in the next turn. */
function endSlice() {
  if (handOversHead < handOvers.length) setImmediate(nextSlice)
  else sliceEnd = -1
}

/** A turn's slice of the waiting hand-overs; the rest waits one more turn. */
function nextSlice() {
  const end = performance.now() + SLICE_MS
  do handOvers[handOversHead++]()
  while (handOversHead < handOvers.length && performance.now() < end)
  if (handOversHead < handOvers.length) {
    setImmediate(nextSlice)
    return
  }
  handOvers = []
  handOversHead = 0
  sliceEnd = -1
}

module.exports = { handOver }
