// Shared by the end-to-end suites: child processes that are always stopped, free ports, waiting.
import { spawn } from 'node:child_process'
import { freePort } from '../scripts/free-port.mjs'

export { freePort }

const running = new Set()

// Last resort: a child left running when this process exits (a crash, an uncaught error) is killed.
// The children run in their own process groups, so a Ctrl-C does not reach them: pass it on.
process.on('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL')
})
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    for (const child of running) killGroup(child, 'SIGKILL')
    process.exit(128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 })[signal])
  })
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal) // the whole group: `next start` may have children of its own
  } catch {
    try {
      child.kill(signal)
    } catch {}
  }
}

/**
 * Starts `cmd` in its own process group, collecting its output. `stop()` ends the group
 * (SIGTERM, then SIGKILL after 5 s) and resolves once it has exited.
 */
export function startProcess(cmd, args, { cwd, env } = {}) {
  const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  running.add(child)
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    })
    child.on('error', (err) => {
      running.delete(child)
      output += `\n${err.message}`
      resolve({ code: null, signal: null, error: err })
    })
  })
  return {
    child,
    exited,
    get output() {
      return output
    },
    get running() {
      return running.has(child)
    },
    async stop() {
      if (!running.has(child)) return exited
      killGroup(child, 'SIGTERM')
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5000)
      const result = await exited
      clearTimeout(timer)
      return result
    },
  }
}

/** Runs `cmd` to the end; rejects with its output when it fails. */
export async function runProcess(cmd, args, options) {
  const proc = startProcess(cmd, args, options)
  const { code, signal } = await proc.exited
  if (code !== 0) throw new Error(`${[cmd, ...args].join(' ')} failed (${code ?? signal}):\n${proc.output.slice(-8000)}`)
  return proc.output
}

/** Polls `url` until it answers 200; fails early when `proc` exits. */
export async function waitForHttp(url, proc, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    if (proc && !proc.running) throw new Error(`the server exited before answering ${url}:\n${proc.output.slice(-8000)}`)
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) })
      if (res.status === 200) return
      last = `HTTP ${res.status}`
    } catch (err) {
      last = err.message
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (last: ${last})\n${proc ? proc.output.slice(-8000) : ''}`)
}
