// This package with a PostgreSQL store (the server bench/run.mjs started, BENCH_POSTGRES_URL):
// each run in a thread of its own, as ours-sqlite.mjs does with SQLite.
import { stored } from './ours-sqlite.mjs'

export function setup(config) {
  const url = process.env.BENCH_POSTGRES_URL
  if (!url) throw new Error('BENCH_POSTGRES_URL is not set: bench/run.mjs starts a PostgreSQL server for this contender')
  return stored(config, url)
}
