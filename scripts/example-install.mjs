// Installs examples/nextjs the way a user's app gets the package: from the `npm pack` tarballs
// (a real copy in node_modules, not a `file:` symlink to this repository), the prebuilt binary
// coming through the main package's optionalDependencies. Then seeds its database if there is none.
//
//   npm run example:install            (packs first when the addon or the JS changed)
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensurePacked, root } from './pack.mjs'

export const app = join(root, 'examples', 'nextjs')

function run(cmd, args, cwd, env = process.env) {
  const r = spawnSync(cmd, args, { cwd, env, stdio: 'inherit' })
  if (r.status !== 0) throw new Error(`${[cmd, ...args].join(' ')} (in ${cwd}) failed with ${r.status ?? r.signal}`)
}

const sha = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

/** Packs if needed and (re)installs the example when its tarballs or package.json changed. */
export function installExample({ log = (line) => console.log(line) } = {}) {
  const { main, platform, platformPackage } = ensurePacked()
  const vendor = join(app, 'vendor')
  mkdirSync(vendor, { recursive: true })
  // Fixed names: examples/nextjs/package.json refers to them.
  copyFileSync(main, join(vendor, 'anthropic-tool-calling.tgz'))
  copyFileSync(platform, join(vendor, `${platformPackage}.tgz`))

  const modules = join(app, 'node_modules')
  const stampFile = join(modules, '.anthropic-tool-calling-tarballs')
  const stamp = [sha(main), sha(platform), sha(join(app, 'package.json'))].join('\n')
  const upToDate = existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(join(modules, 'next', 'package.json'))
  if (upToDate) {
    log('examples/nextjs: dependencies up to date with the packed tarballs')
  } else {
    log('examples/nextjs: npm install (the package from its tarballs)')
    // Without these two folders npm re-reads the tarballs instead of trusting what it installed before.
    for (const name of ['anthropic-tool-calling', platformPackage]) rmSync(join(modules, name), { recursive: true, force: true })
    const env = { ...process.env }
    // better-sqlite3 compiles from source here (its prebuilt binaries live on GitHub, out of reach):
    // point node-gyp at this Node's own headers instead of downloading them.
    const prefix = dirname(dirname(process.execPath))
    if (!env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h'))) env.npm_config_nodedir = prefix
    run('npm', ['install', '--no-audit', '--no-fund'], app, env)
    for (const name of ['anthropic-tool-calling', platformPackage]) {
      const st = lstatSync(join(modules, name))
      if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`examples/nextjs: node_modules/${name} is not a real copy`)
    }
    writeFileSync(stampFile, stamp)
  }
  if (!existsSync(join(app, 'data', 'orders.db'))) run(process.execPath, [join(app, 'scripts', 'seed-db.mjs')], app)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    installExample()
  } catch (err) {
    console.error(err.message)
    process.exit(1)
  }
}
