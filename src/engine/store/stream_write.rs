//! Writing a run's stream (`stream_log.rs` takes the text and follows it): one writer task per
//! run and holder, each write one transaction that adds a slice — only while the holder is the
//! run's current one and the stream is not over.
//!
//! A holder is named by its generation: the times the run was taken over when it took it
//! (`atc_runs.resumed`; 0 for the process that started it). A process whose lease ran out while
//! it was still alive (stalled, cut off from the database) keeps handing slices over until it
//! notices; once another process took the run over, the run's generation moved on and each of
//! those slices — its "lost hold" end too — is dropped in the transaction that would have
//! written it, so followers see one holder's stream at a time and the new holder's end.

use std::time::Duration;

use tokio::sync::mpsc;

use super::database::{now_ms, Store};
use super::streams::Handed;
use super::tx::{Dialect, StoreError, Tx, Val};

/// The least time between two writes of one run's stream.
const WRITE_GAP: Duration = Duration::from_millis(40);

/// How many times the stream's last slice is tried before it is given up (its followers end on
/// their own once the run is over). A slice from the middle is never given up: followers would
/// get a stream with a hole (a delta whose part never started).
const WRITE_TRIES: u32 = 3;

/// The wait before trying a slice again, doubled with each failure in a row (a store that failed
/// is given a moment rather than asked again at once), up to [`RETRY_CAP`].
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// The longest wait between two tries of a slice.
const RETRY_CAP: Duration = Duration::from_secs(2);

/// The wait before the next try after `failures` failures in a row.
fn backoff(failures: u32) -> Duration {
    RETRY_BACKOFF
        .saturating_mul(1 << failures.saturating_sub(1).min(10))
        .min(RETRY_CAP)
}

/// How a slice fared in its transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wrote {
    /// It was added.
    Added,
    /// It was dropped: its holder is no longer the run's, the stream is over, or there is no
    /// such run.
    Dropped,
}

impl Store {
    /// Adds the next slice of run `run_id`'s stream for its holder of generation `generation`,
    /// numbered on from the last one committed (by this process or the one the run was taken
    /// over from); nothing once the stream is over or the run was taken over since. The last one
    /// also drops the streams whose time is up. Tells other processes (PostgreSQL's `NOTIFY`,
    /// sent when it commits).
    pub(super) async fn write_slice(
        &self,
        run_id: String,
        generation: u32,
        text: String,
        done: bool,
    ) -> Result<Wrote, StoreError> {
        let retention = self.streams.retention_ms;
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                // The run's row is locked first: a take-over (which moves `resumed` on) or a
                // stopRun that ends the run waits for this write, or this write sees what it
                // did. The stream is read only then, in a statement of its own: PostgreSQL reads
                // a joined row as it was before the wait. (It is joined here all the same: a
                // lock on its table is waited for before the run's row is locked, so the run's
                // own writes are never held up behind this one.)
                let lock = match tx.dialect() {
                    Dialect::Postgres => " FOR UPDATE OF r",
                    Dialect::Sqlite => "",
                };
                let sql = format!(
                    "SELECT r.resumed, r.status FROM atc_runs r \
                     LEFT JOIN atc_streams s ON s.run_id = r.id WHERE r.id = $1{lock}"
                );
                let rows = tx.query(&sql, &[run_id.as_str().into()]).await?;
                let Some(row) = rows.into_iter().next() else {
                    return Ok(Wrote::Dropped);
                };
                let current = row.first().map_or(-1, Val::int);
                let ended = row.get(1).is_some_and(|s| s.text() == "done");
                let over = stream_done(tx, &run_id).await? == Some(true);
                // A stream's end only once its run's end is committed: a holder whose end could
                // not be (its store failed) leaves the stream open for the take-over that goes on.
                if current != i64::from(generation) || over || (done && !ended) {
                    return Ok(Wrote::Dropped);
                }
                add_slice(tx, &run_id, &text, done, retention).await?;
                Ok(Wrote::Added)
            })
        }))
        .await
    }
}

/// Whether run `run_id`'s stream is over; `None` when it was never recorded.
pub(super) async fn stream_done(tx: &mut dyn Tx, run_id: &str) -> Result<Option<bool>, StoreError> {
    let rows = tx
        .query(
            "SELECT done FROM atc_streams WHERE run_id = $1",
            &[run_id.into()],
        )
        .await?;
    Ok(rows.first().and_then(|r| r.first()).map(|d| d.int() != 0))
}

/// What run `run_id`'s stream sent so far, if it was recorded and is not over.
pub(super) async fn tail(tx: &mut dyn Tx, run_id: &str) -> Result<Option<String>, StoreError> {
    if stream_done(tx, run_id).await? != Some(false) {
        return Ok(None);
    }
    let slices = tx
        .query(
            "SELECT chunks FROM atc_stream_chunks WHERE run_id = $1 ORDER BY seq",
            &[run_id.into()],
        )
        .await?;
    let mut text = String::new();
    for slice in slices {
        text.push_str(slice.first().map_or("", Val::text));
    }
    Ok(Some(text))
}

/// Adds a slice (`done`: the stream's last) in a transaction that checked it may; the last one
/// sweeps the streams whose time is up.
pub(super) async fn add_slice(
    tx: &mut dyn Tx,
    run_id: &str,
    text: &str,
    done: bool,
    retention: i64,
) -> Result<(), StoreError> {
    // Numbered on from the last slice, in the same statement: the run's row is locked, so no
    // other writer of this run adds one meanwhile.
    tx.execute(
        "INSERT INTO atc_stream_chunks (run_id, seq, chunks) \
         SELECT CAST($1 AS TEXT), COALESCE(MAX(seq), 0) + 1, CAST($2 AS TEXT) FROM atc_stream_chunks WHERE run_id = $1",
        &[run_id.into(), text.into()],
    )
    .await?;
    let now = now_ms();
    let expires = if done { now + retention } else { 0 };
    tx.execute(
        "INSERT INTO atc_streams (run_id, done, expires_at, updated_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (run_id) DO UPDATE SET \
         done = CASE WHEN atc_streams.done = 1 THEN 1 ELSE excluded.done END, \
         expires_at = CASE WHEN atc_streams.done = 1 THEN atc_streams.expires_at ELSE excluded.expires_at END, \
         updated_at = excluded.updated_at",
        &[
            run_id.into(),
            i64::from(done).into(),
            expires.into(),
            now.into(),
        ],
    )
    .await?;
    if done {
        sweep(tx, now, retention).await?;
    }
    if tx.dialect() == Dialect::Postgres {
        tx.query("SELECT pg_notify('atc_streams', $1)", &[run_id.into()])
            .await?;
    }
    Ok(())
}

/// Drops the streams whose time is up: those over whose retention passed, and those never
/// ended (their last slice never written) whose run ended longer than the retention ago.
async fn sweep(tx: &mut dyn Tx, now: i64, retention: i64) -> Result<(), StoreError> {
    let stale = now - retention;
    // The run is looked up by its key for each stream (a subquery over every run would scan
    // them all).
    let doomed = "SELECT s.run_id FROM atc_streams s WHERE (s.done = 1 AND s.expires_at < $1) \
                  OR (s.done = 0 AND s.updated_at < $2 AND EXISTS (SELECT 1 FROM atc_runs r \
                  WHERE r.id = s.run_id AND r.status = 'done' AND r.updated_at < $2))";
    tx.execute(
        &format!("DELETE FROM atc_stream_chunks WHERE run_id IN ({doomed})"),
        &[now.into(), stale.into()],
    )
    .await?;
    tx.execute(
        &format!("DELETE FROM atc_streams WHERE run_id IN ({doomed})"),
        &[now.into(), stale.into()],
    )
    .await?;
    Ok(())
}

/// One run's writer for one holder: each write takes everything that came since the last one.
pub(super) async fn write_loop(
    store: Store,
    run_id: String,
    generation: u32,
    mut rx: mpsc::UnboundedReceiver<Handed>,
) {
    let mut text = String::new();
    let mut done = false;
    let mut failures = 0;
    let mut last_tries = 0;
    loop {
        if text.is_empty() && !done {
            match rx.recv().await {
                Some((more, last)) => {
                    text.push_str(&more);
                    done |= last;
                }
                None => return,
            }
        }
        while let Ok((more, last)) = rx.try_recv() {
            text.push_str(&more);
            done |= last;
        }
        let wrote = store
            .write_slice(run_id.clone(), generation, text.clone(), done)
            .await;
        match wrote {
            Ok(Wrote::Added) => {
                failures = 0;
                text.clear();
                store.streams.wake();
                if done {
                    return;
                }
            }
            Ok(Wrote::Dropped) => {
                // Another holder has the run now, or its stream is over: nothing of this
                // holder's is written any more.
                tracing::debug!(
                    run_id,
                    generation,
                    "the run's stream is no longer this holder's"
                );
                return;
            }
            Err(e) => {
                failures += 1;
                tracing::warn!(run_id, error = %e, "a slice of the run's stream could not be stored");
                if done {
                    last_tries += 1;
                    if last_tries >= WRITE_TRIES {
                        // Its followers end on their own once the run is over.
                        return;
                    }
                }
                // The slice is kept; what comes meanwhile joins it when it is tried again.
                tokio::time::sleep(backoff(failures)).await;
                continue;
            }
        }
        // What comes within the gap joins the next write; the last slice goes at once.
        let gap = tokio::time::sleep(WRITE_GAP);
        tokio::pin!(gap);
        while !done {
            tokio::select! {
                _ = &mut gap => break,
                more = rx.recv() => match more {
                    Some((more, last)) => {
                        text.push_str(&more);
                        done |= last;
                    }
                    None => break,
                },
            }
        }
    }
}
