// A real PostgreSQL server for the store's tests and the bench's store cells, started by them: a fresh
// cluster (initdb) in a temporary folder, listening on 127.0.0.1 at a free port, stopped when the
// process exits. Debian's server binaries (package postgresql, which .ci/run installs); as root the
// server runs as the `postgres` user, since PostgreSQL refuses to run as root.
import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.mjs'

/** The newest installed server's bin folder, or null when there is none. */
export function postgresBin() {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a))
  return versions.length > 0 ? join(root, versions[0], 'bin') : null
}

function userOf() {
  if (process.getuid?.() !== 0) return null
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
  if (id.status !== 0) throw new Error('running as root, and there is no postgres user to run the server as')
  return { uid: Number(id.stdout.trim()), gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()) }
}

/**
 * Starts a server; resolves with `{ url(db), createDatabase(name), stop() }`. `url(db)` is
 * `postgres://postgres@127.0.0.1:<port>/<db>` (trust authentication on loopback only).
 */
export async function startPostgres() {
  const bin = postgresBin()
  if (bin === null) throw new Error('no PostgreSQL server is installed (/usr/lib/postgresql/*/bin): apt-get install postgresql')
  const user = userOf()
  const dir = mkdtempSync(join(tmpdir(), 'atc-pg-'))
  const data = join(dir, 'data')
  if (user) {
    chownSync(dir, user.uid, user.gid)
    chmodSync(dir, 0o700)
  }
  const run = (cmd, args) => {
    const full = user ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args
    const result = spawnSync(user ? 'runuser' : join(bin, cmd), full, { encoding: 'utf8', cwd: dir })
    if (result.status !== 0) throw new Error(`${cmd} failed (${result.status}): ${result.stderr || result.stdout}`)
    return result.stdout
  }
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`
  run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'])
  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    try {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
    } catch {}
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', stop)
  return {
    port,
    url: (db = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${db}`,
    createDatabase(name) {
      run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-v', 'ON_ERROR_STOP=1', '-c', `CREATE DATABASE "${name}"`])
      return `postgres://postgres@127.0.0.1:${port}/${name}`
    },
    sql(db, statement) {
      return run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-At', '-c', statement])
    },
    stop,
  }
}
