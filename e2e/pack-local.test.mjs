// `npm run pack:local`'s tarball for apps (.pack/app/, see scripts/pack.mjs and
// docs/contributing.md): installed into an empty project as the CLI says, the project's
// package.json names anthropic-tool-calling alone — no platform package that another machine
// could not install — and the binary inside the tarball loads and runs a conversation.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensurePacked, howToInstall } from '../scripts/pack.mjs'
import { startMockApi, demoModel } from '../stand-in/index.mjs'
import { runProcess } from './helpers.mjs'

const KEY = 'sk-ant-pack-local-test-key'
let dir, api, packed

before(async () => {
  packed = ensurePacked()
  dir = mkdtempSync(join(tmpdir(), 'atc-app-'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-app', private: true }, null, 2))
  api = await startMockApi({ apiKey: KEY, handler: demoModel })
}, { timeout: 300_000 })

after(async () => {
  await api?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

test('the CLI names the one command to run, with the app tarball', () => {
  assert.match(howToInstall(packed), new RegExp(`npm install ${packed.app.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`))
})

test('npm install <app tarball>: the app depends on the main package only, and it runs', { timeout: 120_000 }, async () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC_|npm_)/.test(k)))
  await runProcess('npm', ['install', '--no-audit', '--no-fund', packed.app], { cwd: dir, env })
  const app = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  assert.deepEqual(Object.keys(app.dependencies), ['anthropic-tool-calling'])
  assert.deepEqual(app.optionalDependencies, undefined)
  assert.deepEqual(readdirSync(join(dir, 'node_modules')).filter((n) => n.startsWith('anthropic-tool-calling')), ['anthropic-tool-calling'])
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'))
  assert.deepEqual(Object.keys(lock.packages).filter((p) => p.includes('anthropic-tool-calling-')), [], 'a platform package in the lockfile')

  writeFileSync(join(dir, 'run.cjs'), `
    const { registerTool, runWithTools } = require('anthropic-tool-calling')
    registerTool({
      definition: { name: 'get_order_status', description: 'Look up the status of an order by its ID',
        input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
      execute: async ({ orderId }) => ({ orderId, status: 'shipped', carrier: 'UPS' }),
    })
    runWithTools("What's the status of order #4821?").then((result) => {
      const native = Object.keys(require.cache).filter((k) => k.endsWith('.node'))
      console.log(JSON.stringify({ result, native }))
    })`)
  const out = JSON.parse((await runProcess(process.execPath, ['run.cjs'], { cwd: dir, env: { ...env, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: api.url } })).trim().split('\n').pop())
  assert.equal(out.result.error, null, JSON.stringify(out.result.error))
  assert.equal(out.result.data.text, 'Order #4821 is shipped. Carrier: UPS.')
  assert.equal(out.native.length, 1)
  assert.ok(out.native[0].startsWith(join(dir, 'node_modules', 'anthropic-tool-calling') + '/'), out.native[0])
})
