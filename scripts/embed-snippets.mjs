// Copies each snippet file of docs/snippets/ into the markdown that shows it. A fenced block that
// shows a snippet follows a marker line naming the file:
//
//   <!-- snippet: route.ts -->
//   ```ts
//   …the whole of docs/snippets/route.ts…
//   ```
//
// The marker and the fence may be indented (inside a list item); the file's lines get the same
// indent. __test__/docs.test.mjs fails when a block differs from its file, so after editing a
// snippet run: node scripts/embed-snippets.mjs
//
//   import { pages, embedded } from './scripts/embed-snippets.mjs'   (what the test reads)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const snippetDir = join(root, 'docs', 'snippets')

/** The markdown pages whose code blocks are checked: README.md and docs/*.md. */
export function pages() {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))]
}

const MARKER = /^(\s*)<!-- snippet: (\S+) -->$/
const FENCE = /^(\s*)```(\S*)\s*$/

/**
 * The fenced blocks of a page: `{ line, lang, indent, body, snippet }` (`lang` is '' for a bare fence), `snippet` being the file the
 * marker above names (or null), `body` the block's text without its indent.
 */
export function blocks(text) {
  const lines = text.split('\n')
  const found = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i])
    if (!open) continue
    const indent = open[1]
    let end = i + 1
    while (end < lines.length && lines[end] !== `${indent}\`\`\``) end++
    const marker = i > 0 ? MARKER.exec(lines[i - 1]) : null
    const body = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart())).join('\n')
    found.push({ line: i + 1, start: i, end, lang: open[2], indent, body, snippet: marker && marker[1] === indent ? marker[2] : null })
    i = end
  }
  return found
}

/** The page with every marked block replaced by its file's text. */
export function embedded(text) {
  const lines = text.split('\n')
  for (const b of blocks(text).reverse()) {
    if (!b.snippet) continue
    const file = readFileSync(join(snippetDir, b.snippet), 'utf8').replace(/\n$/, '')
    const body = file.split('\n').map((l) => (l === '' ? '' : b.indent + l))
    lines.splice(b.start + 1, b.end - b.start - 1, ...body)
  }
  return lines.join('\n')
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const page of pages()) {
    const path = join(root, page)
    const before = readFileSync(path, 'utf8')
    const after = embedded(before)
    if (after !== before) {
      writeFileSync(path, after)
      console.log(`embedded the snippets of ${page}`)
    }
  }
}
