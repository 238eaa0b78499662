// An MCP server's tool list has a byte budget: a server cannot take the process's memory by
// listing more than it (at registration, or later with list_changed). Past it registration is
// refused naming the server and the limit, and a later list keeps the tools offered before.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { registerMcpServer, unregisterMcpServer, listTools } from '../index.mjs'
import { startHostile } from './fixtures/mcp-hostile-server.mjs'
import { freshName } from './helpers.mjs'

const MIB = 1024 * 1024
const INDEX = JSON.stringify(new URL('../index.mjs', import.meta.url).href)

/** About `bytes` of tool definitions as JSON: many small tools of many small properties, the shape that costs most once parsed. */
function manyTools(bytes, from = 0) {
  const properties = {}
  for (let p = 0; p < 40; p++) properties[`p${p}`] = { type: 'string', description: `field ${p}` }
  const one = JSON.stringify({ name: 't0', description: 'a tool', inputSchema: { type: 'object', properties } }).length
  return Array.from({ length: Math.ceil(bytes / one) }, (_, i) => ({ name: `t${from + i}`, description: 'a tool', inputSchema: { type: 'object', properties } }))
}

/** Runs `script` (an ES module) in a child Node process; resolves with its status, stdout and stderr. */
function child(script, env = {}) {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ANTHROPIC_TOOL_CALLING_LOG: '', ...env } })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (c) => (stdout += c))
    proc.stderr.on('data', (c) => (stderr += c))
    const timer = setTimeout(() => proc.kill('SIGKILL'), 120_000)
    proc.on('close', (status, signal) => {
      clearTimeout(timer)
      resolve({ status, signal, stdout, stderr })
    })
  })
}

test('two pages of 15 MiB: registering grows the memory of the process by less than 200 MiB and is refused naming the server and the limit', async (t) => {
  const pages = [manyTools(15 * MIB), manyTools(15 * MIB, 1e6)]
  const huge = await startHostile({ list: (ctx) => (ctx.msg.params?.cursor ? ctx.answer({ tools: pages[1] }) : ctx.answer({ tools: pages[0], nextCursor: 'page-2' })) })
  t.after(() => huge.close())
  const small = await startHostile()
  t.after(() => small.close())
  const script = `
    import { registerMcpServer, unregisterMcpServer } from ${INDEX}
    // The addon, its runtime and one session are paid for before the measure starts.
    await registerMcpServer({ name: 'warm', url: ${JSON.stringify(small.url)} })
    await unregisterMcpServer('warm')
    globalThis.gc?.()
    const before = process.memoryUsage().rss
    const error = await registerMcpServer({ name: 'huge', url: ${JSON.stringify(huge.url)} }).then(() => null, (e) => e.message)
    const peak = process.resourceUsage().maxRSS * 1024
    console.log(JSON.stringify({ grewMiB: (peak - before) / ${MIB}, error }))
  `
  const run = await child(script)
  assert.equal(run.status, 0, run.stderr)
  const { grewMiB, error } = JSON.parse(run.stdout)
  t.diagnostic(`the process grew by ${grewMiB.toFixed(0)} MiB`)
  assert.ok(grewMiB < 200, `the process grew by ${grewMiB.toFixed(0)} MiB`)
  assert.match(error, /MCP server "huge"/)
  assert.match(error, /larger than 2 MiB/)
})

test('a stdio server writing two 15 MiB pages: the same, its lines weighed before they are parsed', async () => {
  const server = JSON.stringify(new URL('./fixtures/mcp-huge-stdio.mjs', import.meta.url).pathname)
  const script = `
    import { registerMcpServer, unregisterMcpServer } from ${INDEX}
    await registerMcpServer({ name: 'warm', command: process.execPath, args: [${server}, '0.01'] })
    await unregisterMcpServer('warm')
    const before = process.memoryUsage().rss
    const error = await registerMcpServer({ name: 'huge', command: process.execPath, args: [${server}, '15'] }).then(() => null, (e) => e.message)
    const peak = process.resourceUsage().maxRSS * 1024
    console.log(JSON.stringify({ grewMiB: (peak - before) / ${MIB}, error }))
    process.exit(0)
  `
  const run = await child(script)
  assert.equal(run.status, 0, run.stderr)
  const { grewMiB, error } = JSON.parse(run.stdout)
  assert.ok(grewMiB < 200, `the process grew by ${grewMiB.toFixed(0)} MiB`)
  assert.match(error, /MCP server "huge".*larger than 2 MiB/)
})

test('one list past the budget over several pages is refused whole; a tool or a schema past its own limit is named and not offered', async (t) => {
  // 3 pages of 0.8 MiB: each page within the budget, the list past it.
  const pages = [manyTools(0.8 * MIB), manyTools(0.8 * MIB, 1e5), manyTools(0.8 * MIB, 2e5)]
  const paged = await startHostile({ list: (ctx) => { const at = Number(ctx.msg.params?.cursor ?? 0); ctx.answer({ tools: pages[at], ...(at < 2 ? { nextCursor: String(at + 1) } : {}) }) } })
  t.after(() => paged.close())
  const name = freshName('paged')
  const err = await registerMcpServer({ name, url: paged.url }).catch((e) => e)
  assert.ok(err instanceof Error)
  assert.match(err.message, new RegExp(`MCP server "${name}".*larger than 2 MiB`))

  const big = { type: 'object', properties: { text: { type: 'string', description: 'x'.repeat(200 * 1024) } } }
  const described = { type: 'object', description: 'y'.repeat(300 * 1024) }
  const tools = [
    { name: 'fine', inputSchema: { type: 'object' } },
    { name: 'big_schema', inputSchema: big },
    { name: 'big_tool', description: 'z'.repeat(300 * 1024), inputSchema: { type: 'object' } },
    { name: 'big_both', inputSchema: described },
  ]
  const mixed = await startHostile({ tools })
  t.after(() => mixed.close())
  const refused = await registerMcpServer({ name: freshName('mixed'), url: mixed.url, prefix: 'm_' }).catch((e) => e)
  assert.ok(refused instanceof Error)
  assert.match(refused.message, /"m_big_schema" \(its input schema is larger than 128 KiB/)
  assert.match(refused.message, /"m_big_tool" \(its definition is larger than 256 KiB/)
  assert.match(refused.message, /"m_big_both" \(its definition is larger than 256 KiB/)
  assert.doesNotMatch(refused.message, /"m_fine"/)

  // Keeping only the tool within its limits registers it.
  const kept = freshName('mixed')
  const names = await registerMcpServer({ name: kept, url: mixed.url, prefix: `${kept}_`, tools: ['fine'] })
  t.after(() => unregisterMcpServer(kept))
  assert.deepEqual(names, [`${kept}_fine`])
})

test('a list change past the budget keeps the tools offered before, and says why on stderr', async (t) => {
  let tools = [{ name: 'first', inputSchema: { type: 'object' } }]
  const server = await startHostile({ stream: true, list: (ctx) => ctx.answer({ tools }) })
  t.after(() => server.close())
  const script = `
    import { registerMcpServer, listTools } from ${INDEX}
    await registerMcpServer({ name: 'grows', url: ${JSON.stringify(server.url)}, prefix: 'g_' })
    console.log('registered')
    // Told on stdin once the server has changed its list and said so.
    process.stdin.once('data', () => {
      console.log(JSON.stringify(listTools().map((d) => d.name)))
      process.exit(0)
    })
  `
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ANTHROPIC_TOOL_CALLING_LOG: '' } })
  let stdout = ''
  let stderr = ''
  proc.stderr.on('data', (c) => (stderr += c))
  const closed = new Promise((r) => proc.on('close', r))
  await new Promise((resolve) => proc.stdout.on('data', (c) => { stdout += c; if (stdout.includes('registered')) resolve() }))
  const deadline = Date.now() + 10000
  while (server.streams() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  assert.equal(server.streams(), 1, 'the client opened its GET stream')
  tools = manyTools(5 * MIB)
  const listed = server.log.filter((e) => e.body.includes('tools/list')).length
  server.notify('notifications/tools/list_changed')
  while (!stderr.includes('listing them failed') && Date.now() < deadline + 10000) await new Promise((r) => setTimeout(r, 20))
  assert.equal(server.log.filter((e) => e.body.includes('tools/list')).length, listed + 1, 'the tools were listed again')
  proc.stdin.write('go\n')
  await closed
  assert.match(stderr, /the tools of the MCP server "grows" changed, but listing them failed: its tool list is larger than 2 MiB.*Its earlier tools stay offered/)
  assert.deepEqual(JSON.parse(stdout.split('\n').filter(Boolean).at(-1)), ['g_first'])
})

test('a list within the budget is taken whole (many pages, many tools)', async (t) => {
  const pages = [manyTools(0.9 * MIB), manyTools(0.9 * MIB, 1e5)]
  const server = await startHostile({ list: (ctx) => (ctx.msg.params?.cursor ? ctx.answer({ tools: pages[1] }) : ctx.answer({ tools: pages[0], nextCursor: 'p2' })) })
  t.after(() => server.close())
  const name = freshName('within')
  const names = await registerMcpServer({ name, url: server.url, prefix: `${name}_` })
  t.after(() => unregisterMcpServer(name))
  assert.equal(names.length, pages[0].length + pages[1].length)
  assert.ok(listTools().some((d) => d.name === `${name}_t100000`))
})
