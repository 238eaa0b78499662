// Every packed platform package installs where npm would choose it: the main tarball's
// optionalDependencies name each packed platform package (served from its tarball through
// `overrides`, as the registry would serve it), and `npm install --os --cpu --libc` for a
// platform installs that platform's package and no other. `--libc` tells musl from glibc.
// Which platforms are packed: this machine's, plus those scripts/cross-build.sh built
// (target/cross/); in CI, where nothing is cross-built, this machine's alone.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensurePacked, root } from '../scripts/pack.mjs'

let tarballs
before(() => {
  tarballs = ensurePacked(join(root, '.pack', 'cross'), { cross: true })
}, { timeout: 300_000 })

/** npm's --os/--cpu/--libc for a napi platform name. */
function npmFlags(platform) {
  const [os, cpu, abi] = platform.split('-')
  const flags = ['--os', os, '--cpu', cpu]
  if (os === 'linux') flags.push('--libc', abi === 'musl' ? 'musl' : 'glibc')
  return flags
}

function install(dir, flags) {
  return spawnSync('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', ...flags], { cwd: dir, encoding: 'utf8' })
}

test('each packed platform package is installed for its own --os/--cpu/--libc, and only it', (t) => {
  const platforms = Object.keys(tarballs.platforms)
  t.diagnostic(`packed platforms: ${platforms.join(', ')}`)
  const overrides = Object.fromEntries(platforms.map((p) => [`anthropic-tool-calling-${p}`, `file:${tarballs.platforms[p]}`]))
  for (const platform of platforms) {
    const dir = mkdtempSync(join(tmpdir(), `atc-install-${platform}-`))
    try {
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, dependencies: { 'anthropic-tool-calling': `file:${tarballs.main}` }, overrides }),
      )
      const r = install(dir, npmFlags(platform))
      assert.equal(r.status, 0, `npm install for ${platform} failed:\n${r.stdout}\n${r.stderr}`)
      const installed = readdirSync(join(dir, 'node_modules')).filter((n) => n.startsWith('anthropic-tool-calling-'))
      assert.deepEqual(installed, [`anthropic-tool-calling-${platform}`], `for ${npmFlags(platform).join(' ')}`)
      assert.ok(existsSync(join(dir, 'node_modules', `anthropic-tool-calling-${platform}`, `anthropic-tool-calling.${platform}.node`)))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
})

test('the twin of each packed platform (the other libc on Linux, else the other cpu) does not get its package', (t) => {
  const platforms = Object.keys(tarballs.platforms)
  const overrides = Object.fromEntries(platforms.map((p) => [`anthropic-tool-calling-${p}`, `file:${tarballs.platforms[p]}`]))
  for (const platform of platforms) {
    const [os, cpu, abi] = platform.split('-')
    const twin = os === 'linux' ? `linux-${cpu}-${abi === 'musl' ? 'gnu' : 'musl'}` : [os, cpu === 'x64' ? 'arm64' : 'x64', abi].filter(Boolean).join('-')
    const dir = mkdtempSync(join(tmpdir(), `atc-twin-${platform}-`))
    try {
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, dependencies: { 'anthropic-tool-calling': `file:${tarballs.main}` }, overrides }),
      )
      const r = install(dir, npmFlags(twin))
      assert.equal(r.status, 0, `npm install for ${twin} failed:\n${r.stdout}\n${r.stderr}`)
      const installed = readdirSync(join(dir, 'node_modules')).filter((n) => n.startsWith('anthropic-tool-calling-'))
      // The twin's own package if it is packed too, and never this one.
      assert.deepEqual(installed, platforms.includes(twin) ? [`anthropic-tool-calling-${twin}`] : [], `${npmFlags(twin).join(' ')}`)
      t.diagnostic(`${npmFlags(twin).join(' ')}: ${installed.join(', ') || 'no platform package'}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
})
