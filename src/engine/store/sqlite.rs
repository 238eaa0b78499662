//! The SQLite backend: one connection, opened at first use, in WAL mode with a busy timeout so
//! that several processes on one machine share the file. Its work runs on the blocking pool;
//! an operation's future is driven there to its end (nothing in it waits on anything but
//! SQLite).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::schema;
use super::tx::{Dialect, Tx, Val};
use super::tx::{Op, StoreError};

/// How long a writer waits for another process's write to finish before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Sqlite {
    path: Option<PathBuf>,
    conn: Arc<Mutex<Option<Connection>>>,
    quoted: Arc<str>,
}

impl Sqlite {
    pub fn new(path: Option<PathBuf>, quoted: Arc<str>) -> Sqlite {
        Sqlite {
            path,
            conn: Arc::new(Mutex::new(None)),
            quoted,
        }
    }

    pub async fn transact<T: Send + 'static>(&self, op: Op<T>) -> Result<T, StoreError> {
        let path = self.path.clone();
        let quoted = self.quoted.clone();
        let work = move |mut held: std::sync::MutexGuard<'_, Option<Connection>>| {
            if held.is_none() {
                *held = Some(open(path.as_deref(), &quoted)?);
            }
            let Some(conn) = held.as_mut() else {
                unreachable!("opened above")
            };
            run(conn, op).map_err(|e| {
                StoreError(format!("could not use the SQLite store {quoted}: {}", e.0))
            })
        };
        // An open connection nobody holds, on a worker of a multi-threaded runtime: the
        // transaction (tens of microseconds: WAL, no fsync at commit) runs right here, the worker
        // lent to it, which saves two hops between threads. Otherwise, on the blocking pool.
        // Either way a panic in the operation is the store's failure, not the run's.
        let panicked = || {
            Err(StoreError(format!(
                "a store operation on {} panicked",
                self.quoted
            )))
        };
        if on_multi_thread_runtime() {
            if let Ok(held) = self.conn.try_lock() {
                if held.is_some() {
                    return tokio::task::block_in_place(|| {
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(held)))
                    })
                    .unwrap_or_else(|_| panicked());
                }
            }
        }
        let conn = self.conn.clone();
        let work = tokio::task::spawn_blocking(move || {
            work(conn.lock().unwrap_or_else(|p| p.into_inner()))
        });
        work.await.unwrap_or_else(|_| panicked())
    }

    pub async fn close(&self) {
        let conn = self.conn.clone();
        let _ = tokio::task::spawn_blocking(move || {
            conn.lock().unwrap_or_else(|p| p.into_inner()).take();
        })
        .await;
    }
}

/// Whether this task runs on a worker of a multi-threaded runtime, where `block_in_place` may
/// lend the worker to a short transaction (it would panic on a current-thread runtime).
fn on_multi_thread_runtime() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// Opens the file (making its folder), sets WAL and the busy timeout, and migrates.
fn open(path: Option<&std::path::Path>, quoted: &str) -> Result<Connection, StoreError> {
    let failed = |e: &dyn std::fmt::Display| {
        StoreError(format!("could not open the SQLite store {quoted}: {e}"))
    };
    let conn = match path {
        None => Connection::open_in_memory().map_err(|e| failed(&e))?,
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
            }
            Connection::open(path).map_err(|e| failed(&e))?
        }
    };
    let setup = || -> rusqlite::Result<()> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        if path.is_some() {
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
        }
        Ok(())
    };
    setup().map_err(|e| failed(&e))?;
    let mut conn = conn;
    run(&mut conn, Box::new(|tx| Box::pin(schema::migrate(tx))))
        .map_err(|e| StoreError(format!("could not set up the SQLite store {quoted}: {e}")))?;
    Ok(conn)
}

/// Runs `op` in a write transaction (`BEGIN IMMEDIATE`: the file's write lock is taken first,
/// so two processes never both read and then both write).
fn run<T>(conn: &mut Connection, op: Op<T>) -> Result<T, StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(sql_error)?;
    let mut tx = SqliteTx { conn };
    let out = futures::executor::block_on(op(&mut tx));
    let finish = if out.is_ok() { "COMMIT" } else { "ROLLBACK" };
    match (out, conn.execute_batch(finish)) {
        (Ok(v), Ok(())) => Ok(v),
        (Ok(_), Err(e)) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(sql_error(e))
        }
        (Err(e), _) => Err(e),
    }
}

fn sql_error(e: rusqlite::Error) -> StoreError {
    StoreError(format!("SQLite: {e}"))
}

struct SqliteTx<'c> {
    conn: &'c mut Connection,
}

/// `$1` → `?1`: the statements are written as PostgreSQL numbers its parameters.
fn sqlite_sql(sql: &str) -> String {
    sql.replace('$', "?")
}

fn params(vals: &[Val]) -> Vec<rusqlite::types::Value> {
    vals.iter()
        .map(|v| match v {
            Val::Int(n) => rusqlite::types::Value::Integer(*n),
            Val::Text(s) => rusqlite::types::Value::Text(s.clone()),
        })
        .collect()
}

impl Tx for SqliteTx<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query<'a>(
        &'a mut self,
        sql: &'a str,
        vals: &'a [Val],
    ) -> BoxFuture<'a, Result<Vec<Vec<Val>>, StoreError>> {
        let rows = (|| {
            let mut stmt = self.conn.prepare_cached(&sqlite_sql(sql))?;
            let width = stmt.column_count();
            let mut rows = stmt.query(rusqlite::params_from_iter(params(vals)))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let mut vals = Vec::with_capacity(width);
                for i in 0..width {
                    vals.push(match row.get_ref(i)? {
                        ValueRef::Integer(n) => Val::Int(n),
                        ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Real(f) => Val::Int(f as i64),
                        ValueRef::Null | ValueRef::Blob(_) => Val::Text(String::new()),
                    });
                }
                out.push(vals);
            }
            Ok(out)
        })()
        .map_err(sql_error);
        Box::pin(std::future::ready(rows))
    }

    fn execute<'a>(
        &'a mut self,
        sql: &'a str,
        vals: &'a [Val],
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        let changed = self
            .conn
            .prepare_cached(&sqlite_sql(sql))
            .and_then(|mut stmt| stmt.execute(rusqlite::params_from_iter(params(vals))))
            .map(|n| n as u64)
            .map_err(sql_error);
        Box::pin(std::future::ready(changed))
    }
}
