//! A store as a run holds it: its backend (SQLite or PostgreSQL), the URL as messages quote it,
//! and the one way an operation reaches the database, in a transaction.

use std::sync::Arc;

use super::streams::{Streams, DEFAULT_STREAM_RETENTION_MS};
use super::tx::{Op, StoreError};
use super::url::StoreUrl;
use super::{postgres, sqlite};

/// The settings of [`Store::open`] besides the URL.
#[derive(Debug, Clone, Default)]
pub struct StoreOptions {
    /// The most connections a PostgreSQL pool opens (default 10).
    pub max_connections: Option<u32>,
    /// How long a run holds a thread without renewing (default [`DEFAULT_LEASE_MS`]).
    pub lease_ms: Option<i64>,
    /// How long a finished run's stream is kept (default [`DEFAULT_STREAM_RETENTION_MS`]).
    pub stream_retention_ms: Option<i64>,
}

/// A run's hold on a thread lasts this long unless renewed (every third of it).
pub const DEFAULT_LEASE_MS: i64 = 30_000;

enum Backend {
    Sqlite(sqlite::Sqlite),
    Postgres(postgres::Postgres),
}

/// A store, shared by every run that names it. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    backend: Arc<Backend>,
    quoted: Arc<str>,
    lease_ms: i64,
    /// Its runs' streams: their writers, and who waits for them (`stream_log.rs`).
    pub(super) streams: Arc<Streams>,
}

impl Store {
    /// A store for `url` (see [`StoreUrl::parse`]); nothing is connected until the first
    /// operation. A malformed URL is an `Err` saying why.
    pub fn open(url: &str, options: StoreOptions) -> Result<Store, String> {
        let parsed = StoreUrl::parse(url)?;
        let quoted: Arc<str> = parsed.quoted().into();
        let backend = match parsed {
            StoreUrl::Sqlite(path) => Backend::Sqlite(sqlite::Sqlite::new(path, quoted.clone())),
            StoreUrl::Postgres { config, tls, .. } => Backend::Postgres(postgres::Postgres::new(
                *config,
                tls,
                options.max_connections.unwrap_or(10).max(1) as usize,
                quoted.clone(),
            )?),
        };
        Ok(Store {
            backend: Arc::new(backend),
            quoted,
            lease_ms: options.lease_ms.unwrap_or(DEFAULT_LEASE_MS),
            streams: Arc::new(Streams::new(
                options
                    .stream_retention_ms
                    .unwrap_or(DEFAULT_STREAM_RETENTION_MS),
            )),
        })
    }

    /// The URL as messages quote it: without a password or a query.
    pub fn quoted(&self) -> &str {
        &self.quoted
    }

    /// How long a run holds a thread without renewing.
    pub fn lease_ms(&self) -> i64 {
        self.lease_ms
    }

    /// Runs `op` in one transaction: committed when it returns `Ok`, rolled back otherwise.
    pub(super) async fn transact<T: Send + 'static>(&self, op: Op<T>) -> Result<T, StoreError> {
        match &*self.backend {
            Backend::Sqlite(db) => db.transact(op).await,
            Backend::Postgres(db) => db.transact(op).await,
        }
    }

    /// How many transactions a SQLite store committed (operations are committed in groups).
    #[cfg(test)]
    pub(super) fn sqlite_commits(&self) -> Option<u64> {
        match &*self.backend {
            Backend::Sqlite(db) => Some(db.commits()),
            Backend::Postgres(_) => None,
        }
    }

    /// The PostgreSQL backend, if this is one.
    pub(super) fn postgres(&self) -> Option<&postgres::Postgres> {
        match &*self.backend {
            Backend::Postgres(db) => Some(db),
            Backend::Sqlite(_) => None,
        }
    }

    /// Ends the store's connections; a later operation opens them again.
    pub async fn close(&self) {
        self.streams.close().await;
        match &*self.backend {
            Backend::Sqlite(db) => db.close().await,
            Backend::Postgres(db) => db.close(),
        }
    }
}

/// A random id: 128 bits, in hex.
pub fn random_id() -> String {
    random_hex(16)
}

/// An id that sorts by when it was made: the time (milliseconds since the epoch, 12 hex
/// digits), then 128 random bits in hex. The store's rows keyed by it (a run's log, its calls, a
/// run's own thread and its messages) go in at the end of their index, the pages a group commit
/// writes anyway, rather than each on a page of its own anywhere in it.
pub fn ordered_id() -> String {
    format!("{:012x}{}", now_ms().max(0), random_id())
}

/// `bytes` random bytes from the operating system, in lower-case hex: a thread's approval
/// secret.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    // The OS's generator does not fail on the platforms this package ships for; if it ever did,
    // a fixed secret would sign approval ids anyone could forge, so it is a panic (caught).
    getrandom::fill(&mut buf).expect("the operating system's random generator");
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(bytes * 2);
    for b in buf {
        hex.push(char::from(HEX[usize::from(b >> 4)]));
        hex.push(char::from(HEX[usize::from(b & 15)]));
    }
    hex
}

/// Milliseconds since the Unix epoch, the store's clock.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
