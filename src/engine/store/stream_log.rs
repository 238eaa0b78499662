//! Resumable streams: a streamed run's UI message stream, kept in the store as the SSE text it
//! sent, so that another response — after a page reload, in a second tab, on another instance —
//! replays it and follows it to its end.
//!
//! The text comes in the part batches JS already gets (one slice per batch, never one per
//! token); each run has one writer task that joins whatever came while its last write was in
//! flight and waits [`WRITE_GAP`] between writes, so a run writes at most a few slices a second
//! however fast it streams, off the JS thread. A follower reads the slices after the last one it
//! sent and then waits: woken at once by a write in this process, by `NOTIFY` from another
//! process on PostgreSQL (`pg_listen.rs`), or after [`SQLITE_POLL`] on SQLite (whose other
//! processes cannot wake it).

use std::time::Duration;

use tokio::sync::mpsc;

use super::database::{now_ms, Store};
use super::thread_run::OWN_THREAD_OWNER;
use super::threads::{find, run_of};
use super::tx::{Dialect, StoreError, Val};

/// The least time between two writes of one run's stream.
const WRITE_GAP: Duration = Duration::from_millis(40);

/// How often a follower on SQLite looks for what another process wrote.
const SQLITE_POLL: Duration = Duration::from_millis(250);

/// How often a follower on PostgreSQL looks anyway, should a notification be lost.
const PG_POLL: Duration = Duration::from_secs(5);

/// A stream not written for this long, whose run no longer holds its thread, ended without its
/// last slice (its process stopped): its followers end.
const ORPHANED_MS: i64 = 5_000;

/// How many times a slice that could not be written is tried again before it is dropped.
const WRITE_TRIES: u32 = 3;

/// Where a stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamState {
    /// There is none that the owner may see (never recorded, or dropped after its retention).
    Missing,
    /// Its run goes on: more may come.
    Live,
    /// It is over: nothing more will come.
    Done,
}

/// What a follower reads: the text after the slice it had, and the last slice's number.
#[derive(Debug, Clone)]
pub struct StreamRead {
    /// Where the stream is.
    pub state: StreamState,
    /// The SSE text of the slices after the follower's.
    pub text: String,
    /// The last slice read (the follower's own when none was).
    pub seq: i64,
}

impl Store {
    /// Adds `text` to run `run_id`'s stream (`done`: its last slice). Returns at once: the run's
    /// writer task writes it. Must be called inside the runtime.
    pub fn record_stream(&self, run_id: &str, text: String, done: bool) {
        let mut writers = self
            .streams
            .writers
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let tx = writers.entry(run_id.to_owned()).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let task = tokio::spawn(write_loop(self.clone(), run_id.to_owned(), rx));
            let mut tasks = self.streams.tasks.lock().unwrap_or_else(|p| p.into_inner());
            tasks.retain(|t| !t.is_finished());
            tasks.push(task);
            tx
        });
        let _ = tx.send((text, done));
        if done {
            writers.remove(run_id);
        }
    }

    /// The run that holds thread `thread_id` now, if the owner may see the thread.
    pub async fn running_run(
        &self,
        thread_id: String,
        owner: String,
    ) -> Result<Option<String>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let Some((summary, active, _)) = find(tx, &thread_id, &owner, false).await? else {
                    return Ok(None);
                };
                Ok((summary.status == "running").then(|| run_of(&active).to_owned()))
            })
        }))
        .await
    }

    /// Run `run_id`'s stream after slice `after`, for `owner` (`""`: none). With nothing new
    /// yet, waits up to `wait` for more.
    pub async fn follow_stream(
        &self,
        run_id: String,
        owner: String,
        after: i64,
        wait: Duration,
    ) -> Result<StreamRead, StoreError> {
        let until = tokio::time::Instant::now() + wait;
        let mut woken = self.streams.wake.subscribe();
        let poll = match self.postgres() {
            Some(_) => {
                self.listen().await;
                PG_POLL
            }
            None => SQLITE_POLL,
        };
        loop {
            woken.borrow_and_update();
            let read = self
                .read_stream(run_id.clone(), owner.clone(), after)
                .await?;
            let now = tokio::time::Instant::now();
            if read.state != StreamState::Live || !read.text.is_empty() || now >= until {
                return Ok(read);
            }
            let _ = tokio::time::timeout((until - now).min(poll), woken.changed()).await;
        }
    }

    /// Starts listening for other processes' writes (PostgreSQL), unless it already does.
    async fn listen(&self) {
        let mut listener = self.streams.listener.lock().await;
        if listener.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        if let Some(pg) = self.postgres() {
            // Failing to listen leaves the follower polling: slower, never wrong.
            *listener = super::pg_listen::listen(pg, self.streams.wake.clone())
                .await
                .ok();
        }
    }

    async fn read_stream(
        &self,
        run_id: String,
        owner: String,
        after: i64,
    ) -> Result<StreamRead, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let missing = StreamRead {
                    state: StreamState::Missing,
                    text: String::new(),
                    seq: after,
                };
                let rows = tx
                    .query(
                        "SELECT s.done, s.expires_at, s.updated_at, t.owner, t.active_run, t.lease_until \
                         FROM atc_streams s JOIN atc_runs r ON r.id = s.run_id \
                         JOIN atc_threads t ON t.id = r.thread_id WHERE s.run_id = $1",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                let Some(row) = rows.into_iter().next() else {
                    return Ok(missing);
                };
                let int = |i: usize| row.get(i).map_or(0, Val::int);
                let text = |i: usize| row.get(i).map_or("", Val::text);
                let now = now_ms();
                let (done, expires, updated) = (int(0) != 0, int(1), int(2));
                if (text(3) != owner && text(3) != OWN_THREAD_OWNER) || (done && expires < now) {
                    return Ok(missing);
                }
                let held = run_of(text(4)) == run_id && int(5) > now;
                let slices = tx
                    .query(
                        "SELECT seq, chunks FROM atc_stream_chunks WHERE run_id = $1 AND seq > $2 ORDER BY seq",
                        &[run_id.as_str().into(), after.into()],
                    )
                    .await?;
                let mut read = StreamRead {
                    state: if done || (!held && updated + ORPHANED_MS < now) {
                        StreamState::Done
                    } else {
                        StreamState::Live
                    },
                    text: String::new(),
                    seq: after,
                };
                for slice in slices {
                    read.seq = read.seq.max(slice.first().map_or(0, Val::int));
                    read.text.push_str(slice.get(1).map_or("", Val::text));
                }
                Ok(read)
            })
        }))
        .await
    }

    /// Writes slice `seq` of run `run_id`'s stream; the last one also drops the streams whose
    /// time is up. Tells other processes (PostgreSQL's `NOTIFY`, sent when it commits).
    async fn write_slice(
        &self,
        run_id: String,
        seq: i64,
        text: String,
        done: bool,
    ) -> Result<(), StoreError> {
        let retention = self.streams.retention_ms;
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let now = now_ms();
                let expires = if done { now + retention } else { 0 };
                tx.execute(
                    "INSERT INTO atc_stream_chunks (run_id, seq, chunks) VALUES ($1, $2, $3)",
                    &[run_id.as_str().into(), seq.into(), text.into()],
                )
                .await?;
                tx.execute(
                    "INSERT INTO atc_streams (run_id, done, expires_at, updated_at) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (run_id) DO UPDATE SET done = excluded.done, \
                     expires_at = excluded.expires_at, updated_at = excluded.updated_at",
                    &[run_id.as_str().into(), i64::from(done).into(), expires.into(), now.into()],
                )
                .await?;
                if done {
                    tx.execute(
                        "DELETE FROM atc_stream_chunks WHERE run_id IN \
                         (SELECT run_id FROM atc_streams WHERE done = 1 AND expires_at < $1)",
                        &[now.into()],
                    )
                    .await?;
                    tx.execute(
                        "DELETE FROM atc_streams WHERE done = 1 AND expires_at < $1",
                        &[now.into()],
                    )
                    .await?;
                }
                if tx.dialect() == Dialect::Postgres {
                    tx.query(
                        "SELECT pg_notify('atc_streams', $1)",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                }
                Ok(())
            })
        }))
        .await
    }
}

/// One run's writer: each write takes everything that came since the last one.
async fn write_loop(store: Store, run_id: String, mut rx: mpsc::UnboundedReceiver<(String, bool)>) {
    let mut seq = 0;
    let mut text = String::new();
    let mut done = false;
    let mut failures = 0;
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
        match store
            .write_slice(run_id.clone(), seq + 1, text.clone(), done)
            .await
        {
            Ok(()) => {
                seq += 1;
                failures = 0;
                text.clear();
                store.streams.wake();
                if done {
                    return;
                }
            }
            Err(e) => {
                failures += 1;
                tracing::warn!(run_id, error = %e, "a slice of the run's stream could not be stored");
                if failures >= WRITE_TRIES {
                    // Its followers miss this slice; the run itself goes on.
                    text.clear();
                    failures = 0;
                    if done {
                        return;
                    }
                }
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
