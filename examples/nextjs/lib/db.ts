import Database from 'better-sqlite3'
import path from 'node:path'

/** The SQLite file of orders: `ORDERS_DB`, else data/orders.db (created by `npm run db:seed`). */
export const DB_PATH = process.env.ORDERS_DB
  ? path.resolve(/* turbopackIgnore: true */ process.env.ORDERS_DB)
  : path.join(process.cwd(), 'data', 'orders.db')

let db: Database.Database | null = null

/** One connection per server process, opened on first use. */
export function getDb(): Database.Database {
  if (db) return db
  try {
    db = new Database(DB_PATH, { fileMustExist: true })
  } catch (err) {
    throw new Error(`Cannot open the orders database ${DB_PATH}: ${(err as Error).message}. Create it with \`npm run db:seed\`.`, { cause: err })
  }
  db.pragma('journal_mode = WAL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  // The conversations live here too (lib/chats.ts). Made on first use, so a database seeded
  // before the table existed gets it as well.
  db.exec(CHATS_TABLE)
  return db
}

/**
 * One row per conversation, on the server: the browser holds only its id. `messages` is the
 * `data.messages` of the last run that succeeded (Messages API params, as JSON); `pending` the
 * calls that wait for the person's answer while that run is paused for approval; `decisions`
 * the answers given so far (by tool_use id), so a reloaded page shows declined calls as
 * declined. `lease` / `lease_until`: the run in progress, so one chat runs one request at a time.
 */
const CHATS_TABLE = `
  CREATE TABLE IF NOT EXISTS chats (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('chat', 'ask')),
    on_tool_error TEXT NOT NULL CHECK (on_tool_error IN ('stop', 'continue')),
    messages      TEXT NOT NULL DEFAULT '[]',
    pending       TEXT,
    decisions     TEXT NOT NULL DEFAULT '{}',
    lease         TEXT,
    lease_until   INTEGER,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
  )`
