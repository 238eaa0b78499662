// index.d.ts: `tsc --noEmit` over __test__/types/fixture.mts (and the test kit's types, from ESM and
// CommonJS: testing.mts, testing.cts). The fixture asserts inferred types
// (zod output types, JSON Schema literals, today's explicit and untyped forms) and, with
// `@ts-expect-error` lines, that wrong code is refused.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

test('the types fixture compiles with tsc --noEmit (and every @ts-expect-error is an error)', () => {
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, '__test__', 'types')], { cwd: root, encoding: 'utf8' })
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`)
})
