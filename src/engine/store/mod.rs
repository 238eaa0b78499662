//! The store: a database the package keeps, where a thread's conversation lives beyond the
//! process that ran it. SQLite, embedded, by default (a file; nothing to install), PostgreSQL
//! when several server instances share the work. Every operation is one transaction, run off
//! the caller's thread (SQLite on the blocking pool, PostgreSQL on the async runtime).
//!
//! The operations (`threads`) are written once, against [`Tx`]; each backend runs them in a
//! transaction of its own kind.

mod call_log;
mod committer;
mod database;
mod new_turn;
mod pg_listen;
mod postgres;
mod run_log;
mod runs;
mod schema;
mod sqlite;
mod stop;
mod stream_end;
mod stream_log;
mod stream_write;
mod streams;
mod thread_run;
mod threads;
mod tx;
mod url;

pub use database::{ordered_id, random_id, Store, StoreOptions, DEFAULT_LEASE_MS};
pub use run_log::{RunLog, TakeOver};
pub use stream_log::{StreamHold, StreamRead, StreamState};
pub use streams::DEFAULT_STREAM_RETENTION_MS;
pub use thread_run::{run_in_thread, DurableRun, ThreadRef, OWN_THREAD_OWNER};
pub use threads::holder;
pub use threads::{ThreadRecord, ThreadSummary};
pub use tx::StoreError;
pub use url::StoreUrl;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_writes;
