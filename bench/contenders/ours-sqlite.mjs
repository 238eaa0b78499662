// This package with a store: the `ours` contender's runs, each in a thread of its own in a SQLite
// store (a file in the temporary folder, one per child). Its figures beside `ours` are what
// keeping the conversation costs: every run makes its thread, takes and lets go of it, and commits
// each step, off the JS thread.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadPackage } from './ours.mjs'

export function setup(config) {
  const dir = mkdtempSync(join(tmpdir(), 'atc-bench-store-'))
  // A measurement writes tens of megabytes here: gone with the child, however it ends.
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  return stored(config, `sqlite:${join(dir, 'store.db')}`)
}

/** The `ours` runs in threads of the store at `url`; each run's thread is checked to hold it whole. */
export async function stored(config, url) {
  const { lib, options, info } = loadPackage(config)
  const store = lib.createStore(url)
  let n = 0
  return {
    info,
    async run() {
      const i = n++
      const thread = `bench-${process.pid}-${i}`
      const { data, error } = await lib.runWithTools(config.workload.prompt, { ...options, store, thread })
      if (error) throw new Error(`${error.code}: ${error.message}`)
      // The first thread is read back whole: the prompt, a reply and its results per round, and the
      // answer. (Only the first: reading data.messages parses the history on the main thread, which
      // the plain contender never does, and would be counted as the store's cost.)
      if (i === 0) {
        const kept = await store.getThread(thread)
        const expected = 2 + 2 * config.workload.rounds
        if (kept?.messages.length !== expected) throw new Error(`the thread holds ${kept?.messages.length} messages, not ${expected}`)
      }
      return { text: data.text, calls: data.toolCalls.length }
    },
  }
}
