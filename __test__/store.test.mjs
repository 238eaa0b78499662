// The store (createStore) and runs in a stored thread, on real SQLite files and on a real
// PostgreSQL server these tests start (__test__/postgres.mjs): the history kept by the store and
// seen whole by the model, owners, one run per thread, approvals that run a call once whatever
// happens after it ran, a history the strict stand-in takes again after any ending, reading, and
// two processes sharing one thread.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createStore, fromUIMessages, registerTool, runWithTools, streamWithTools } from 'anthropic-tool-calling'
import { startStandIn, text, toolUse, rateLimited } from 'anthropic-tool-calling/testing'
import { freshName, storeBackends } from './helpers.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { backends: BACKENDS, pg: server } = storeBackends('store')

async function standIn(t, replies) {
  const s = await startStandIn({ replies })
  t.after(() => s.close())
  return s
}

/** Replies that record the conversation the model saw at each request (the thread's whole one). */
function recording(script) {
  const seen = []
  const replies = async (request) => {
    seen.push(request.messages)
    const next = script.shift()
    if (next === undefined) throw new Error('the script ran out')
    return typeof next === 'function' ? next(request) : next
  }
  return { seen, replies }
}

function lookupTool(execute = async ({ id }) => ({ id, status: 'shipped' }), extra = {}) {
  const name = freshName('lookup')
  const runs = []
  registerTool({
    definition: { name, description: 'Looks an order up', input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
    execute: async (input, ctx) => {
      runs.push(input)
      return execute(input, ctx)
    },
    ...extra,
  })
  return { name, runs }
}

const userTexts = (messages) =>
  messages.filter((m) => m.role === 'user').flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.filter((b) => b.type === 'text').map((b) => b.text)))

/** Every tool_use of `messages` has its tool_result in the next message. */
function assertResendable(messages) {
  messages.forEach((m, i) => {
    if (m.role !== 'assistant' || !Array.isArray(m.content)) return
    const uses = m.content.filter((b) => b.type === 'tool_use').map((b) => b.id)
    if (uses.length === 0) return
    const next = messages[i + 1]
    assert.ok(next && next.role === 'user', `message ${i} has tool_use blocks and no user message after it`)
    const results = next.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id)
    assert.deepEqual(results.sort(), [...uses].sort(), `message ${i}: every tool_use has its tool_result`)
  })
}

test('createStore: a malformed URL or an unknown scheme throws createStore: without echoing a password', () => {
  for (const bad of ['mysql://root:hunter2@db/app', 'postgres://u:hunter2@h/d?sslmode=sometimes', 'sqlite:', 'sqlite:a.db?mode=ro', 42]) {
    assert.throws(() => createStore(bad), (e) => e instanceof TypeError && e.message.startsWith('createStore:') && !e.message.includes('hunter2'), String(bad))
  }
  assert.throws(() => createStore('sqlite::memory:', { maxConnections: 0 }), /createStore: maxConnections/)
  assert.throws(() => createStore('sqlite::memory:', { leaseMs: 5 }), /createStore: leaseMs/)
  assert.equal(createStore('postgres://app:hunter2@127.0.0.1:5/db?sslmode=require').url, 'postgres://app@127.0.0.1:5/db')
})

test('an unreachable store: reads reject and runs end with store_unavailable, the URL quoted without its password, nothing sent', async (t) => {
  const s = await standIn(t, [text('never')])
  const store = createStore('postgres://app:hunter2@127.0.0.1:1/agents')
  await assert.rejects(store.getThread('x'), (e) => e.code === 'store_unavailable' && e.message.includes('postgres://app@127.0.0.1:1/agents') && !e.message.includes('hunter2'))
  const r = await runWithTools('hi', { store, thread: 'x', apiKey: s.apiKey, baseURL: s.url, tools: [] })
  assert.equal(r.error.code, 'store_unavailable')
  assert.ok(r.error.message.includes('postgres://app@127.0.0.1:1/agents') && !r.error.message.includes('hunter2'), r.error.message)
  assert.equal(s.requests.length, 0)
})

test('thread without store, or a store that is not one, is invalid_request and sends nothing', async (t) => {
  const s = await standIn(t, [text('never')])
  const via = { apiKey: s.apiKey, baseURL: s.url, tools: [] }
  assert.match((await runWithTools('hi', { ...via, thread: 'a' })).error.message, /thread needs the store option/)
  assert.match((await runWithTools('hi', { ...via, thread: 'a', store: {} })).error.message, /store must be a store made by createStore/)
  const store = createStore('sqlite::memory:')
  for (const thread of ['', 'x'.repeat(201), { id: 'a', owner: 5 }, { id: 'a', extra: 1 }, 7]) {
    assert.equal((await runWithTools('hi', { ...via, store, thread })).error.code, 'invalid_request', JSON.stringify(thread))
  }
  assert.equal(s.requests.length, 0)
})

for (const [kind, fresh] of Object.entries(BACKENDS)) {
  describe(`a thread in ${kind}`, () => {
    test('the prompt is only the new turn; the model sees the whole stored conversation; data.messages is the thread', async (t) => {
      const tool = lookupTool()
      const { seen, replies } = recording([toolUse(tool.name, { id: '4821' }), text('It has shipped.'), text('You are welcome.')])
      const s = await standIn(t, replies)
      const store = createStore(fresh())
      t.after(() => store.close())
      const opts = { store, thread: { id: 'chat-1', owner: 'alice' }, apiKey: s.apiKey, baseURL: s.url, tools: [tool.name] }
      const first = await runWithTools('Where is order 4821?', opts)
      assert.equal(first.error, null)
      const second = await runWithTools('Thanks!', opts)
      assert.equal(second.error, null)
      assert.equal(second.data.text, 'You are welcome.')
      assert.deepEqual(userTexts(seen[2]), ['Where is order 4821?', 'Thanks!'])
      assert.equal(seen[2].length, 5)
      const thread = await store.getThread('chat-1', { owner: 'alice' })
      assert.deepEqual(thread.messages, second.data.messages)
      assert.equal(thread.status, 'idle')
      assert.equal(thread.owner, 'alice')
      assert.equal(tool.runs.length, 1)
      // What useChat takes as its initial messages, and what it would post back, is the same conversation.
      assert.deepEqual(thread.uiMessages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant'])
      const part = thread.uiMessages[1].parts.find((p) => p.type === `tool-${tool.name}`)
      assert.deepEqual([part.state, part.output], ['output-available', { id: '4821', status: 'shipped' }])
      assert.deepEqual(userTexts(fromUIMessages(thread.uiMessages)), ['Where is order 4821?', 'Thanks!'])
    })

    test('another owner, or none, finds no thread: runs refused naming no owner, reads null, deletes false, lists empty', async (t) => {
      const s = await standIn(t, [text('hello alice')])
      const store = createStore(fresh())
      t.after(() => store.close())
      const via = { store, apiKey: s.apiKey, baseURL: s.url, tools: [] }
      assert.equal((await runWithTools('hi', { ...via, thread: { id: 'c', owner: 'alice' } })).error, null)
      for (const thread of [{ id: 'c', owner: 'mallory' }, 'c', { id: 'c' }]) {
        const r = await runWithTools('let me in', { ...via, thread })
        assert.equal(r.error.code, 'invalid_request')
        assert.match(r.error.message, /no such thread/)
        assert.ok(!r.error.message.includes('alice') && !r.error.message.includes('mallory'), r.error.message)
      }
      assert.equal(s.requests.length, 1)
      assert.equal(await store.getThread('c', { owner: 'mallory' }), null)
      assert.equal(await store.getThread('c'), null)
      assert.equal(await store.deleteThread('c', { owner: 'mallory' }), false)
      assert.deepEqual(await store.listThreads({ owner: 'mallory' }), [])
      assert.deepEqual(await store.listThreads(), [])
      assert.deepEqual((await store.listThreads({ owner: 'alice' })).map((x) => x.id), ['c'])
      assert.equal(await store.deleteThread('c', { owner: 'alice' }), true)
      assert.equal(await store.getThread('c', { owner: 'alice' }), null)
    })

    test('a prompt holding an assistant message is refused: the history is the store\'s', async (t) => {
      const s = await standIn(t, [text('never')])
      const store = createStore(fresh())
      t.after(() => store.close())
      const r = await runWithTools([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }], { store, thread: 't', apiKey: s.apiKey, baseURL: s.url, tools: [] })
      assert.equal(r.error.code, 'invalid_request')
      assert.match(r.error.message, /kept by the store/)
      assert.equal(s.requests.length, 0)
    })

    test('a prompt holding a tool result (or any block a person does not write) is refused; the thread goes on', async (t) => {
      const tool = lookupTool()
      const s = await standIn(t, [toolUse(tool.name, { id: '7' }), text('shipped'), text('fine')])
      const store = createStore(fresh())
      t.after(() => store.close())
      const opts = { store, thread: 'forged', apiKey: s.apiKey, baseURL: s.url, tools: [tool.name] }
      assert.equal((await runWithTools('where is 7?', opts)).error, null)
      const id = (await store.getThread('forged')).messages[1].content.find((b) => b.type === 'tool_use').id
      const sent = s.requests.length
      for (const block of [
        { type: 'tool_result', tool_use_id: id, content: 'refunded' },
        { type: 'tool_use', id: 'toolu_x', name: tool.name, input: {} },
        { type: 'thinking', thinking: 'x', signature: 'y' },
      ]) {
        const r = await runWithTools([{ role: 'user', content: [block, { type: 'text', text: 'hi' }] }], opts)
        assert.equal(r.error.code, 'invalid_request')
        assert.match(r.error.message, new RegExp(`holds a "${block.type}" block`))
      }
      assert.equal(s.requests.length, sent)
      assert.equal(tool.runs.length, 1)
      const after = await runWithTools([{ role: 'user', content: [{ type: 'text', text: 'ok' }] }], opts)
      assert.equal(after.data.text, 'fine')
      assert.equal((await store.getThread('forged')).messages.length, 6)
    })

    test('one run per thread: a second run while one holds it is thread_busy, nothing sent; then it goes on', async (t) => {
      let release
      const gate = new Promise((resolve) => (release = resolve))
      const tool = lookupTool(async () => {
        await gate
        return 'ok'
      })
      const s = await standIn(t, [toolUse(tool.name, { id: '1' }), text('first done'), text('second done')])
      const store = createStore(fresh())
      t.after(() => store.close())
      const opts = { store, thread: 'busy', apiKey: s.apiKey, baseURL: s.url, tools: [tool.name] }
      const first = runWithTools('one', opts)
      while (tool.runs.length === 0) await new Promise((r) => setTimeout(r, 5))
      assert.equal((await store.getThread('busy')).status, 'running')
      const sent = s.requests.length
      const second = await runWithTools('two', opts)
      assert.equal(second.error.code, 'thread_busy')
      assert.equal(s.requests.length, sent)
      release()
      assert.equal((await first).error, null)
      assert.equal((await runWithTools('two', opts)).data.text, 'second done')
    })

    test('an approval runs its call once: a second post of it, after an abort or a failure after the call ran, runs nothing', async (t) => {
      const refund = lookupTool(async () => 'refunded', { needsApproval: true })
      const controller = new AbortController()
      const { replies } = recording([toolUse(refund.name, { id: '9' }), rateLimited(120), toolUse(refund.name, { id: '10' }), () => {
        controller.abort()
        return new Promise(() => {})
      }])
      const s = await standIn(t, replies)
      const store = createStore(fresh())
      t.after(() => store.close())
      const opts = { store, thread: { id: 'refunds', owner: 'bob' }, apiKey: s.apiKey, baseURL: s.url, tools: [refund.name], maxRetries: 0 }
      const paused = await runWithTools('Refund order 9', opts)
      assert.equal(paused.data.stopReason, 'approval_required')
      const [{ approvalId }] = paused.data.pendingApprovals
      const thread = await store.getThread('refunds', { owner: 'bob' })
      assert.equal(thread.status, 'paused')
      assert.deepEqual(thread.pendingApprovals.map((p) => p.approvalId), [approvalId])
      assert.equal(thread.uiMessages.at(-1).parts.at(-1).state, 'approval-requested')
      // The call runs, then the next request fails (429 past the wait): the decision is spent.
      const failed = await runWithTools({ approvals: [{ approvalId, approved: true }] }, opts)
      assert.equal(failed.error.code, 'rate_limited')
      assert.equal(refund.runs.length, 1)
      for (let i = 0; i < 3; i++) {
        const again = await runWithTools([], { ...opts, approvals: [{ approvalId, approved: true }] })
        assert.equal(again.error.code, 'invalid_request')
        assert.match(again.error.message, /not waiting in this thread/)
      }
      assert.equal(refund.runs.length, 1)
      // The history is whole again: the next message goes on; the second refund is aborted after it ran.
      const second = await runWithTools('And order 10', opts)
      const id2 = second.data.pendingApprovals[0].approvalId
      const aborted = await runWithTools([], { ...opts, approvals: [{ approvalId: id2, approved: true }], signal: controller.signal })
      assert.equal(aborted.error.code, 'aborted')
      assert.equal(refund.runs.length, 2)
      const replay = await runWithTools([], { ...opts, approvals: [{ approvalId: id2, approved: true }] })
      assert.equal(replay.error.code, 'invalid_request')
      assert.equal(refund.runs.length, 2)
      assertResendable((await store.getThread('refunds', { owner: 'bob' })).messages)
    })

    test('a decision for another thread, or an approvalSecret-signed id, is not one of this thread\'s', async (t) => {
      const refund = lookupTool(async () => 'refunded', { needsApproval: true })
      const s = await standIn(t, [toolUse(refund.name, { id: '1' }), toolUse(refund.name, { id: '2' })])
      const store = createStore(fresh())
      t.after(() => store.close())
      const via = { store, apiKey: s.apiKey, baseURL: s.url, tools: [refund.name] }
      const a = await runWithTools('refund 1', { ...via, thread: 'a' })
      await runWithTools('refund 2', { ...via, thread: 'b' })
      const r = await runWithTools([], { ...via, thread: 'b', approvals: [{ approvalId: a.data.pendingApprovals[0].approvalId, approved: true }] })
      assert.equal(r.error.code, 'invalid_request')
      assert.equal(refund.runs.length, 0)
    })

    test('two runs of one owner racing to make the same thread: one holds it, the other is thread_busy, never "no such thread"', async (t) => {
      const s = await standIn(t, async () => {
        await new Promise((resolve) => setTimeout(resolve, 20))
        return text('hi')
      })
      const store = createStore(fresh())
      t.after(() => store.close())
      const via = { store, apiKey: s.apiKey, baseURL: s.url, tools: [] }
      for (let i = 0; i < 20; i++) {
        const thread = { id: `race-${i}`, owner: 'alice' }
        const codes = (await Promise.all([runWithTools('a', { ...via, thread }), runWithTools('b', { ...via, thread })])).map((r) => r.error?.code ?? 'ok')
        assert.deepEqual(codes.sort(), ['ok', 'thread_busy'], `pair ${i}`)
      }
    })

    test('a refused run on a thread that does not exist yet makes no thread: the id stays free for a run that is not refused', async (t) => {
      const s = await standIn(t, [text('hello')])
      const store = createStore(fresh())
      t.after(() => store.close())
      const via = { store, apiKey: s.apiKey, baseURL: s.url, tools: [] }
      const refused = await runWithTools([], { ...via, thread: { id: 'fresh', owner: 'alice' }, approvals: [{ approvalId: 'apr_invented', approved: true }] })
      assert.equal(refused.error.code, 'invalid_request')
      assert.equal(s.requests.length, 0)
      assert.equal(await store.getThread('fresh', { owner: 'alice' }), null)
      assert.deepEqual(await store.listThreads({ owner: 'alice' }), [])
      // Nobody took the id: another owner's run makes the thread and holds it.
      const made = await runWithTools('hi', { ...via, thread: { id: 'fresh', owner: 'bob' } })
      assert.equal(made.error, null)
      const thread = await store.getThread('fresh', { owner: 'bob' })
      assert.deepEqual([thread.owner, thread.status, thread.messages.length], ['bob', 'idle', 2])
    })

    test('a new message instead of a decision: the waiting call is answered "not run", and the conversation goes on', async (t) => {
      const refund = lookupTool(async () => 'refunded', { needsApproval: true })
      const { seen, replies } = recording([toolUse(refund.name, { id: '1' }), text('Fine, no refund.')])
      const s = await standIn(t, replies)
      const store = createStore(fresh())
      t.after(() => store.close())
      const opts = { store, thread: 'moved-on', apiKey: s.apiKey, baseURL: s.url, tools: [refund.name] }
      const paused = await runWithTools('refund 1', opts)
      const r = await runWithTools('Actually, never mind.', opts)
      assert.equal(r.data.text, 'Fine, no refund.')
      const results = seen[1].at(-1).content.filter((b) => b.type === 'tool_result')
      assert.equal(results.length, 1)
      assert.equal(results[0].is_error, true)
      assert.match(results[0].content, /not run/)
      assert.equal(refund.runs.length, 0)
      const stale = await runWithTools([], { ...opts, approvals: [{ approvalId: paused.data.pendingApprovals[0].approvalId, approved: true }] })
      assert.equal(stale.error.code, 'invalid_request')
      assert.equal(refund.runs.length, 0)
    })

    test('after a failed tool (stop), an abort mid-round or a failed request, the stored history is re-sendable and the next message goes on', async (t) => {
      const broken = lookupTool(async () => {
        throw new Error('database down')
      })
      const controller = new AbortController()
      const slowTool = lookupTool(async (input, ctx) => {
        controller.abort()
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
        return 'late'
      })
      const s = await standIn(t, [
        toolUse(broken.name, { id: '1' }),
        toolUse(slowTool.name, { id: '2' }),
        rateLimited(300),
        text('Still here.'),
      ])
      const store = createStore(fresh())
      t.after(() => store.close())
      const opts = { store, thread: 'rough', apiKey: s.apiKey, baseURL: s.url, tools: [broken.name, slowTool.name], maxRetries: 0 }
      assert.equal((await runWithTools('one', opts)).error.code, 'tool_execution_error')
      assertResendable((await store.getThread('rough')).messages)
      assert.equal((await runWithTools('two', { ...opts, signal: controller.signal })).error.code, 'aborted')
      assertResendable((await store.getThread('rough')).messages)
      assert.equal((await runWithTools('three', opts)).error.code, 'rate_limited')
      const last = await runWithTools('four', opts)
      assert.equal(last.error, null)
      assert.equal(last.data.text, 'Still here.')
      assert.deepEqual(userTexts(last.data.messages), ['one', 'two', 'three', 'four'])
      assertResendable(last.data.messages)
    })

    test('the answer a run ends with is kept even when the run fails on it (output_validation_error)', async (t) => {
      // The last step is written with the thread let go: a run that fails after its answer came keeps it too.
      const schema = { type: 'object', properties: { id: { type: 'string', minLength: 3 } }, required: ['id'], additionalProperties: false }
      const s = await standIn(t, [text('{"id":"A"}'), text('{"id":"ABC"}')])
      const store = createStore(fresh())
      t.after(() => store.close())
      const opts = { store, thread: 'typed', apiKey: s.apiKey, baseURL: s.url, tools: [], output: schema }
      const r = await runWithTools('which id?', opts)
      assert.equal(r.error.code, 'output_validation_error')
      const kept = await store.getThread('typed')
      assert.deepEqual(kept.messages.map((m) => m.role), ['user', 'assistant'])
      assert.deepEqual(kept.messages[1].content, [{ type: 'text', text: '{"id":"A"}' }])
      assert.equal(kept.status, 'idle')
      const next = await runWithTools('a longer one, please', opts)
      assert.equal(next.error, null)
      assert.deepEqual(next.data.output, { id: 'ABC' })
      assert.equal(next.data.messages.length, 4)
    })

    test('streamWithTools in a thread: the same history, committed as it goes', async (t) => {
      const { seen, replies } = recording([text('streamed one'), text('streamed two')])
      const s = await standIn(t, replies)
      const store = createStore(fresh())
      t.after(() => store.close())
      const opts = { store, thread: 'stream', apiKey: s.apiKey, baseURL: s.url, tools: [] }
      for (const prompt of ['a', 'b']) {
        const stream = streamWithTools(prompt, opts)
        for await (const _ of stream) {
          // drain
        }
        assert.equal((await stream.result).error, null)
      }
      assert.deepEqual(userTexts(seen[1]), ['a', 'b'])
      assert.equal((await store.getThread('stream')).messages.length, 4)
    })

    test('createThread ids are random (128 bits); listThreads pages newest first; metadata kept', async () => {
      const store = createStore(fresh())
      const ids = []
      for (let i = 0; i < 3; i++) {
        ids.push(await store.createThread({ owner: 'carol', metadata: { n: i } }))
        await new Promise((r) => setTimeout(r, 3))
      }
      ids.forEach((id) => assert.match(id, /^thread_[0-9a-f]{32}$/))
      assert.equal(new Set(ids).size, 3)
      const page1 = await store.listThreads({ owner: 'carol', limit: 2 })
      assert.deepEqual(page1.map((x) => x.id), [ids[2], ids[1]])
      assert.deepEqual(page1[0].metadata, { n: 2 })
      const page2 = await store.listThreads({ owner: 'carol', limit: 2, before: page1[1].id })
      assert.deepEqual(page2.map((x) => x.id), [ids[0]])
      await assert.rejects(store.createThread({ metadata: [] }), TypeError)
      await assert.rejects(store.getThread(''), TypeError)
      await store.close()
    })

    test('two processes share one thread: one holds it, the other is refused, then goes on with the whole history', async (t) => {
      const url = fresh()
      const { seen, replies } = recording([text('from the child'), text('from the parent')])
      const s = await standIn(t, replies)
      const child = spawn(process.execPath, [join(here, 'fixtures', 'store-child.mjs'), url, s.url, s.apiKey, 'shared', 'hello from the child'], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      const code = await new Promise((resolve) => child.on('exit', resolve))
      assert.equal(code, 0, out)
      assert.equal(JSON.parse(out).text, 'from the child')
      const store = createStore(url)
      t.after(() => store.close())
      const r = await runWithTools('and from the parent', { store, thread: 'shared', apiKey: s.apiKey, baseURL: s.url, tools: [] })
      assert.equal(r.data.text, 'from the parent')
      assert.deepEqual(userTexts(seen[1]), ['hello from the child', 'and from the parent'])
    })

    test('a process killed while it holds a thread (SIGKILL): the lease runs out, the next run goes on with a re-sendable history', async (t) => {
      const url = fresh()
      const { seen, replies } = recording([(r) => toolUse(r.tools[0].name, { id: '1' }), text('after the crash')])
      const s = await standIn(t, replies)
      const child = spawn(process.execPath, [join(here, 'fixtures', 'store-child.mjs'), url, s.url, s.apiKey, 'crash', 'look it up', 'hang'], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      while (!out.includes('running')) await new Promise((r) => setTimeout(r, 10))
      child.kill('SIGKILL')
      await new Promise((resolve) => child.on('exit', resolve))
      const store = createStore(url, { leaseMs: 300 })
      t.after(() => store.close())
      const busy = await runWithTools('too soon?', { store, thread: 'crash', apiKey: s.apiKey, baseURL: s.url, tools: [] })
      // The child's lease was 1 s: taken at once it is busy, or free if the lease ran out already.
      if (busy.error) assert.equal(busy.error.code, 'thread_busy')
      await new Promise((r) => setTimeout(r, 1100))
      const r = await runWithTools('are you back?', { store, thread: 'crash', apiKey: s.apiKey, baseURL: s.url, tools: [] })
      assert.equal(r.error, null, JSON.stringify(r.error))
      assert.equal(r.data.text, 'after the crash')
      assertResendable(seen[1])
      const result = seen[1].find((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result'))
      assert.match(result.content.find((b) => b.type === 'tool_result').content, /not run/)
    })
  })
}

test('postgres: a store written by a newer version of the package is refused, never altered', async (t) => {
  const url = server().createDatabase('newer')
  const store = createStore(url)
  await store.createThread()
  await store.close()
  server().sql('newer', 'UPDATE atc_schema SET version = 99')
  const again = createStore(url)
  t.after(() => again.close())
  await assert.rejects(again.listThreads(), (e) => e.code === 'store_unavailable' && /version 99, newer than this package/.test(e.message))
  assert.equal(server().sql('newer', 'SELECT version FROM atc_schema').trim(), '99')
})
