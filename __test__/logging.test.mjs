// ANTHROPIC_TOOL_CALLING_LOG: one stderr line per API attempt and per tool call; never the key,
// never bodies.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const script = fileURLToPath(new URL('./fixtures/logged-run.mjs', import.meta.url))
const KEY = 'sk-ant-fixture-LOGGING-SECRET'

function runWith(level) {
  const env = { ...process.env, ANTHROPIC_TOOL_CALLING_LOG: level }
  if (level === undefined) delete env.ANTHROPIC_TOOL_CALLING_LOG
  const child = spawnSync(process.execPath, [script, KEY], { env, encoding: 'utf8', timeout: 30_000 })
  assert.equal(child.status, 0, child.stderr)
  return child.stderr.split('\n').filter(Boolean)
}

test('info: one line per API attempt and per tool call, with status, duration, request-id, retry, tool and outcome', () => {
  const lines = runWith('info')
  const attempts = lines.filter((l) => l.includes('api attempt'))
  const tools = lines.filter((l) => l.includes('tool call'))
  // The fixture: a 529 then a retry that answers with two tool calls, then the final answer.
  assert.equal(attempts.length, 3, lines.join('\n'))
  assert.match(attempts[0], /INFO .*api attempt: failed retry=0 status=529 duration_ms=\d+\.\d request_id="?req_\w+"? code="?overloaded"?/)
  assert.match(attempts[1], /api attempt: ok retry=1 status=200 duration_ms=\d+\.\d request_id="?req_\w+"?/)
  assert.match(attempts[2], /api attempt: ok retry=0 status=200/)
  assert.equal(tools.length, 2)
  assert.match(tools[0], /tool call tool="?lookup"? tool_use_id="?toolu_log1"? outcome="?ok"? duration_ms=/)
  assert.match(tools[1], /tool call tool="?lookup"? tool_use_id="?toolu_log2"? outcome="?threw"?/)
  for (const line of lines) {
    assert.ok(!line.includes(KEY), `the key leaked: ${line}`)
    assert.ok(!line.includes('order-secret-input') && !line.includes('internal-boom'), `a body leaked: ${line}`)
  }
  assert.ok(!lines.some((l) => l.includes('DEBUG')))
})

test('debug adds the retry waits; unset prints nothing', () => {
  const lines = runWith('debug')
  assert.ok(lines.some((l) => /DEBUG .*waiting before the retry retry=1 wait_ms=\d+/.test(l)), lines.join('\n'))
  assert.equal(lines.filter((l) => l.includes('api attempt')).length, 3)
  assert.ok(lines.every((l) => !l.includes(KEY)))
  assert.deepEqual(runWith(undefined), [])
})
