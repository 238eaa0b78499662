// Builds the native addon (release) when it is missing or older than the Rust sources, so that
// `npm run demo` and `npm test` run the current code on a fresh clone and after an edit (their
// `predemo` / `pretest`). It is not an install script: `npm install` builds nothing, and users of
// the published package get a prebuilt binary.
import { spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { newest } from './mtime.mjs'
import { hostPlatform } from './platform.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// anthropic-tool-calling.linux-x64-gnu.node on Linux with glibc, .darwin-arm64.node on a Mac…
const addon = join(root, `anthropic-tool-calling.${hostPlatform()}.node`)

const sources = ['src', 'Cargo.toml', 'Cargo.lock', 'build.rs'].map((f) => join(root, f)).filter(existsSync)
const stale = !existsSync(addon) || Math.max(...sources.map(newest)) > statSync(addon).mtimeMs
if (process.env.ATC_SKIP_BUILD === '1' || !stale) process.exit(0)

console.log('anthropic-tool-calling: building the native addon (release; a few minutes the first time)…')
const napi = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
const result = spawnSync(process.execPath, [napi, 'build', '--platform', '--release', '--js', 'binding.js', '--dts', 'binding.d.ts'], {
  cwd: root,
  stdio: 'inherit',
})
process.exit(result.status ?? 1)
