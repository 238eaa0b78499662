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
//!
//! A run taken over (`resumeRun`, `recoverRuns`) goes on recording into the same stream: the new
//! holder's slices are numbered on from the last one committed ([`Store::stream_tail`] gives it
//! what was sent, for lib/stream/record.js to close what the cut left open), and a stream that
//! is over takes no more. A follower keeps following a run whose process stopped while nobody
//! has taken it over yet: the run is still in progress.

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

/// A stream not written for this long, whose run has ended (its end recorded in the run's log),
/// will get no last slice (the run ended where nobody recorded it: superseded, stopped while its
/// process was gone, or that slice could not be written): its followers end.
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

    /// The run in progress on thread `thread_id`, if the owner may see the thread: the one that
    /// holds it, or a streamed one whose process stopped and that nobody has taken over yet.
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
                let run = run_of(&active).to_owned();
                if summary.status == "running" || active.is_empty() {
                    return Ok((summary.status == "running").then_some(run));
                }
                let orphaned = tx
                    .query(
                        "SELECT r.id FROM atc_runs r JOIN atc_streams s ON s.run_id = r.id \
                         WHERE r.id = $1 AND r.status = 'running' AND s.done = 0",
                        &[run.as_str().into()],
                    )
                    .await?;
                Ok((!orphaned.is_empty()).then_some(run))
            })
        }))
        .await
    }

    /// What run `run_id`'s stream sent so far (its SSE text), if it was recorded and is not over:
    /// a run taken over goes on from there.
    pub async fn stream_tail(&self, run_id: String) -> Result<Option<String>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let rows = tx
                    .query(
                        "SELECT done FROM atc_streams WHERE run_id = $1",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                match rows.first().and_then(|r| r.first()) {
                    Some(done) if done.int() == 0 => {}
                    _ => return Ok(None),
                }
                let slices = tx
                    .query(
                        "SELECT chunks FROM atc_stream_chunks WHERE run_id = $1 ORDER BY seq",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                let mut text = String::new();
                for slice in slices {
                    text.push_str(slice.first().map_or("", Val::text));
                }
                Ok(Some(text))
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
                        "SELECT s.done, s.expires_at, s.updated_at, t.owner, r.status, r.updated_at \
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
                // A run whose process stopped is still in progress until it is taken over.
                let ended = text(4) == "done" && updated.max(int(5)) + ORPHANED_MS < now;
                let slices = tx
                    .query(
                        "SELECT seq, chunks FROM atc_stream_chunks WHERE run_id = $1 AND seq > $2 ORDER BY seq",
                        &[run_id.as_str().into(), after.into()],
                    )
                    .await?;
                let mut read = StreamRead {
                    state: if done || ended {
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

    /// Writes the next slice of run `run_id`'s stream, numbered on from the last one committed
    /// (by this process or the one the run was taken over from); nothing once the stream is over.
    /// The last one also drops the streams whose time is up. Tells other processes (PostgreSQL's
    /// `NOTIFY`, sent when it commits).
    async fn write_slice(
        &self,
        run_id: String,
        text: String,
        done: bool,
    ) -> Result<(), StoreError> {
        let retention = self.streams.retention_ms;
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT done FROM atc_streams WHERE run_id = $1{}",
                    tx.for_update()
                );
                let stream = tx.query(&sql, &[run_id.as_str().into()]).await?;
                if stream.first().and_then(|r| r.first()).is_some_and(|d| d.int() != 0) {
                    return Ok(());
                }
                let last = tx
                    .query(
                        "SELECT COALESCE(MAX(seq), 0) FROM atc_stream_chunks WHERE run_id = $1",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                let seq = last.first().and_then(|r| r.first()).map_or(0, Val::int) + 1;
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
        match store.write_slice(run_id.clone(), text.clone(), done).await {
            Ok(()) => {
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
