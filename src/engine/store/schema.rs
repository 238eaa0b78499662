//! The store's tables, made and migrated by the package: each version's statements run in one
//! transaction with the version recorded, so a store is at one version or the one before, never
//! between. A store written by a newer version of this package is refused, never altered.

use super::tx::StoreError;
use super::tx::{Dialect, Tx, Val};

/// The version this package writes.
pub const VERSION: i64 = 3;

/// The statements that take a store from version `n - 1` to `n`, at index `n - 1`. Written in
/// the SQL both databases take; `BIGINT` is SQLite's INTEGER.
const MIGRATIONS: &[&[&str]] = &[
    &[
        "CREATE TABLE IF NOT EXISTS atc_threads (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        metadata TEXT NOT NULL,
        status TEXT NOT NULL,
        active_run TEXT NOT NULL,
        lease_until BIGINT NOT NULL,
        pending TEXT NOT NULL,
        secret TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
        "CREATE INDEX IF NOT EXISTS atc_threads_by_owner ON atc_threads (owner, updated_at, id)",
        "CREATE TABLE IF NOT EXISTS atc_messages (
        thread_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (thread_id, seq)
    )",
    ],
    &[
        // Version 2: durable runs. A run's log: its options (no secret), where in its thread it
        // began, how far it got (usage, rounds), how it ended, and each tool call's records.
        "CREATE TABLE IF NOT EXISTS atc_runs (
        id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        options TEXT NOT NULL,
        started_at_seq BIGINT NOT NULL,
        progress TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT NOT NULL,
        resumed BIGINT NOT NULL,
        stop_requested BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
        "CREATE TABLE IF NOT EXISTS atc_calls (
        run_id TEXT NOT NULL,
        tool_use_id TEXT NOT NULL,
        attempts BIGINT NOT NULL,
        started_at BIGINT NOT NULL,
        finished TEXT NOT NULL,
        PRIMARY KEY (run_id, tool_use_id)
    )",
    ],
    &[
        // Version 3: resumable streams (`stream_log.rs`). A streamed run's UI message stream, as
        // the SSE text it sent, in the slices it was written in; whether it is over, and until
        // when a finished one is kept.
        "CREATE TABLE IF NOT EXISTS atc_streams (
        run_id TEXT PRIMARY KEY,
        done BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
        "CREATE TABLE IF NOT EXISTS atc_stream_chunks (
        run_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        chunks TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    )",
    ],
];

/// Brings the store to [`VERSION`], in one transaction (the caller's).
pub async fn migrate(tx: &mut dyn Tx) -> Result<(), StoreError> {
    if tx.dialect() == Dialect::Postgres {
        // Two processes starting together: the second waits here, then finds the tables made.
        tx.query("SELECT pg_advisory_xact_lock(7380912311)", &[])
            .await?;
    }
    tx.execute(
        "CREATE TABLE IF NOT EXISTS atc_schema (id BIGINT PRIMARY KEY, version BIGINT NOT NULL)",
        &[],
    )
    .await?;
    let rows = tx
        .query("SELECT version FROM atc_schema WHERE id = 1", &[])
        .await?;
    let found = rows.first().and_then(|r| r.first()).map_or(0, Val::int);
    if found > VERSION {
        return Err(StoreError(format!(
            "the store's tables are at version {found}, newer than this package knows ({VERSION}): update anthropic-tool-calling, or use another database"
        )));
    }
    for (at, statements) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        for sql in *statements {
            tx.execute(sql, &[]).await?;
        }
        let version = at as i64 + 1;
        tx.execute(
            "INSERT INTO atc_schema (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = $1",
            &[Val::Int(version)],
        )
        .await?;
    }
    Ok(())
}
