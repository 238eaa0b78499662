// This package with its lifecycle hooks set: the `ours` contender's runs, each with `onToolCall`,
// `onToolResult` and `onStepFinish`, cheap functions that count what they are told. Its figures
// beside `ours` are what watching a run costs (the parts the hooks are fed are made and handed
// to JS for them).
//
// Every run is checked on its hooks too: each of its calls told to onToolCall and onToolResult,
// each of its replies to onStepFinish, all before the run's result comes back.
import { loadPackage } from './ours.mjs'

export async function setup(config) {
  const { workload } = config
  const { lib, options, info } = loadPackage(config)
  const calls = workload.rounds * workload.callsPerRound
  const steps = workload.rounds + 1
  return {
    info,
    async run() {
      let called = 0
      let resulted = 0
      let finished = 0
      const { data, error } = await lib.runWithTools(workload.prompt, {
        ...options,
        onToolCall: () => {
          called++
        },
        onToolResult: () => {
          resulted++
        },
        onStepFinish: () => {
          finished++
        },
      })
      if (error) throw new Error(`${error.code}: ${error.message}`)
      if (called !== calls || resulted !== calls || finished !== steps) {
        throw new Error(`hooks: onToolCall ${called}×, onToolResult ${resulted}×, onStepFinish ${finished}× in a run of ${calls} call(s) and ${steps} replies`)
      }
      return { text: data.text, calls: data.toolCalls.length }
    },
  }
}
