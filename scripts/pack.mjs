// Packs the package exactly as `npm publish` would ship it, without publishing anything:
//   the main package (JS + types, no binary) and the per-platform package npm/linux-x64-gnu
//   (the prebuilt `.node`), which the main one names in `optionalDependencies`.
// It runs the napi-rs publishing steps — `napi artifacts` (copy the built `.node` into npm/<target>/)
// and `napi pre-publish --skip-optional-publish` (write `optionalDependencies`) — on a copy of the
// package in a temp dir, so the working tree is never touched.
//
//   node scripts/pack.mjs [outDir]     → packs, prints the two tarball paths (default outDir: ./.pack)
//   import { packTarballs, ensurePacked } from './scripts/pack.mjs'
//
// It packs the addon that is built now; build it first (`npm install` / `npm run build`).
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

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
  // --ignore-scripts: `prepare` builds from source, which a packed copy neither has nor needs.
  const out = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', outDir], dir)
  return join(outDir, JSON.parse(out)[0].filename)
}

/** Packs both packages into `outDir`; returns `{ main, platform, platformPackage }` (tarball paths, name). */
export function packTarballs(outDir = join(root, '.pack')) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const abi = `${process.platform}-${process.arch}-gnu`
  if (abi !== 'linux-x64-gnu') throw new Error(`pack: only linux-x64-gnu is built here, this machine is ${abi}`)
  const binary = `${pkg.napi.binaryName}.${abi}.node`
  if (!existsSync(join(root, binary))) {
    throw new Error(`pack: ${binary} is missing; build the addon first (npm install, or npm run build)`)
  }
  if (!existsSync(join(root, 'npm', abi, 'package.json'))) {
    throw new Error(`pack: npm/${abi}/package.json is missing; run npx napi create-npm-dirs`)
  }

  mkdirSync(outDir, { recursive: true })
  const stage = mkdtempSync(join(tmpdir(), 'atc-pack-'))
  try {
    for (const f of ['package.json', 'README.md', 'LICENSE', ...pkg.files]) {
      if (existsSync(join(root, f))) cpSync(join(root, f), join(stage, f), { recursive: true })
    }
    cpSync(join(root, 'npm', abi), join(stage, 'npm', abi), { recursive: true })
    // The release steps of napi-rs, as in "Publishing" in the README.
    run(process.execPath, [napiCli, 'artifacts', '--cwd', stage, '--output-dir', root, '--npm-dir', 'npm'], stage)
    run(process.execPath, [napiCli, 'pre-publish', '--cwd', stage, '-t', 'npm', '--skip-optional-publish', '--no-gh-release'], stage)

    const staged = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'))
    const platformPackage = `${pkg.name}-${abi}`
    if (staged.optionalDependencies?.[platformPackage] !== pkg.version) {
      throw new Error(`pack: napi pre-publish did not add ${platformPackage}@${pkg.version} to optionalDependencies`)
    }
    if (!existsSync(join(stage, 'npm', abi, binary))) throw new Error(`pack: napi artifacts did not copy ${binary} into npm/${abi}`)
    return { main: npmPack(stage, outDir), platform: npmPack(join(stage, 'npm', abi), outDir), platformPackage }
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

/** The tarballs in `outDir`, packed again only when something that goes into them is newer. */
export function ensurePacked(outDir = join(root, '.pack')) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const abi = `${process.platform}-${process.arch}-gnu`
  const main = join(outDir, `${pkg.name}-${pkg.version}.tgz`)
  const platform = join(outDir, `${pkg.name}-${abi}-${pkg.version}.tgz`)
  const inputs = ['package.json', 'README.md', ...pkg.files, `${pkg.napi.binaryName}.${abi}.node`, join('npm', abi, 'package.json')]
    .map((f) => join(root, f))
    .filter(existsSync)
  const newestInput = Math.max(...inputs.map((f) => statSync(f).mtimeMs))
  const fresh = [main, platform].every((f) => existsSync(f) && statSync(f).mtimeMs > newestInput)
  return fresh ? { main, platform, platformPackage: `${pkg.name}-${abi}` } : packTarballs(outDir)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { main, platform } = packTarballs(process.argv[2] ? resolve(process.argv[2]) : undefined)
  console.log(main)
  console.log(platform)
}
