// The package as a user installs it: the `npm pack` tarballs of the main package and of the
// npm/linux-x64-gnu platform package (what the registry would serve), installed into an empty
// project on a PATH without cargo. It must load from CommonJS and ESM and run a conversation.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { ensurePacked } from '../scripts/pack.mjs'
import { startMockApi, demoModel } from '../stand-in/index.mjs'
import { runProcess } from './helpers.mjs'

const KEY = 'sk-ant-package-test-key'
let dir, api, tarballs, env

/** PATH without any directory that holds cargo (or rustc), and no Rust variables. */
function envWithoutRust() {
  const path = process.env.PATH.split(delimiter).filter((d) => d && !['cargo', 'rustc'].some((bin) => existsSync(join(d, bin))))
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(CARGO|RUSTUP|RUSTC|ANTHROPIC_|npm_)/.test(k)))
  return { ...clean, PATH: path.join(delimiter) }
}

before(async () => {
  tarballs = ensurePacked()
  dir = mkdtempSync(join(tmpdir(), 'atc-consumer-'))
  env = envWithoutRust()
  api = await startMockApi({ apiKey: KEY, handler: demoModel })
}, { timeout: 300_000 })

after(async () => {
  await api?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

test('cargo is not on the PATH the install and the runs use', () => {
  const r = spawnSync('cargo', ['--version'], { env })
  assert.equal(r.error?.code, 'ENOENT', 'cargo was found')
})

test('the tarballs: the main package has no binary and no sources; the platform package has the .node', () => {
  const list = (tgz) => spawnSync('tar', ['tzf', tgz], { encoding: 'utf8' }).stdout.trim().split('\n').map((f) => f.replace(/^package\//, ''))
  const main = list(tarballs.main)
  assert.deepEqual(main.filter((f) => /(^|\/)(src|target|tests|__test__|node_modules|scripts)\/|\.node$|\.rs$|Cargo/.test(f)), [])
  for (const f of ['package.json', 'index.js', 'index.mjs', 'index.d.ts', 'binding.js', 'binding.d.ts', 'README.md']) assert.ok(main.includes(f), `${f} missing from ${main}`)
  assert.deepEqual(list(tarballs.platform).sort(), ['README.md', 'anthropic-tool-calling.linux-x64-gnu.node', 'package.json'])
  const pkg = JSON.parse(spawnSync('tar', ['xzf', tarballs.main, '-O', 'package/package.json'], { encoding: 'utf8' }).stdout)
  assert.equal(pkg.optionalDependencies[tarballs.platformPackage], pkg.version)
  assert.deepEqual(pkg.exports['.'], { types: './index.d.ts', import: './index.mjs', require: './index.js' })
  assert.equal(pkg.engines.node, '>= 20')
})

test('installs into an empty project without a Rust toolchain', { timeout: 120_000 }, async () => {
  // The app names only the main package, as a user's does; `overrides` stands in for the registry
  // serving the platform package the main one asks for in optionalDependencies.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({
    name: 'consumer', private: true,
    dependencies: { 'anthropic-tool-calling': `file:${tarballs.main}` },
    devDependencies: { typescript: '5.9.3' },
    overrides: { [tarballs.platformPackage]: `file:${tarballs.platform}` },
    allowScripts: { 'anthropic-tool-calling': false },
  }, null, 2))
  await runProcess('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock'], { cwd: dir, env })
  for (const name of ['anthropic-tool-calling', tarballs.platformPackage]) {
    const st = lstatSync(join(dir, 'node_modules', name))
    assert.ok(st.isDirectory() && !st.isSymbolicLink(), `${name} is not a real copy`)
  }
  const installed = readdirSync(join(dir, 'node_modules', 'anthropic-tool-calling'))
  assert.ok(!installed.some((f) => f.endsWith('.node')), `the main package carries a binary: ${installed}`)
  assert.ok(existsSync(join(dir, 'node_modules', tarballs.platformPackage, 'anthropic-tool-calling.linux-x64-gnu.node')))
})

const TOOL = `
  registerTool({
    definition: { name: 'get_order_status', description: 'Look up the status of an order by its ID',
      input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
    execute: async ({ orderId }) => ({ orderId, status: 'shipped', carrier: 'UPS' }),
  })
  const result = await runWithTools("What's the status of order #4821?")
  const native = Object.keys(CACHE).filter((k) => k.endsWith('.node'))
  console.log(JSON.stringify({ result, resolved: RESOLVED, native, toolError: typeof ToolError }))
`

async function runConsumer(file, source) {
  writeFileSync(join(dir, file), source)
  const out = await runProcess(process.execPath, [file], { cwd: dir, env: { ...env, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: api.url } })
  return JSON.parse(out.trim().split('\n').pop())
}

function assertConversation({ result, resolved, native, toolError }) {
  assert.equal(result.error, null, JSON.stringify(result.error))
  assert.equal(result.data.text, 'Order #4821 is shipped. Carrier: UPS.')
  assert.deepEqual(result.data.toolCalls.map(({ toolName, input, output }) => ({ toolName, input, output })), [
    { toolName: 'get_order_status', input: { orderId: '4821' }, output: { orderId: '4821', status: 'shipped', carrier: 'UPS' } },
  ])
  assert.ok(resolved.startsWith(join(dir, 'node_modules', 'anthropic-tool-calling')), `loaded from ${resolved}`)
  // The binary comes from the platform package, nowhere else.
  assert.deepEqual(native, [join(dir, 'node_modules', tarballs.platformPackage, 'anthropic-tool-calling.linux-x64-gnu.node')])
  assert.equal(toolError, 'function')
}

test('CommonJS: require() loads it and runs a conversation against the stand-in', { timeout: 60_000 }, async () => {
  const out = await runConsumer('consumer.cjs', `
    const { registerTool, runWithTools, ToolError } = require('anthropic-tool-calling')
    const RESOLVED = require.resolve('anthropic-tool-calling')
    const CACHE = require.cache
    ;(async () => { ${TOOL} })()`)
  assertConversation(out)
})

test('ESM: import loads it (one module instance with require) and runs a conversation', { timeout: 60_000 }, async () => {
  const out = await runConsumer('consumer.mjs', `
    import { registerTool, runWithTools, ToolError } from 'anthropic-tool-calling'
    import pkg from 'anthropic-tool-calling'
    import { createRequire } from 'node:module'
    const require = createRequire(import.meta.url)
    if (require('anthropic-tool-calling').ToolError !== ToolError || pkg.runWithTools !== runWithTools) throw new Error('two module instances')
    const RESOLVED = import.meta.resolve('anthropic-tool-calling').replace('file://', '')
    const CACHE = require.cache
    ${TOOL}`)
  assertConversation(out)
  const binding = readFileSync(join(dir, 'node_modules', 'anthropic-tool-calling', 'binding.js'), 'utf8')
  assert.match(binding, /require\('anthropic-tool-calling-linux-x64-gnu'\)/)
})

test('without @opentelemetry/api installed (an optional peer), runs and streams work and trace nothing', { timeout: 60_000 }, async () => {
  const out = await runConsumer('untraced.cjs', `
    const { registerTool, runWithTools, streamWithTools, ToolError } = require('anthropic-tool-calling')
    const RESOLVED = require.resolve('anthropic-tool-calling')
    const CACHE = require.cache
    let api = 'installed'
    try { require.resolve('@opentelemetry/api') } catch (e) { api = e.code }
    ;(async () => {
      registerTool({
        definition: { name: 'get_order_status', description: 'Look up the status of an order by its ID',
          input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
        execute: async ({ orderId }) => ({ orderId, status: 'shipped', carrier: 'UPS' }),
      })
      const result = await runWithTools("What's the status of order #4821?", { telemetry: { recordContent: true } })
      const types = []
      for await (const part of streamWithTools("What's the status of order #4821?")) types.push(part.type)
      const native = Object.keys(CACHE).filter((k) => k.endsWith('.node'))
      console.log(JSON.stringify({ result, resolved: RESOLVED, native, toolError: typeof ToolError, api, types }))
    })()`)
  assert.equal(out.api, 'MODULE_NOT_FOUND', 'the consumer has no @opentelemetry/api')
  assertConversation(out)
  assert.equal(out.types.at(-1), 'finish')
  assert.ok(out.types.every((t) => !t.startsWith('trace-')), out.types.join(','))
})

test('types: the exports map gives TypeScript the declarations from CommonJS and from ESM (module node16)', { timeout: 60_000 }, async () => {
  const use = `
    registerTool<{ orderId: string }>({
      definition: { name: 'get_order_status', input_schema: { type: 'object', properties: { orderId: { type: 'string' } } } },
      execute: async ({ orderId }, ctx) => ({ orderId, useId: ctx.toolUseId }),
    })
    export async function ask(): Promise<string> {
      const r: RunResult = await runWithTools('hi', { onToolError: 'continue', maxToolIterations: 2 })
      if (r.error) return r.error.code satisfies AIErrorCode
      const calls: ToolCall[] = r.data.toolCalls
      return r.data.text + calls.length + String(new ToolError('x').message)
    }
    // @ts-expect-error: not an option
    runWithTools('hi', { onToolEror: 'continue' })
  `
  const imports = 'registerTool, runWithTools, ToolError, type RunResult, type AIErrorCode, type ToolCall'
  writeFileSync(join(dir, 'types-esm.mts'), `import { ${imports} } from 'anthropic-tool-calling'\n${use}`)
  writeFileSync(join(dir, 'types-cjs.cts'), `import { ${imports} } from 'anthropic-tool-calling'\n${use}`)
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, types: [] },
    files: ['types-esm.mts', 'types-cjs.cts'],
  }))
  await runProcess(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir, env })
})
