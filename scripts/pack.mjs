// Packs the package exactly as `npm publish` would ship it, without publishing anything:
//   the main package (JS + types, no binary) and one npm/<platform> package (only the `.node`)
//   for this machine's platform (the root's `npm run build` output) and, with --cross, for every
//   platform scripts/cross-build.sh built (target/cross/<platform>/), which the main one names
//   in `optionalDependencies`.
// It runs the napi-rs publishing steps — `napi artifacts` (copy each built `.node` into
// npm/<platform>/) and `napi pre-publish --skip-optional-publish` (write `optionalDependencies`) —
// on a copy of the package in a temp dir, so the working tree is never touched. In that copy
// napi.targets is narrowed to the packed platforms (a release has all of them: see release.yml).
//
//   node scripts/pack.mjs [--cross] [outDir]   → packs, prints the tarball paths (default outDir: ./.pack)
//     --cross: also the platforms in target/cross/ (what scripts/cross-build.sh built)
//
// Besides those, it packs one more tarball for trying the package in an app before it is
// published: <outDir>/app/anthropic-tool-calling-<version>.tgz, the main package with the built
// binaries inside it (next to binding.js, which loads a binary from its own folder first) and no
// optionalDependencies. An app installs that one file and its package.json names only
// anthropic-tool-calling: installing the platform tarballs instead would write
// anthropic-tool-calling-linux-x64-gnu into the app's dependencies, which a teammate on a Mac then
// cannot install. docs/contributing.md says more.
//   import { packTarballs, ensurePacked } from './scripts/pack.mjs'
//
// It packs the addons that are built now; build first (`npm run build`; `npm run pack:local` and
// `npm run example:install` build a missing or stale one themselves).
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { newest } from './mtime.mjs'
import { hostPlatform, platformOfTarget } from './platform.mjs'

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const napiCli = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  if (r.status !== 0) {
    throw new Error(`${[cmd, ...args].join(' ')} (in ${cwd}) failed with ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`)
  }
  return r.stdout
}

function npmPack(dir, outDir) {
  // --ignore-scripts: the package has no pack-time scripts, and a staged copy must never run one.
  const out = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', outDir], dir)
  return join(outDir, JSON.parse(out)[0].filename)
}

const readPkg = () => JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

/** The built binary of each platform of napi.targets: `{ target, platform, binary, path }`. */
export function builtBinaries(pkg = readPkg(), { cross = false } = {}) {
  const host = hostPlatform()
  const found = []
  for (const target of pkg.napi.targets) {
    const platform = platformOfTarget(target)
    const binary = `${pkg.napi.binaryName}.${platform}.node`
    const candidates = cross ? [join(root, 'target', 'cross', platform, binary)] : []
    if (platform === host) candidates.unshift(join(root, binary))
    const path = candidates.find(existsSync)
    if (path) found.push({ target, platform, binary, path })
  }
  if (!found.some((b) => b.platform === host)) {
    throw new Error(`pack: ${pkg.napi.binaryName}.${host}.node is missing; build the addon first (npm run build)`)
  }
  return found
}

const tarballName = (pkg, platform) => (platform ? `${pkg.name}-${platform}-${pkg.version}.tgz` : `${pkg.name}-${pkg.version}.tgz`)

/** What the other scripts use: the main tarball, every platform's, and this machine's. */
function describe(pkg, outDir, platforms) {
  const host = hostPlatform()
  return {
    main: join(outDir, tarballName(pkg)),
    app: join(outDir, 'app', tarballName(pkg)),
    platforms: Object.fromEntries(platforms.map((p) => [p, join(outDir, tarballName(pkg, p))])),
    platform: join(outDir, tarballName(pkg, host)),
    platformPackage: `${pkg.name}-${host}`,
  }
}

/**
 * Packs the main package and this machine's platform package into `outDir`; with `cross`, also
 * every platform scripts/cross-build.sh built (target/cross/).
 */
export function packTarballs(outDir = join(root, '.pack'), { cross = false } = {}) {
  const pkg = readPkg()
  const built = builtBinaries(pkg, { cross })
  for (const { platform } of built) {
    if (!existsSync(join(root, 'npm', platform, 'package.json'))) {
      throw new Error(`pack: npm/${platform}/package.json is missing; run npx napi create-npm-dirs`)
    }
  }

  mkdirSync(outDir, { recursive: true })
  const stage = mkdtempSync(join(tmpdir(), 'atc-pack-'))
  const binaries = join(stage, '.binaries')
  try {
    for (const f of ['package.json', 'README.md', 'LICENSE', ...pkg.files]) {
      if (existsSync(join(root, f))) cpSync(join(root, f), join(stage, f), { recursive: true })
    }
    const staged = { ...pkg, napi: { ...pkg.napi, targets: built.map((b) => b.target) } }
    writeFileSync(join(stage, 'package.json'), JSON.stringify(staged, null, 2) + '\n')
    mkdirSync(binaries)
    for (const { platform, binary, path } of built) {
      cpSync(join(root, 'npm', platform), join(stage, 'npm', platform), { recursive: true })
      copyFileSync(path, join(binaries, binary))
    }
    // The release steps of napi-rs, as in docs/contributing.md ("Publishing").
    run(process.execPath, [napiCli, 'artifacts', '--cwd', stage, '--output-dir', binaries, '--npm-dir', 'npm'], stage)
    run(process.execPath, [napiCli, 'pre-publish', '--cwd', stage, '-t', 'npm', '--skip-optional-publish', '--no-gh-release'], stage)

    const published = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'))
    for (const { platform, binary } of built) {
      if (published.optionalDependencies?.[`${pkg.name}-${platform}`] !== pkg.version) {
        throw new Error(`pack: napi pre-publish did not add ${pkg.name}-${platform}@${pkg.version} to optionalDependencies`)
      }
      if (!existsSync(join(stage, 'npm', platform, binary))) throw new Error(`pack: napi artifacts did not copy ${binary} into npm/${platform}`)
    }
    rmSync(binaries, { recursive: true })
    npmPack(stage, outDir)
    for (const { platform } of built) npmPack(join(stage, 'npm', platform), outDir)
    packForApps(stage, published, built, join(outDir, 'app'))
    return describe(pkg, outDir, built.map((b) => b.platform))
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

/**
 * The tarball for an app to try before the package is published: the staged main package with
 * every built binary beside binding.js and no optionalDependencies, so that it needs nothing from
 * the registry and adds no platform package to the app's package.json.
 */
function packForApps(stage, published, built, appDir) {
  const { optionalDependencies, ...rest } = published
  const forApps = { ...rest, files: [...published.files, ...built.map((b) => b.binary)] }
  writeFileSync(join(stage, 'package.json'), JSON.stringify(forApps, null, 2) + '\n')
  for (const { platform, binary } of built) copyFileSync(join(stage, 'npm', platform, binary), join(stage, binary))
  mkdirSync(appDir, { recursive: true })
  return npmPack(stage, appDir)
}

/** What to run in an app to try this build, for the CLI's last lines. */
export function howToInstall(packed) {
  const platforms = Object.keys(packed.platforms).join(', ')
  return [
    '',
    'To try this build in your own app (its package.json will name only anthropic-tool-calling):',
    `  npm install ${packed.app}`,
    `That tarball carries the binaries built here (${platforms}) beside binding.js, which loads them`,
    'from there. On another platform, pack on that platform (or cross-build and pass --cross).',
    'The other tarballs above are what the registry will serve; e2e/ installs them.',
  ].join('\n')
}

/** The tarballs in `outDir`, packed again only when something that goes into them is newer. */
export function ensurePacked(outDir = join(root, '.pack'), { cross = false } = {}) {
  const pkg = readPkg()
  const built = builtBinaries(pkg, { cross })
  const packed = describe(pkg, outDir, built.map((b) => b.platform))
  const inputs = ['package.json', 'README.md', ...pkg.files, ...built.map((b) => join('npm', b.platform, 'package.json'))]
    .map((f) => join(root, f))
    .concat(built.map((b) => b.path))
    .filter(existsSync)
  // newest: a folder of "files" (lib) counts as its newest file.
  const newestInput = Math.max(...inputs.map(newest))
  const fresh = [packed.main, packed.app, ...Object.values(packed.platforms)].every((f) => existsSync(f) && statSync(f).mtimeMs > newestInput)
  return fresh ? packed : packTarballs(outDir, { cross })
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const cross = args.includes('--cross')
  const outDir = args.find((a) => !a.startsWith('--'))
  const packed = packTarballs(outDir ? resolve(outDir) : undefined, { cross })
  console.log(packed.main)
  for (const tarball of Object.values(packed.platforms)) console.log(tarball)
  console.log(packed.app)
  console.error(howToInstall(packed))
}
