//! The SQLite backend: one connection, opened at first use, in WAL mode with a busy timeout so
//! that several processes on one machine share the file.
//!
//! Operations are committed in groups: each one waits in a queue, and whichever operation finds
//! nobody draining it drains it, running every operation waiting there in one write
//! transaction, each in a savepoint of its own (an operation that fails or panics is rolled back
//! alone), and telling each how it went only once the transaction committed. Under load a
//! single commit (its locks, its WAL frames) serves many runs' steps; alone, an operation runs
//! right where it was asked (its worker lent to it), as one transaction of its own.

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

/// How many prepared statements the connection keeps (more than the store has).
const STATEMENTS_KEPT: usize = 256;

/// The most operations one transaction commits together.
const MOST_IN_A_GROUP: usize = 256;

/// How many groups the operation that began draining commits before it hands the rest to the
/// blocking pool (so one run is not kept serving everyone else's steps).
const GROUPS_BEFORE_HANDING_ON: usize = 4;

/// Tells an operation how its group's commit went (`None`: committed).
type Finish = Box<dyn FnOnce(Option<&StoreError>) + Send>;

/// An operation waiting for its group.
trait Waiting: Send {
    /// Runs it in the group's transaction (in a savepoint of its own): what tells it how the
    /// commit went.
    fn run(self: Box<Self>, conn: &mut Connection) -> Finish;
    /// Tells it its group could not begin.
    fn fail(self: Box<Self>, e: &StoreError);
}

type Job = Box<dyn Waiting>;

struct Operation<T> {
    op: Op<T>,
    told: tokio::sync::oneshot::Sender<Result<T, StoreError>>,
    quoted: Arc<str>,
}

impl<T: Send + 'static> Waiting for Operation<T> {
    fn run(self: Box<Self>, conn: &mut Connection) -> Finish {
        let Operation { op, told, quoted } = *self;
        let out = in_savepoint(conn, op, &quoted);
        Box::new(move |commit| {
            let _ = told.send(match (out, commit) {
                (Ok(v), None) => Ok(v),
                (Ok(_), Some(e)) => Err(e.clone()),
                (Err(e), _) => Err(e),
            });
        })
    }

    fn fail(self: Box<Self>, e: &StoreError) {
        let _ = self.told.send(Err(e.clone()));
    }
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// Somebody drains the queue: a new job only waits.
    draining: bool,
}

struct Shared {
    path: Option<PathBuf>,
    quoted: Arc<str>,
    queue: Mutex<Queue>,
    /// Locked only by whoever drains the queue (and by `close`).
    conn: Mutex<Option<Connection>>,
    /// How many group transactions were committed.
    commits: std::sync::atomic::AtomicU64,
}

pub struct Sqlite {
    shared: Arc<Shared>,
}

impl Sqlite {
    pub fn new(path: Option<PathBuf>, quoted: Arc<str>) -> Sqlite {
        Sqlite {
            shared: Arc::new(Shared {
                path,
                quoted,
                queue: Mutex::new(Queue::default()),
                conn: Mutex::new(None),
                commits: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    pub async fn transact<T: Send + 'static>(&self, op: Op<T>) -> Result<T, StoreError> {
        let (told, outcome) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(Operation {
            op,
            told,
            quoted: self.shared.quoted.clone(),
        });
        let lead = {
            let mut queue = self.shared.lock_queue();
            queue.jobs.push(job);
            !std::mem::replace(&mut queue.draining, true)
        };
        if lead {
            let shared = self.shared.clone();
            if on_multi_thread_runtime() {
                // A transaction takes tens of microseconds (WAL, no fsync at commit): it runs
                // right here, the worker lent to it, which saves two hops between threads.
                tokio::task::block_in_place(|| shared.drain(GROUPS_BEFORE_HANDING_ON));
            } else {
                let _ = tokio::task::spawn_blocking(move || shared.drain(usize::MAX)).await;
            }
        }
        outcome.await.unwrap_or_else(|_| {
            Err(StoreError(format!(
                "a store operation on {} panicked",
                self.shared.quoted
            )))
        })
    }

    /// How many group transactions were committed.
    #[cfg(test)]
    pub fn commits(&self) -> u64 {
        self.shared
            .commits
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub async fn close(&self) {
        let shared = self.shared.clone();
        let _ = tokio::task::spawn_blocking(move || {
            shared.lock_conn().take();
        })
        .await;
    }
}

impl Shared {
    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_conn(&self) -> std::sync::MutexGuard<'_, Option<Connection>> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Commits the queue's jobs, group by group, until it is empty (then nobody drains it) or
    /// `groups` were committed (then the blocking pool drains the rest).
    fn drain(self: Arc<Self>, groups: usize) {
        for _ in 0..groups {
            let group = {
                let mut queue = self.lock_queue();
                if queue.jobs.is_empty() {
                    queue.draining = false;
                    return;
                }
                let n = queue.jobs.len().min(MOST_IN_A_GROUP);
                queue.jobs.drain(..n).collect::<Vec<_>>()
            };
            // A panic outside the jobs (each job's own are caught) must not leave the queue
            // drained by nobody: its jobs are told through their dropped senders.
            let committed =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.commit(group)));
            if committed.is_err() {
                tracing::error!(store = &*self.quoted, "a SQLite group commit panicked");
            }
        }
        tokio::task::spawn_blocking(move || self.drain(usize::MAX));
    }

    /// One transaction for `group`: each job in a savepoint, then one commit, then each told.
    fn commit(&self, group: Vec<Job>) {
        let mut held = self.lock_conn();
        if held.is_none() {
            match open(self.path.as_deref(), &self.quoted) {
                Ok(conn) => *held = Some(conn),
                Err(e) => return group.into_iter().for_each(|job| job.fail(&e)),
            }
        }
        let Some(conn) = held.as_mut() else {
            unreachable!("opened above")
        };
        let used = |e: StoreError| {
            StoreError(format!(
                "could not use the SQLite store {}: {}",
                self.quoted, e.0
            ))
        };
        if let Err(e) = exec(conn, "BEGIN IMMEDIATE").map_err(sql_error) {
            let e = used(e);
            return group.into_iter().for_each(|job| job.fail(&e));
        }
        let finishes: Vec<Finish> = group.into_iter().map(|job| job.run(conn)).collect();
        let commit = match exec(conn, "COMMIT") {
            Ok(()) => {
                self.commits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                None
            }
            Err(e) => {
                let _ = exec(conn, "ROLLBACK");
                Some(used(sql_error(e)))
            }
        };
        // A connection still in its transaction (its COMMIT and its ROLLBACK both failed) could
        // begin no other: the next group opens the file afresh.
        if !conn.is_autocommit() {
            *held = None;
        }
        drop(held);
        for finish in finishes {
            finish(commit.as_ref());
        }
    }
}

/// Runs `op` in a savepoint of the group's transaction: kept if it succeeds, rolled back alone
/// if it fails or panics (a panic is the store's failure, not the run's).
fn in_savepoint<T>(conn: &mut Connection, op: Op<T>, quoted: &str) -> Result<T, StoreError> {
    let used =
        |e: StoreError| StoreError(format!("could not use the SQLite store {quoted}: {}", e.0));
    exec(conn, "SAVEPOINT op").map_err(|e| used(sql_error(e)))?;
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut tx = SqliteTx { conn: &mut *conn };
        futures::executor::block_on(op(&mut tx))
    }));
    let out = match out {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(used(e)),
        Err(_) => Err(StoreError(format!(
            "a store operation on {quoted} panicked"
        ))),
    };
    let end = if out.is_ok() {
        exec(conn, "RELEASE op")
    } else {
        exec(conn, "ROLLBACK TO op").and_then(|()| exec(conn, "RELEASE op"))
    };
    match (out, end) {
        (Ok(v), Ok(())) => Ok(v),
        (Ok(_), Err(e)) => Err(used(sql_error(e))),
        (Err(e), _) => Err(e),
    }
}

/// Runs one statement that returns no rows, kept prepared: the transaction and savepoint
/// statements run several times per step, and parsing each again costs more than running it.
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
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
        // Every statement the store runs stays prepared: a durable run's step uses more of them
        // than rusqlite's default cache (16) holds, and preparing one again costs more than
        // running it.
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
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
