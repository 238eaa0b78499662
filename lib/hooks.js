'use strict'
// The observer hooks of a run (`onToolCall`, `onToolResult`, `onStepFinish`): they watch, and
// nothing they do changes or ends the run.

/** Calls an observer hook; a throw (or a rejection) is logged and never ends the run. */
function callHook(hooks, name, arg) {
  const hook = hooks[name]
  if (typeof hook !== 'function') return
  const report = (e) => console.error(`[anthropic-tool-calling] ${name} threw; the run goes on:`, e)
  try {
    const out = hook(arg)
    if (out !== null && typeof out === 'object' && typeof out.then === 'function') out.then(undefined, report)
  } catch (e) {
    report(e)
  }
}

module.exports = { callHook }
