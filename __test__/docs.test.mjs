// The README and docs/ as a newcomer uses them: every code block is a file of docs/snippets/ that
// tsc checks in strict mode (or, in docs/testing.md, an example e2e/package.test.mjs runs), every
// error code has its row, every source file is named in docs/architecture.md, and every link
// between the pages leads somewhere.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { blocks, embedded, pages, root, snippetDir } from '../scripts/embed-snippets.mjs'

const read = (file) => readFileSync(join(root, file), 'utf8')
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
/** docs/options.md is generated from the options table by a script of its own; its blocks are not snippets. */
const GENERATED = new Set([join('docs', 'options.md')])
/** Blocks that are commands or output, not code. */
const NOT_CODE = new Set(['sh', 'text'])
/** docs/testing.md's examples that e2e/package.test.mjs runs under vitest and node:test as written. */
const RUN_BY_E2E = /^\/\/ \S+\.(?:mjs|cjs|ts)$/

test('the README is short: at most 300 lines', () => {
  const lines = read('README.md').split('\n').length
  assert.ok(lines <= 300, `README.md has ${lines} lines; move a topic to docs/`)
})

test('every code block is a snippet file (or a command, or an example e2e runs), and equals it', () => {
  const problems = []
  const shown = new Set()
  for (const page of pages().filter((p) => !GENERATED.has(p))) {
    const text = read(page)
    for (const b of blocks(text)) {
      const where = `${page}:${b.line}`
      if (b.snippet) {
        shown.add(b.snippet)
        if (!existsSync(join(snippetDir, b.snippet))) problems.push(`${where}: docs/snippets/${b.snippet} does not exist`)
      } else if (b.lang === '') problems.push(`${where}: a code block without a language (sh, text, or a snippet)`)
      else if (NOT_CODE.has(b.lang)) continue
      else if (page === join('docs', 'testing.md') && RUN_BY_E2E.test(b.body.split('\n')[0])) continue
      else problems.push(`${where}: a \`${b.lang}\` block that is not a file of docs/snippets/ (put it there and mark it <!-- snippet: name -->)`)
    }
    if (problems.length === 0 && embedded(text) !== text) problems.push(`${page}: a block differs from its snippet file; run node scripts/embed-snippets.mjs`)
  }
  const files = readdirSync(snippetDir).filter((f) => /\.(ts|tsx)$/.test(f))
  for (const f of files) if (!shown.has(f)) problems.push(`docs/snippets/${f} is shown on no page`)
  assert.deepEqual(problems, [])
})

test('the snippets type-check with tsc in strict mode against index.d.ts', () => {
  const config = JSON.parse(read(join('docs', 'snippets', 'tsconfig.json')))
  assert.equal(config.compilerOptions.strict, true)
  const r = spawnSync(process.execPath, [tsc, '-p', snippetDir], { cwd: root, encoding: 'utf8' })
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`)
})

/** The error codes of index.d.ts's AIErrorCode. */
function errorCodes() {
  const union = /export type AIErrorCode =([^]*?)\n\n/.exec(read('index.d.ts'))[1]
  return [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).sort()
}

/** The codes in the last cell of the rows of a page's tables headed `| … | \`error.code\` |`. */
function codeRows(page) {
  const codes = new Set()
  let inCodeTable = false
  for (const line of read(page).split('\n')) {
    if (!line.startsWith('|')) {
      inCodeTable = false
      continue
    }
    const cells = line.split('|').map((c) => c.trim()).slice(1, -1)
    const last = cells[cells.length - 1]
    if (last === '`error.code`') inCodeTable = true
    else if (inCodeTable && !/^-+$/.test(last)) codes.add(/^`([a-z_]+)`/.exec(last)?.[1] ?? `(no code: ${line})`)
  }
  return codes
}

test('every error code has its row in the README and in docs/errors.md, and no row names another', () => {
  const codes = errorCodes()
  assert.ok(codes.length >= 13, `AIErrorCode not read from index.d.ts: ${codes}`)
  for (const page of ['README.md', join('docs', 'errors.md')]) {
    const rows = codeRows(page)
    assert.deepEqual(codes.filter((c) => !rows.has(c)), [], `${page}: codes without a row`)
    assert.deepEqual([...rows].filter((c) => !codes.includes(c)), [], `${page}: rows naming a code AIErrorCode does not have`)
  }
})

/** The source files docs/architecture.md must name, walked from the file system. */
function sourceFiles() {
  const found = []
  const walk = (dir, keep) => {
    if (!existsSync(join(root, dir))) return
    for (const name of readdirSync(join(root, dir))) {
      const path = join(dir, name)
      if (statSync(join(root, path)).isDirectory()) walk(path, keep)
      else if (keep(name)) found.push(path)
    }
  }
  walk('src', (f) => f.endsWith('.rs'))
  walk('lib', (f) => /\.(js|mjs|cjs|d\.ts)$/.test(f))
  walk('stand-in', (f) => f.endsWith('.mjs'))
  walk('scripts', (f) => /\.(mjs|sh)$/.test(f))
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'binding.js', 'binding.d.ts', join('examples', 'demo.mjs')]) found.push(f)
  return found.map((f) => f.split('\\').join('/')).sort()
}

test('docs/architecture.md names every source file with what it does, and only files that exist', () => {
  const named = new Map()
  for (const line of read(join('docs', 'architecture.md')).split('\n')) {
    const m = /^\| `([^`]+\.[a-z.]+)` \| (.*) \|$/.exec(line)
    if (m) named.set(m[1], m[2].trim())
  }
  const files = sourceFiles()
  const missing = files.filter((f) => !named.has(f))
  const extra = [...named.keys()].filter((f) => !existsSync(join(root, f)))
  const undescribed = [...named].filter(([, what]) => what.length < 10).map(([f]) => f)
  assert.deepEqual(
    { missing, extra, undescribed },
    { missing: [], extra: [], undescribed: [] },
    'docs/architecture.md: add a row `| `path` | what it does |` for each missing file, remove or rename each extra one',
  )
})

/** GitHub's anchor of a heading. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')

test('every relative link between the pages leads to a file and heading that exist', () => {
  const problems = []
  for (const page of pages()) {
    const text = read(page)
    const outsideBlocks = text.split('\n').filter((_, i) => !blocks(text).some((b) => i >= b.start && i <= b.end)).join('\n')
    for (const [, target] of outsideBlocks.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:)/.test(target)) continue
      const [file, anchor] = target.split('#')
      const path = file === '' ? page : join(dirname(page), file)
      if (GENERATED.has(relative('.', path)) && !existsSync(join(root, path))) continue // written by its own script
      if (!existsSync(join(root, path))) {
        problems.push(`${page}: ${target} (no such file)`)
        continue
      }
      if (anchor && path.endsWith('.md')) {
        const headings = read(path).split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, '')))
        if (!headings.includes(anchor)) problems.push(`${page}: ${target} (no such heading)`)
      }
    }
  }
  assert.deepEqual(problems, [])
})
