// Creates the SQLite database of orders the tools read and write, and fills it with sample
// orders. Dates are relative to today, so the 30-day return window always behaves the same.
//
//   npm run db:seed                    → data/orders.db (or $ORDERS_DB)
//   node scripts/seed-db.mjs FILE      → FILE
//
// It replaces the file: run it again to start over.
import Database from 'better-sqlite3'
import { mkdirSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const app = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const file = resolve(process.argv[2] ?? process.env.ORDERS_DB ?? join(app, 'data', 'orders.db'))

/** `YYYY-MM-DD`, `days` from today (UTC). */
function day(days) {
  const d = new Date()
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

const orders = [
  // id,   customer,       item,                    status,       carrier, eta,     delivered_at
  ['4821', 'Ana García', 'Trail running shoes', 'shipped', 'UPS', day(2), null],
  ['1234', 'Bruno Díaz', 'Rain jacket', 'delivered', 'DHL', null, day(-10)],
  ['7777', 'Carla Ruiz', 'Camping stove', 'delivered', 'SEUR', null, day(-45)],
  ['5555', 'Diego López', 'Headlamp', 'processing', null, null, null],
  ['2468', 'Elena Martín', 'Sleeping bag', 'delivered', 'UPS', null, day(-3)],
  ['3141', 'Fabio Rossi', 'Water filter', 'delivered', 'DHL', null, day(-20)],
  ['6060', 'Gina Torres', 'Hiking poles', 'delivered', 'SEUR', null, day(-7)],
  ['8080', 'Hugo Navarro', 'Tent', 'delivered', 'UPS', null, day(-5)],
]

mkdirSync(dirname(file), { recursive: true })
for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true })

const db = new Database(file)
db.pragma('journal_mode = WAL')
db.exec(`
  CREATE TABLE orders (
    id           TEXT PRIMARY KEY,
    customer     TEXT NOT NULL,
    item         TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('processing', 'shipped', 'delivered', 'return_requested')),
    carrier      TEXT,
    eta          TEXT,
    delivered_at TEXT
  );
  CREATE TABLE returns (
    id           TEXT PRIMARY KEY,
    order_id     TEXT NOT NULL UNIQUE REFERENCES orders (id),
    reason       TEXT,
    requested_at TEXT NOT NULL
  );
`)
const insert = db.prepare('INSERT INTO orders (id, customer, item, status, carrier, eta, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
db.transaction(() => orders.forEach((o) => insert.run(...o)))()
db.close()
console.log(`Seeded ${orders.length} orders into ${file}`)
