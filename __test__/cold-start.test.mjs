// What `require` loads: a plain run's modules, and none of those a plain run never touches (the
// stream, useChat's UI messages, MCP, Standard Schemas, credential functions, hooks), which load
// the first time they are used.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

/** The package's own modules loaded after `script` runs in a fresh process (paths from the root). */
function loadedAfter(script) {
  const program = `
    const m = require(${JSON.stringify(root)});
    ${script}
    const own = Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(root)}) && !f.includes('node_modules'));
    process.stdout.write(JSON.stringify(own.map((f) => f.slice(${root.length})).sort()));`
  return JSON.parse(execFileSync(process.execPath, ['-e', program], { encoding: 'utf8' }))
}

const LAZY = ['lib/stream/part-stream.js', 'lib/stream/ui-chunker.js', 'lib/ui-messages.js', 'lib/mcp.js', 'lib/standard-schema.js', 'lib/credentials.js', 'lib/hooks.js']

test('require and a first registerTool load no module of streaming, UI messages, MCP, Standard Schemas, credentials or hooks', () => {
  const loaded = loadedAfter(`m.registerTool({ definition: { name: 't', input_schema: { type: 'object' } }, execute: () => 1 })`)
  assert.ok(loaded.includes('index.js') && loaded.includes('lib/run.js'), JSON.stringify(loaded))
  for (const file of LAZY) assert.ok(!loaded.includes(file), `${file} was loaded: ${JSON.stringify(loaded)}`)
})

test('each lazy module loads the first time its entry point is used, and works', () => {
  assert.ok(loadedAfter(`m.streamWithTools('Hi', { apiKey: 'sk-ant-test', baseURL: 'http://127.0.0.1:9', maxRetries: 0 })`).includes('lib/stream/part-stream.js'))
  const ui = loadedAfter(`const p = m.fromUIMessages([{ id: '1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }]); if (p[0].content[0].text !== 'Hi') throw new Error(JSON.stringify(p))`)
  assert.ok(ui.includes('lib/ui-messages.js'))
  assert.ok(!ui.includes('lib/mcp.js'))
  const mcp = loadedAfter(`m.registerMcpServer(null).catch((e) => { if (!(e instanceof TypeError)) process.exit(3) })`)
  assert.ok(mcp.includes('lib/mcp.js'))
})

test('a plain run loads none of them either', () => {
  const loaded = loadedAfter(`m.registerTool({ definition: { name: 't', input_schema: { type: 'object' } }, execute: () => 1 }); m.runWithTools('Hi', { apiKey: 'sk-ant-test', baseURL: 'http://127.0.0.1:9', maxRetries: 0 }).then((r) => { if (r.error.code !== 'network_error') process.exit(3) })`)
  for (const file of LAZY) assert.ok(!loaded.includes(file), `${file} was loaded: ${JSON.stringify(loaded)}`)
})

test('a Standard Schema loads lib/standard-schema.js with its tool, and a provider object lib/credentials.js with its run', () => {
  // A Standard Schema of the smallest kind: its JSON Schema, and a validate that passes anything.
  const schema = `{ '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value }), jsonSchema: { input: () => ({ type: 'object' }) } } }`
  const tool = loadedAfter(`m.registerTool({ definition: { name: 't', input_schema: ${schema} }, execute: () => 1 }); if (m.listTools().length !== 1) process.exit(3)`)
  assert.ok(tool.includes('lib/standard-schema.js'), JSON.stringify(tool))
  assert.ok(!tool.includes('lib/credentials.js'))
  const provider = loadedAfter(`m.runWithTools('Hi', { provider: { type: 'nowhere' }, maxRetries: 0 }).then((r) => { if (r.error.code !== 'invalid_request') process.exit(3) })`)
  assert.ok(provider.includes('lib/credentials.js'), JSON.stringify(provider))
})
