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
  return db
}

