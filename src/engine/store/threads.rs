//! Threads: a conversation the store keeps, one row for the thread and one per message. A thread
//! may be bound to an owner (the app's user id); to anyone else it does not exist. The owner is
//! stored as given, `""` for a thread bound to none, and compared whole.

use super::database::{now_ms, random_hex, Store};
use super::tx::StoreError;
use super::tx::{Tx, Val};

/// A thread as `getThread` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRecord {
    /// Its id.
    pub id: String,
    /// Its owner, `""` for none.
    pub owner: String,
    /// The app's metadata, a JSON object.
    pub metadata: String,
    /// The conversation, each message as JSON, in order.
    pub messages: Vec<String>,
    /// The calls that wait for a person, a JSON array (`[]` for none).
    pub pending: String,
    /// `idle`, `running` or `paused`.
    pub status: &'static str,
    /// The run that holds it, `""` for none.
    pub active_run: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub updated_at: i64,
}

/// A thread as `listThreads` shows it (no messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSummary {
    /// Its id.
    pub id: String,
    /// Its owner, `""` for none.
    pub owner: String,
    /// The app's metadata, a JSON object.
    pub metadata: String,
    /// `idle`, `running` or `paused`.
    pub status: &'static str,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub updated_at: i64,
}

/// The columns a summary reads, in [`summary`]'s order.
const SUMMARY: &str =
    "id, owner, metadata, active_run, lease_until, pending, created_at, updated_at";

/// What a row says of its thread: held by a live run, waiting for approvals, or idle.
fn status(active_run: &str, lease_until: i64, pending: &str, now: i64) -> &'static str {
    if !active_run.is_empty() && lease_until > now {
        "running"
    } else if pending != "[]" && !pending.is_empty() {
        "paused"
    } else {
        "idle"
    }
}

fn summary(row: Vec<Val>, now: i64) -> ThreadSummary {
    let mut row = row.into_iter();
    let mut next = || row.next().unwrap_or(Val::Int(0));
    let (id, owner, metadata) = (next().into_text(), next().into_text(), next().into_text());
    let (active, lease, pending) = (next().into_text(), next().int(), next().into_text());
    ThreadSummary {
        id,
        owner,
        metadata,
        status: status(&active, lease, &pending, now),
        created_at: next().int(),
        updated_at: next().int(),
    }
}

/// The thread's row if `owner` may see it.
pub(super) async fn find(
    tx: &mut dyn Tx,
    id: &str,
    owner: &str,
    lock: bool,
) -> Result<Option<(ThreadSummary, String, String)>, StoreError> {
    let sql = format!(
        "SELECT {SUMMARY} FROM atc_threads WHERE id = $1 AND owner = $2{}",
        if lock { tx.for_update() } else { "" }
    );
    let now = now_ms();
    let rows = tx.query(&sql, &[id.into(), owner.into()]).await?;
    Ok(rows.into_iter().next().map(|row| {
        let active = row.get(3).map(Val::text).unwrap_or("").to_owned();
        let pending = row.get(5).map(Val::text).unwrap_or("").to_owned();
        (summary(row, now), active, pending)
    }))
}

/// The holder of a run, as a thread's `active_run` names it: `<runId>.<n>`, `n` the times the
/// run was taken over (`run_log.rs`).
pub fn holder(run_id: &str, takes: u32) -> String {
    format!("{run_id}.{takes}")
}

/// The run a holder is of.
pub fn run_of(holder: &str) -> &str {
    holder.rsplit_once('.').map_or(holder, |(run, _)| run)
}

pub(super) async fn messages(tx: &mut dyn Tx, thread_id: &str) -> Result<Vec<String>, StoreError> {
    let rows = tx
        .query(
            "SELECT message FROM atc_messages WHERE thread_id = $1 ORDER BY seq",
            &[thread_id.into()],
        )
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| r.into_iter().next().map(Val::into_text))
        .collect())
}

/// Whether `holder` (a run, as `run_log::holder` names it) holds thread `thread_id`, its time
/// moved on: one statement, which locks the row.
pub(super) async fn holds(
    tx: &mut dyn Tx,
    thread_id: &str,
    holder: &str,
) -> Result<bool, StoreError> {
    let held = tx
        .execute(
            "UPDATE atc_threads SET updated_at = $3 WHERE id = $1 AND active_run = $2",
            &[thread_id.into(), holder.into(), now_ms().into()],
        )
        .await?;
    Ok(held == 1)
}

/// Inserts a thread unless its id is taken (held by no run, nothing waiting, no history):
/// whether it was inserted.
pub(super) async fn insert(
    tx: &mut dyn Tx,
    id: &str,
    owner: &str,
    metadata: &str,
) -> Result<bool, StoreError> {
    let held = Held {
        run: "",
        lease_until: 0,
        pending: "[]",
    };
    insert_held(tx, id, owner, metadata, &random_hex(32), held).await
}

/// Who holds a thread as it is inserted: `run` (empty: nobody) until `lease_until`, and what
/// waits for a person (`pending`, a JSON array).
pub(super) struct Held<'a> {
    pub run: &'a str,
    pub lease_until: i64,
    pub pending: &'a str,
}

/// Inserts a thread with `secret`, already held as `held` says (a run that makes its thread
/// takes it in the same statement), unless its id is taken: whether it was inserted.
pub(super) async fn insert_held(
    tx: &mut dyn Tx,
    id: &str,
    owner: &str,
    metadata: &str,
    secret: &str,
    held: Held<'_>,
) -> Result<bool, StoreError> {
    let now = now_ms();
    let changed = tx
        .execute(
            "INSERT INTO atc_threads (id, owner, metadata, status, active_run, lease_until, pending, secret, created_at, updated_at)
             VALUES ($1, $2, $3, 'idle', $4, $5, $6, $7, $8, $8) ON CONFLICT (id) DO NOTHING",
            &[
                id.into(),
                owner.into(),
                metadata.into(),
                held.run.into(),
                held.lease_until.into(),
                held.pending.into(),
                secret.into(),
                now.into(),
            ],
        )
        .await?;
    Ok(changed == 1)
}

impl Store {
    /// Makes a thread with this id; `false` if the id is taken (by anyone: an owner cannot tell
    /// another's thread from a free id by this, since both say "taken" only to a caller that
    /// chose the id itself).
    pub async fn insert_thread(
        &self,
        id: String,
        owner: String,
        metadata: String,
    ) -> Result<bool, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move { insert(tx, &id, &owner, &metadata).await })
        }))
        .await
    }

    /// The thread, if it exists and `owner` may see it.
    pub async fn get_thread(
        &self,
        id: String,
        owner: String,
    ) -> Result<Option<ThreadRecord>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let Some((summary, active_run, pending)) = find(tx, &id, &owner, false).await?
                else {
                    return Ok(None);
                };
                let messages = messages(tx, &id).await?;
                Ok(Some(ThreadRecord {
                    id: summary.id,
                    owner: summary.owner,
                    metadata: summary.metadata,
                    messages,
                    pending,
                    status: summary.status,
                    active_run: run_of(&active_run).to_owned(),
                    created_at: summary.created_at,
                    updated_at: summary.updated_at,
                }))
            })
        }))
        .await
    }

    /// The owner's threads, the most recently updated first: at most `limit`, and only those
    /// after the thread `before` (the last of the previous page) when it is given.
    pub async fn list_threads(
        &self,
        owner: String,
        limit: u32,
        before: Option<String>,
    ) -> Result<Vec<ThreadSummary>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let now = now_ms();
                let limit = i64::from(limit.clamp(1, 1000));
                let rows = match before {
                    None => {
                        let sql = format!(
                            "SELECT {SUMMARY} FROM atc_threads WHERE owner = $1 ORDER BY updated_at DESC, id DESC LIMIT $2"
                        );
                        tx.query(&sql, &[owner.as_str().into(), limit.into()]).await?
                    }
                    Some(before) => {
                        let Some((after, _, _)) = find(tx, &before, &owner, false).await? else {
                            return Ok(Vec::new());
                        };
                        let sql = format!(
                            "SELECT {SUMMARY} FROM atc_threads WHERE owner = $1
                             AND (updated_at < $2 OR (updated_at = $2 AND id < $3))
                             ORDER BY updated_at DESC, id DESC LIMIT $4"
                        );
                        let params = [owner.as_str().into(), after.updated_at.into(), after.id.into(), limit.into()];
                        tx.query(&sql, &params).await?
                    }
                };
                Ok(rows.into_iter().map(|row| summary(row, now)).collect())
            })
        }))
        .await
    }

    /// Deletes the thread, its messages and its runs' logs; `false` if there is none `owner`
    /// may see.
    pub async fn delete_thread(&self, id: String, owner: String) -> Result<bool, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                if find(tx, &id, &owner, true).await?.is_none() {
                    return Ok(false);
                }
                tx.execute(
                    "DELETE FROM atc_messages WHERE thread_id = $1",
                    &[id.as_str().into()],
                )
                .await?;
                // Its runs' logs hold its words and its tools' outputs: they go with it.
                tx.execute(
                    "DELETE FROM atc_calls WHERE run_id IN (SELECT id FROM atc_runs WHERE thread_id = $1)",
                    &[id.as_str().into()],
                )
                .await?;
                tx.execute(
                    "DELETE FROM atc_runs WHERE thread_id = $1",
                    &[id.as_str().into()],
                )
                .await?;
                tx.execute("DELETE FROM atc_threads WHERE id = $1", &[id.into()])
                    .await?;
                Ok(true)
            })
        }))
        .await
    }
}
