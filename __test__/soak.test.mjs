// The soak, shortened for CI: the soak of __test__/soak.mjs with 2 000
// conversations (`npm run soak` runs the full 20 000). Every result right, RSS after warm-up
// grows less than 20 MB, the client process exits by itself, the key leaks nowhere.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runSoak, MAX_GROWTH_MB } from './soak.mjs'

test('soak: 2 000 conversations with tools at concurrency 64, all correct, bounded RSS, exits by itself', async () => {
  const result = await runSoak({ conversations: 2000, concurrency: 64, timeoutMs: 120_000 })
  const s = result.summary
  if (s) console.log(`soak: ${s.correct}/${s.conversations} correct in ${s.durationMs} ms (${s.build}); RSS growth after ${s.warmup} warm-up: ${s.rssGrowthMB} MB; exited ${result.exitedAfterMs} ms after its report`)
  assert.deepEqual(result.problems, [])
  assert.equal(s.correct, 2000)
  assert.ok(s.rssGrowthMB < MAX_GROWTH_MB)
  assert.equal(result.code, 0)
  assert.equal(result.signal, null)
  assert.equal(result.recordsChecked, 5000)
})
