// `npm run bench:followers`: what following a run's stream costs the instance that runs it
// (resumable streams, docs/threads.md). A child process — the running instance — streams a run in
// a thread of a store (ROUNDS tool rounds, each reply's text streamed in small deltas) and reports
// its wall time and its CPU time (process.cpuUsage: JS and the engine's threads). This process —
// another instance sharing the store — follows it with 0 or 2 `resumeStream` readers, on SQLite
// and on PostgreSQL. Prints medians; asserts nothing.
//
//   npm run bench:followers [-- --runs N --rounds R]     (default 5 runs each, 5 rounds)

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
const ROUNDS = arg('--rounds', 5)
const TEXT = 'The order left the warehouse on Monday and is on its way to you now. '.repeat(20)

const lib = await import(pathToFileURL(path.join(root, 'index.mjs')).href)
const { startMockApi, reply, text, toolUse } = await import(pathToFileURL(path.join(root, 'stand-in', 'index.mjs')).href)
const { startPostgres } = await import(pathToFileURL(path.join(root, 'scripts', 'postgres.mjs')).href)
const profile = (await import('node:module')).createRequire(import.meta.url)(path.join(root, 'binding.js')).buildProfile()
if (profile !== 'release') console.warn(`bench:followers: the addon is a ${profile} build: these figures mean little`)

const KEY = 'sk-ant-bench-followers-0123456789'
const scratch = mkdtempSync(path.join(tmpdir(), 'atc-followers-'))
const child = path.join(scratch, 'child.mjs')
writeFileSync(
  child,
  `import { createStore, registerTool, streamWithTools } from ${JSON.stringify(pathToFileURL(path.join(root, 'index.mjs')).href)}
const [url, baseURL, apiKey, thread] = process.argv.slice(2)
registerTool({ definition: { name: 'lookup', description: 'Looks up', input_schema: { type: 'object' } }, execute: async () => ({ ok: true }) })
const store = createStore(url)
process.stdout.write('ready\\n')
await new Promise((r) => process.stdin.once('data', r))
process.stdin.destroy()
const cpu = process.cpuUsage()
const t0 = performance.now()
const stream = streamWithTools('Where is my order?', { store, thread, baseURL, apiKey, maxToolIterations: 1000 })
await stream.toUIMessageStreamResponse().text()
const ms = performance.now() - t0
const used = process.cpuUsage(cpu)
const r = await stream.result
if (r.error) console.error(r.error)
await store.close()
process.stdout.write('RESULT ' + JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000 }) + '\\n')
`,
)

const api = await startMockApi({ apiKey: KEY, logLevel: 'silent' })
// Each run: ROUNDS replies of text and a tool call, then the answer; every reply's text in deltas
// of a few characters, 1 ms apart.
const script = () => {
  const steps = []
  for (let i = 0; i < ROUNDS; i++) steps.push({ ...reply([text(TEXT), toolUse('lookup', { n: i })]), streamDelayMs: 1 })
  steps.push({ ...reply([text(TEXT)]), streamDelayMs: 1 })
  return steps
}

async function once(url, followers, i) {
  const thread = `t-${followers}-${i}`
  api.script(...script())
  const proc = spawn(process.execPath, [child, url, api.url, KEY, thread], { stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  proc.stdout.on('data', (d) => (out += d))
  while (!out.includes('ready')) await new Promise((r) => setTimeout(r, 5))
  const store = lib.createStore(url)
  proc.stdin.end('go\n')
  const reading = []
  for (let f = 0; f < followers; f++) {
    reading.push(
      (async () => {
        for (;;) {
          const res = await lib.resumeStream({ thread }, { store })
          if (res.status === 200) return res.text()
          if (out.includes('RESULT ')) return ''
          await new Promise((r) => setTimeout(r, 5))
        }
      })(),
    )
  }
  await new Promise((r) => proc.on('exit', r))
  const texts = await Promise.all(reading)
  await store.close()
  for (const t of texts) if (!t.endsWith('data: [DONE]\n\n')) throw new Error('a follower did not get the whole stream')
  const line = out.split('\n').find((l) => l.startsWith('RESULT '))
  if (!line) throw new Error(`the child printed no result: ${out}`)
  return JSON.parse(line.slice('RESULT '.length))
}

const pg = await startPostgres()
const table = []
try {
  for (const [backend, url] of [
    ['sqlite', `sqlite:${path.join(scratch, 'store.db')}`],
    ['postgres', pg.createDatabase('followers')],
  ]) {
    await once(url, 0, 'warm-up')
    for (let i = 0; i < RUNS; i++) {
      // Alternated, so that a drift of the machine weighs on both alike.
      for (const followers of [0, 2]) {
        const r = await once(url, followers, i)
        table.push({ backend, followers, ...r })
      }
    }
  }
} finally {
  pg.stop()
  await api.close()
  rmSync(scratch, { recursive: true, force: true })
}
console.log(`a streamed run of ${ROUNDS} rounds in the running instance, followed from another (median of ${RUNS}; a ${profile} build):`)
for (const backend of ['sqlite', 'postgres']) {
  for (const followers of [0, 2]) {
    const rows = table.filter((r) => r.backend === backend && r.followers === followers)
    console.log(`  ${backend.padEnd(8)} ${followers} followers: ${median(rows.map((r) => r.ms)).toFixed(1)} ms wall, ${median(rows.map((r) => r.cpuMs)).toFixed(1)} ms CPU`)
  }
}
