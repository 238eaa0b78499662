// `npm run bench:resume`: what taking over a durable run costs. A child process runs a run of
// STEPS tool rounds in a thread and is killed (SIGKILL) while its last request is in flight;
// once its lease has run out, this process resumes it with resumeRun and times how long the
// resumed run takes to send its request (reading the run's log: its history, its progress, its
// call records; then sending the whole history again). The same for a run of one round, as the
// baseline, on SQLite and on PostgreSQL. Prints medians; asserts nothing.
//
//   npm run bench:resume [-- --runs N --steps S]     (default 5 runs each, 50 steps)

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { median } from './format.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.join(here, '..')
const arg = (name, otherwise) => {
  const at = process.argv.indexOf(name)
  return at >= 0 ? Number(process.argv[at + 1]) : otherwise
}
const RUNS = arg('--runs', 5)
const STEPS = arg('--steps', 50)
const LEASE_MS = 300

const lib = await import(pathToFileURL(path.join(root, 'index.mjs')).href)
const { startStandIn, text, toolUse } = await import(pathToFileURL(path.join(root, 'lib', 'testing', 'index.mjs')).href)
const { startPostgres } = await import(pathToFileURL(path.join(root, 'scripts', 'postgres.mjs')).href)
const profile = (await import('node:module')).createRequire(import.meta.url)(path.join(root, 'binding.js')).buildProfile()
if (profile !== 'release') console.warn(`bench:resume: the addon is a ${profile} build: these figures mean little`)

const scratch = mkdtempSync(path.join(tmpdir(), 'atc-resume-'))
const child = path.join(scratch, 'child.mjs')
writeFileSync(
  child,
  `import { createStore, registerTool, runWithTools } from ${JSON.stringify(pathToFileURL(path.join(root, 'index.mjs')).href)}
const [url, baseURL, apiKey, thread, steps] = process.argv.slice(2)
registerTool({ definition: { name: 'lookup', description: 'Looks up', input_schema: { type: 'object' } }, execute: async () => ({ ok: true }) })
const r = await runWithTools(\`steps \${steps}\`, { store: createStore(url, { leaseMs: ${LEASE_MS} }), thread, baseURL, apiKey, maxToolIterations: 10000 })
if (r.error) console.error(r.error)
`,
)
lib.registerTool({ definition: { name: 'lookup', description: 'Looks up', input_schema: { type: 'object' } }, execute: async () => ({ ok: true }) })

// The number of rounds a thread's run makes comes from its first message ("steps N").
const stepsOf = (messages) => Number(String(messages[0].content[0]?.text ?? messages[0].content).split(' ')[1])
let waiting = null // resolves when the resumed run's request arrives
let hang = true
const s = await startStandIn({
  replies: async (request) => {
    const rounds = request.messages.filter((m) => m.role === 'user' && Array.isArray(m.content) && m.content[0]?.type === 'tool_result').length
    if (rounds < stepsOf(request.messages)) return toolUse('lookup', { n: rounds })
    if (hang) return new Promise(() => {}) // the request in flight when the child is killed
    waiting?.()
    return text('done')
  },
})

async function once(url, steps, i) {
  const thread = `t-${steps}-${i}`
  hang = true
  const before = s.requests.length
  const proc = spawn(process.execPath, [child, url, s.url, s.apiKey, thread, String(steps)], { stdio: ['ignore', 'ignore', 'inherit'] })
  // Its last request is in flight: steps + 1 requests.
  while (s.requests.length < before + steps + 1) await new Promise((r) => setTimeout(r, 5))
  await new Promise((r) => setTimeout(r, 50))
  proc.kill('SIGKILL')
  await new Promise((r) => proc.on('exit', r))
  await new Promise((r) => setTimeout(r, LEASE_MS + 100))
  const store = lib.createStore(url)
  const runId = (await store.getThread(thread)).activeRunId
  if (!runId) throw new Error(`no run left behind in ${thread}`)
  hang = false
  const arrived = new Promise((resolve) => (waiting = () => resolve(performance.now())))
  const t0 = performance.now()
  const result = lib.resumeRun(runId, { store, apiKey: s.apiKey })
  const t1 = await arrived
  const { error } = await result
  await store.close()
  if (error) throw new Error(`${error.code}: ${error.message}`)
  return t1 - t0
}

const pg = await startPostgres()
const table = []
try {
  for (const [backend, url] of [
    ['sqlite', `sqlite:${path.join(scratch, 'store.db')}`],
    ['postgres', pg.createDatabase('resume')],
  ]) {
    await once(url, 1, 'warm-up') // the first take-over of a process opens its connections
    for (const steps of [1, STEPS]) {
      const times = []
      for (let i = 0; i < RUNS; i++) times.push(await once(url, steps, i))
      table.push([backend, steps, median(times)])
    }
  }
} finally {
  pg.stop()
  await s.close()
  rmSync(scratch, { recursive: true, force: true })
}
console.log(`resumeRun until its request is sent (median of ${RUNS}; a ${profile} build):`)
for (const [backend, steps, ms] of table) console.log(`  ${backend.padEnd(8)} ${String(steps).padStart(3)} step(s): ${ms.toFixed(1)} ms`)
