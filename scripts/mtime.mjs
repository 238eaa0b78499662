// When a file or a folder last changed, for the scripts that rebuild or repack only what is stale.
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** The mtime of `path` (ms); for a folder, the newest of it and of everything in it. */
export function newest(path) {
  const st = statSync(path)
  if (!st.isDirectory()) return st.mtimeMs
  return Math.max(st.mtimeMs, ...readdirSync(path).map((f) => newest(join(path, f))))
}
