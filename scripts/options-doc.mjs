// Writes what the table of run options (src/binding/options/options.json) makes: the options
// reference docs/options.md, and the `RunOptions` interface of index.d.ts. Each option's name,
// type, default and doc are written in the table only; run this after changing it
// (`node scripts/options-doc.mjs`). __test__/options-table.test.mjs fails while either is stale.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
export const TABLE = path.join(root, 'src/binding/options/options.json')
export const DOC = path.join(root, 'docs/options.md')
export const DTS = path.join(root, 'index.d.ts')
/** Where the generated interface begins and ends in index.d.ts. */
export const BEGIN = '// Generated from src/binding/options/options.json by scripts/options-doc.mjs: edit the table, not this.'
export const END = '// End of the generated RunOptions.'

export function readTable() {
  return JSON.parse(fs.readFileSync(TABLE, 'utf8'))
}

/** An option's doc with its default, as one paragraph. */
function described(option) {
  return `${option.doc} Default: ${option.default}.`
}

/** `text` cut into lines of at most `width` characters, at spaces. */
function wrap(text, width) {
  const lines = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line === '' ? word : `${line} ${word}`
    }
  }
  if (line !== '') lines.push(line)
  return lines
}

/** The `RunOptions` interface, as index.d.ts declares it between BEGIN and END. */
export function runOptionsDts(table) {
  const out = [BEGIN, 'export interface RunOptions<C = unknown> {']
  for (const option of table) {
    const text = described(option).replaceAll('*/', '*\\/')
    const one = `  /** ${text} */`
    if (one.length <= 100) out.push(one)
    else out.push('  /**', ...wrap(text, 100 - 5).map((l) => `   * ${l}`), '   */')
    out.push(`  ${option.name}?: ${option.type}`)
  }
  out.push('}', END)
  return out.join('\n')
}

/** index.d.ts with its RunOptions generated from `table`. */
export function withRunOptions(dts, table) {
  const start = dts.indexOf(BEGIN)
  const end = dts.indexOf(END)
  if (start < 0 || end < start) throw new Error(`index.d.ts has no generated RunOptions (the lines "${BEGIN}" … "${END}")`)
  return dts.slice(0, start) + runOptionsDts(table) + dts.slice(end + END.length)
}

/** A table cell: one line, its pipes escaped. */
function cell(text) {
  return text.replace(/\s+/g, ' ').replaceAll('|', '\\|')
}

/** docs/options.md. */
export function optionsDoc(table) {
  const out = [
    '# Run options',
    '',
    'What `runWithTools(prompt, options)` and `streamWithTools(prompt, options)` take. This page is written by',
    '`node scripts/options-doc.mjs` from `src/binding/options/options.json`, the one table of the options (the',
    '`RunOptions` type in `index.d.ts` is made from it too): change the table, then run the script.',
    '',
    'An option not in this table is refused with `invalid_request` before anything is sent. "API version" says',
    'which `anthropic-version` (the `apiVersion` option) an option needs, where it needs one.',
    '',
    '| Option | Type | Default | What it does | API version |',
    '| --- | --- | --- | --- | --- |',
  ]
  for (const option of table) {
    out.push(`| \`${option.name}\` | \`${cell(option.type)}\` | ${cell(option.default)} | ${cell(option.doc)} | ${cell(option.apiVersion || '')} |`)
  }
  return out.join('\n') + '\n'
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const table = readTable()
  fs.mkdirSync(path.dirname(DOC), { recursive: true })
  fs.writeFileSync(DOC, optionsDoc(table))
  fs.writeFileSync(DTS, withRunOptions(fs.readFileSync(DTS, 'utf8'), table))
  console.log(`wrote ${path.relative(root, DOC)} and the RunOptions of ${path.relative(root, DTS)}`)
}
