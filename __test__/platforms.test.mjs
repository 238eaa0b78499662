// The platform lists agree: napi.targets, the release workflow's build and test matrices, the
// npm/<platform> packages (name, version, os/cpu/libc, main) and the loader napi generated in
// binding.js. A target added in one place and forgotten in another fails here, not at release.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { load as loadYaml } from 'js-yaml'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const read = (path) => readFileSync(join(root, path), 'utf8')

/** The platforms Next.js developers write code on and deploy to: each gets a prebuilt addon. */
const TARGETS = {
  'x86_64-apple-darwin': { platform: 'darwin-x64', os: 'darwin', cpu: 'x64' },
  'aarch64-apple-darwin': { platform: 'darwin-arm64', os: 'darwin', cpu: 'arm64' },
  'x86_64-unknown-linux-gnu': { platform: 'linux-x64-gnu', os: 'linux', cpu: 'x64', libc: 'glibc' },
  'aarch64-unknown-linux-gnu': { platform: 'linux-arm64-gnu', os: 'linux', cpu: 'arm64', libc: 'glibc' },
  'x86_64-unknown-linux-musl': { platform: 'linux-x64-musl', os: 'linux', cpu: 'x64', libc: 'musl' },
  'aarch64-unknown-linux-musl': { platform: 'linux-arm64-musl', os: 'linux', cpu: 'arm64', libc: 'musl' },
  'x86_64-pc-windows-msvc': { platform: 'win32-x64-msvc', os: 'win32', cpu: 'x64' },
  'aarch64-pc-windows-msvc': { platform: 'win32-arm64-msvc', os: 'win32', cpu: 'arm64' },
}
const sorted = (list) => [...list].sort()

test('napi.targets is the eight targets of the platform table', () => {
  assert.deepEqual(sorted(pkg.napi.targets), sorted(Object.keys(TARGETS)))
})

test('the release workflow builds and tests every target of napi.targets, and nothing else', () => {
  const release = loadYaml(read('.github/workflows/release.yml'))
  for (const job of ['build', 'test']) {
    const targets = release.jobs[job].strategy.matrix.settings.map((s) => s.target)
    assert.deepEqual(sorted(targets), sorted(pkg.napi.targets), `jobs.${job}`)
    assert.equal(new Set(targets).size, targets.length, `jobs.${job} lists a target twice`)
  }
  for (const s of release.jobs.build.strategy.matrix.settings) {
    assert.ok(s.build.includes(`--target ${s.target}`), `the build of ${s.target} does not build it: ${s.build}`)
  }
  // Publishing: napi artifacts, then npm publish (napi pre-publish in prepublishOnly), with provenance.
  const steps = release.jobs.publish.steps.map((s) => s.run || '').join('\n')
  assert.match(steps, /napi artifacts/)
  assert.match(steps, /npm publish --provenance/)
  assert.match(pkg.scripts.prepublishOnly, /napi pre-publish/)
  assert.equal(release.jobs.publish.permissions['id-token'], 'write')
})

test('CI tests on Linux, macOS and Windows', () => {
  const ci = loadYaml(read('.github/workflows/ci.yml'))
  assert.deepEqual(sorted(ci.jobs.test.strategy.matrix.os), ['macos-latest', 'ubuntu-latest', 'windows-latest'])
})

test('npm/ has one package per target, as napi create-npm-dirs makes it', () => {
  const dirs = readdirSync(join(root, 'npm')).filter((d) => existsSync(join(root, 'npm', d, 'package.json')))
  assert.deepEqual(sorted(dirs), sorted(pkg.napi.targets.map((t) => TARGETS[t].platform)))
  for (const target of pkg.napi.targets) {
    const { platform, os, cpu, libc } = TARGETS[target]
    const sub = JSON.parse(read(`npm/${platform}/package.json`))
    const binary = `${pkg.napi.binaryName}.${platform}.node`
    assert.equal(sub.name, `${pkg.name}-${platform}`)
    assert.equal(sub.version, pkg.version, `npm/${platform} has another version`)
    assert.deepEqual(sub.os, [os], platform)
    assert.deepEqual(sub.cpu, [cpu], platform)
    // `libc` is what lets npm tell musl from glibc (npm install --libc musl).
    assert.deepEqual(sub.libc, libc ? [libc] : undefined, platform)
    assert.equal(sub.main, binary)
    assert.deepEqual(sub.files, [binary])
    assert.equal(sub.engines.node, pkg.engines.node)
  }
})

test('binding.js loads every platform, from a local file or its npm package', () => {
  const binding = read('binding.js')
  for (const target of pkg.napi.targets) {
    const { platform } = TARGETS[target]
    assert.ok(binding.includes(`require('./${pkg.napi.binaryName}.${platform}.node')`), platform)
    assert.ok(binding.includes(`require('${pkg.name}-${platform}')`), platform)
  }
})

test('optionalDependencies are written by napi pre-publish, never committed', () => {
  // Committed, `npm ci` fails until those versions of the platform packages are on the registry.
  assert.equal(pkg.optionalDependencies, undefined)
})

test('zod is an optional peer and a devDependency only', () => {
  assert.equal(pkg.dependencies?.zod, undefined)
  assert.ok(pkg.peerDependencies.zod)
  assert.equal(pkg.peerDependenciesMeta.zod.optional, true)
  assert.match(pkg.devDependencies.zod, /^\d+\.\d+\.\d+$/, 'the tested version is pinned')
})
