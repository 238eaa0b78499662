// The stand-in API process (bench/server.mjs), from the driver's side: started once for the whole
// run, and asked for its counters (requests, statuses, mismatches, its own CPU) over IPC before and
// after each measurement, so each one is checked on the server's side as well as the child's.

import { fork } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { launcher, niceArgs, priority } from './settings.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

/** `env`: the children's environment (see preconditions.mjs). */
export function startServer(env) {
  const server = fork(path.join(here, 'server.mjs'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env,
    ...(priority === null ? {} : { execPath: launcher, execArgv: niceArgs }),
  })
  const pending = new Map()
  let nextId = 0
  server.on('message', (msg) => {
    if (msg?.type === 'stats' && pending.has(msg.id)) {
      pending.get(msg.id)(msg.stats)
      pending.delete(msg.id)
    }
  })
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the stand-in API did not start within 15 s')), 15_000)
    server.once('message', (msg) => {
      clearTimeout(timer)
      if (msg?.type === 'ready') resolve(msg.url)
      else reject(new Error(`the stand-in API said ${JSON.stringify(msg)}`))
    })
    server.once('exit', (code) => reject(new Error(`the stand-in API exited (${code})`)))
  })
  function stats() {
    return new Promise((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => reject(new Error('the stand-in API did not answer for its stats within 10 s')), 10_000)
      pending.set(id, (s) => {
        clearTimeout(timer)
        resolve(s)
      })
      server.send({ type: 'stats', id })
    })
  }
  return { process: server, ready, stats }
}
