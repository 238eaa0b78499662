'use strict'
// Where runs end: the one channel through which the binding hands every run's result back to
// JS, and the history in that result, parsed only when it is read.

const binding = require('../binding.js')

/**
 * The binding calls this channel's function once per run (one
 * ThreadsafeFunction for all of them), and `ending` holds each waited-for run's resolve. The
 * channel holds the event loop open while any run is waited for (`hold`), as a native promise
 * would, and never while none is.
 *
 * A run's end does not release the hold: the run's last batch of parts comes through another
 * (weak) function, and may be delivered after the end. Were the hold released here, the event
 * loop could find nothing holding it and exit with that batch still queued and the run's
 * promise unsettled. The run lets go with `notWaiting` once it has everything.
 */
const ending = new Map()
const settled = () => {}
const channel = new binding.RunChannel((runId, result, messages) => {
  const resolve = ending.get(runId)
  if (resolve === undefined) return
  ending.set(runId, settled)
  resolve({ result, messages })
})

/** The end of run `runId`, as `{ result, messages }`. */
function ended(runId) {
  return new Promise((resolve) => {
    if (ending.size === 0) channel.hold(true)
    ending.set(runId, resolve)
  })
}

/**
 * Nobody waits for run `runId` any more (it ended, or it never started): once no run is waited
 * for, the event loop may exit.
 */
function notWaiting(runId) {
  if (ending.delete(runId) && ending.size === 0) channel.hold(false)
}

/**
 * Defines `target[key]` as the UTF-8 JSON in the Buffer `json`, parsed the first time it is
 * read: the history of a long run is large and most callers never look at it. It reads, writes,
 * enumerates and serialises like a plain data property.
 */
function lazyJson(target, key, json) {
  let value
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get() {
      if (json !== null) {
        value = JSON.parse(json.toString('utf8'))
        json = null
      }
      return value
    },
    set(v) {
      json = null
      value = v
    },
  })
}

module.exports = { channel, ended, notWaiting, lazyJson }
