// The package as a user installs it: the `npm pack` tarballs of the main package and of the
// npm/linux-x64-gnu platform package (what the registry would serve), installed into an empty
// project on a PATH without cargo. It must load from CommonJS and ESM and run a conversation; its
// test kit (anthropic-tool-calling/testing) must load too, run the examples of docs/testing.md
// under vitest and node:test as they are written there, and serve `npx anthropic-tool-calling stand-in`.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensurePacked } from '../scripts/pack.mjs'
import { startMockApi, demoModel } from '../stand-in/index.mjs'
import { freePort, runProcess, startProcess } from './helpers.mjs'

const KEY = 'sk-ant-package-test-key'
/** The vitest the docs' example runs under: 4.x is the last line that supports Node 20 (5 needs 22.12). */
const VITEST = '4.1.12'
const root = fileURLToPath(new URL('..', import.meta.url))
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
  const kit = ['lib/testing/index.js', 'lib/testing/index.mjs', 'lib/testing/index.d.ts', 'lib/testing/cli.mjs', 'stand-in/server.mjs', 'stand-in/default-model.mjs']
  for (const f of ['package.json', 'index.js', 'index.mjs', 'index.d.ts', 'binding.js', 'binding.d.ts', 'README.md', ...kit]) assert.ok(main.includes(f), `${f} missing from ${main}`)
  assert.ok(!main.includes('stand-in/rules.json'), 'the rules table is for the repository\'s tests only')
  assert.deepEqual(list(tarballs.platform).sort(), ['README.md', 'anthropic-tool-calling.linux-x64-gnu.node', 'package.json'])
  const pkg = JSON.parse(spawnSync('tar', ['xzf', tarballs.main, '-O', 'package/package.json'], { encoding: 'utf8' }).stdout)
  assert.equal(pkg.optionalDependencies[tarballs.platformPackage], pkg.version)
  assert.deepEqual(pkg.exports['.'], { types: './index.d.ts', import: './index.mjs', require: './index.js' })
  assert.deepEqual(pkg.exports['./testing'], { types: './lib/testing/index.d.ts', import: './lib/testing/index.mjs', require: './lib/testing/index.js' })
  assert.deepEqual(pkg.bin, { 'anthropic-tool-calling': 'lib/testing/cli.mjs' })
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), [], 'no runtime dependency')
  assert.equal(pkg.engines.node, '>= 20')
})

test('installs into an empty project without a Rust toolchain', { timeout: 120_000 }, async () => {
  // The app names only the main package, as a user's does; `overrides` stands in for the registry
  // serving the platform package the main one asks for in optionalDependencies.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({
    name: 'consumer', private: true,
    dependencies: { 'anthropic-tool-calling': `file:${tarballs.main}` },
    devDependencies: { typescript: '5.9.3', vitest: VITEST },
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
    export async function scripted(): Promise<string> {
      const api: StandIn = await startStandIn({ replies: [toolUse('get_order_status', { orderId: '1' }), text('Shipped.'), rateLimited(2)] })
      await api.close()
      return api.url + api.apiKey + api.requests.length
    }
    // @ts-expect-error: a number of seconds
    rateLimited('2')
  `
  const imports = 'registerTool, runWithTools, ToolError, type RunResult, type AIErrorCode, type ToolCall'
  const kit = 'startStandIn, toolUse, text, rateLimited, type StandIn'
  for (const file of ['types-esm.mts', 'types-cjs.cts']) {
    writeFileSync(join(dir, file), `import { ${imports} } from 'anthropic-tool-calling'\nimport { ${kit} } from 'anthropic-tool-calling/testing'\n${use}`)
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, types: [] },
    files: ['types-esm.mts', 'types-cjs.cts'],
  }))
  await runProcess(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir, env })
})

test('the test kit loads from CommonJS and ESM (one module instance) and scripts a run', { timeout: 60_000 }, async () => {
  const out = await runConsumer('kit.mjs', `
    import { registerTool, runWithTools } from 'anthropic-tool-calling'
    import { startStandIn, toolUse, text } from 'anthropic-tool-calling/testing'
    import { createRequire } from 'node:module'
    const require = createRequire(import.meta.url)
    const cjs = require('anthropic-tool-calling/testing')
    if (cjs.startStandIn !== startStandIn) throw new Error('two module instances')
    registerTool({
      definition: { name: 'get_order_status', input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
      execute: async ({ orderId }) => ({ orderId, status: 'shipped' }),
    })
    const api = await startStandIn({ replies: [toolUse('get_order_status', { orderId: '4821' }), text('Shipped.')] })
    const result = await runWithTools('Where is #4821?', { apiKey: api.apiKey, baseURL: api.url })
    await api.close()
    console.log(JSON.stringify({ result, requests: api.requests.length, resolved: require.resolve('anthropic-tool-calling/testing') }))`)
  assert.equal(out.result.error, null, JSON.stringify(out.result.error))
  assert.equal(out.result.data.text, 'Shipped.')
  assert.deepEqual(out.result.data.toolCalls.map((c) => c.output), [{ orderId: '4821', status: 'shipped' }])
  assert.equal(out.requests, 2)
  assert.equal(out.resolved, join(dir, 'node_modules', 'anthropic-tool-calling', 'lib', 'testing', 'index.js'))
})

/** The code blocks of docs/testing.md whose first line names a file (`// orders.test.ts`), by name. */
function docExamples() {
  const page = readFileSync(join(root, 'docs', 'testing.md'), 'utf8')
  const files = {}
  for (const [, name, body] of page.matchAll(/```\w*\n\/\/ (\S+\.(?:mjs|cjs|ts))\n([\s\S]*?)```/g)) files[name] = `// ${name}\n${body}`
  return files
}

test('docs/testing.md: its vitest and node:test examples pass as written', { timeout: 120_000 }, async () => {
  const files = docExamples()
  assert.deepEqual(Object.keys(files).sort(), ['orders.node-test.mjs', 'orders.test.ts', 'tools.mjs'])
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body)
  const vitest = await runProcess(process.execPath, [join(dir, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'orders.test.ts'], { cwd: dir, env: { ...env, CI: '1', NO_COLOR: '1' } })
  assert.match(vitest, /Tests\s+2 passed \(2\)/, vitest)
  // As a developer runs it, not as a child of this test runner (which would skip it).
  const { NODE_TEST_CONTEXT, ...outside } = env
  const nodeTest = await runProcess(process.execPath, ['--test', 'orders.node-test.mjs'], { cwd: dir, env: outside })
  assert.match(nodeTest, /# pass 2\n# fail 0/, nodeTest)
})

test('`npx anthropic-tool-calling stand-in --port N` serves the stand-in for next dev; SIGTERM stops it', { timeout: 60_000 }, async (t) => {
  const port = await freePort()
  const proc = startProcess('npx', ['--no', 'anthropic-tool-calling', 'stand-in', '--port', String(port)], { cwd: dir, env })
  t.after(() => proc.stop())
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  while (!proc.output.includes(`ANTHROPIC_BASE_URL=${url}`)) {
    assert.ok(proc.running, proc.output)
    assert.ok(Date.now() < deadline, `no address printed: ${proc.output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  assert.match(proc.output, /ANTHROPIC_API_KEY=sk-ant-local-stand-in/)
  const out = await runConsumer('dev.mjs', `
    import { registerTool, runWithTools } from 'anthropic-tool-calling'
    registerTool({
      definition: { name: 'get_order_status', input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
      execute: async ({ orderId }) => ({ orderId, status: 'shipped' }),
    })
    const result = await runWithTools('Call get_order_status with {"orderId": "4821"}', { apiKey: 'sk-ant-local-stand-in', baseURL: '${url}' })
    console.log(JSON.stringify({ result }))`)
  assert.equal(out.result.error, null, JSON.stringify(out.result.error))
  assert.equal(out.result.data.text, 'get_order_status returned: {"orderId":"4821","status":"shipped"}')
  const { code, signal } = await proc.stop()
  assert.ok(code === 0 || signal === 'SIGTERM', `exited ${code ?? signal}: ${proc.output}`)
})
