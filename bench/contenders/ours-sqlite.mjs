// This package with a store: the `ours` contender's runs, each in a thread of its own in a SQLite
// store (a file in the temporary folder, one per child). Its figures beside `ours` are what
// keeping the conversation costs: every run makes its thread, takes and lets go of it, and commits
// each step, off the JS thread.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadPackage } from './ours.mjs'

export const setup = (config) => stored(config, `sqlite:${join(mkdtempSync(join(tmpdir(), 'atc-bench-store-')), 'store.db')}`)

/** The `ours` runs in threads of the store at `url`; each run's thread is checked to hold it whole. */
export async function stored(config, url) {
  const { lib, options, info } = loadPackage(config)
  const store = lib.createStore(url)
  let n = 0
  return {
    info,
    async run() {
      const thread = `bench-${process.pid}-${n++}`
      const { data, error } = await lib.runWithTools(config.workload.prompt, { ...options, store, thread })
      if (error) throw new Error(`${error.code}: ${error.message}`)
      // The thread holds the run: the prompt, a reply and its results per round, and the answer.
      const expected = 2 + 2 * config.workload.rounds
      if (data.messages.length !== expected) throw new Error(`the thread holds ${data.messages.length} messages, not ${expected}`)
      return { text: data.text, calls: data.toolCalls.length }
    },
  }
}
