//! Resumable streams: a streamed run's UI message stream, kept in the store as the SSE text it
//! sent, so that another response — after a page reload, in a second tab, on another instance —
//! replays it and follows it to its end.
//!
//! The text comes in the part batches JS already gets (one slice per batch, never one per
//! token); each run's holder has one writer task (`stream_write.rs`) that joins whatever came
//! while its last write was in flight and waits a short gap between writes, so a run writes at
//! most a few slices a second however fast it streams, off the JS thread. A follower reads the slices after the last one it
//! sent and then waits: woken at once by a write in this process, by `NOTIFY` from another
//! process on PostgreSQL (`pg_listen.rs`), or after [`SQLITE_POLL`] on SQLite (whose other
//! processes cannot wake it).
//!
//! A run taken over (`resumeRun`, `recoverRuns`) goes on recording into the same stream: the new
//! holder's slices are numbered on from the last one committed ([`Store::stream_state`] gives it
//! what was sent, for lib/stream/record.js to close what the cut left open); from then on the
//! earlier holder's slices are dropped, and a stream that is over takes no more. A follower keeps following a run whose process stopped while nobody
//! has taken it over yet: the run is still in progress.

use std::time::Duration;

use tokio::sync::mpsc;

use super::database::{now_ms, Store};
use super::stream_write::{stream_done, tail, write_loop};
use super::thread_run::OWN_THREAD_OWNER;
use super::threads::{find, run_of};
use super::tx::{StoreError, Val};

/// How often a follower on SQLite looks for what another process wrote.
const SQLITE_POLL: Duration = Duration::from_millis(250);

/// How often a follower on PostgreSQL looks anyway, should a notification be lost.
const PG_POLL: Duration = Duration::from_secs(5);

/// A stream not written for this long, whose run has ended (its end recorded in the run's log),
/// will get no last slice (the run ended where nobody recorded it: superseded, stopped while its
/// process was gone, or that slice could not be written): its followers end.
const ORPHANED_MS: i64 = 5_000;

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

/// Run as its stream's holder finds it (see [`Store::stream_state`]).
#[derive(Debug, Clone)]
pub struct StreamHold {
    /// The stream's SSE text so far, if it was recorded and is not over.
    pub sent: Option<String>,
    /// The run's generation: the times it was taken over.
    pub generation: u32,
    /// Its stored result (`{ data, error }` as JSON), if it has ended.
    pub result: Option<String>,
    /// It has ended and neither it nor its stream changed for [`ORPHANED_MS`]: no holder will
    /// write the stream's end (one that ended the run writes it right after).
    pub idle: bool,
}

impl Store {
    /// Adds `text` to run `run_id`'s stream (`done`: its last slice), for its holder of
    /// generation `generation` (the times the run was taken over when this process took it; 0
    /// for the process that started it). Returns at once: the holder's writer task writes it,
    /// unless the run has a newer holder by then (`stream_write.rs`). Must be called inside the
    /// runtime.
    pub fn record_stream(&self, run_id: &str, generation: u32, text: String, done: bool) {
        let mut writers = self
            .streams
            .writers
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let key = (run_id.to_owned(), generation);
        let tx = writers.entry(key.clone()).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let task = tokio::spawn(write_loop(self.clone(), run_id.to_owned(), generation, rx));
            let mut tasks = self.streams.tasks.lock().unwrap_or_else(|p| p.into_inner());
            tasks.retain(|t| !t.is_finished());
            tasks.push(task);
            tx
        });
        let _ = tx.send((text, done));
        if done {
            writers.remove(&key);
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

    /// Whether run `run_id`'s stream was recorded and is not over: a run taken over records on
    /// into it (what it sent so far is read once the run is held: [`Store::stream_state`]).
    pub async fn stream_open(&self, run_id: String) -> Result<bool, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move { Ok(stream_done(tx, &run_id).await? == Some(false)) })
        }))
        .await
    }

    /// Run `run_id` as a holder that took it over finds it once it holds it (nothing of an
    /// earlier holder's is written after that): what its stream sent so far, its generation, and
    /// its stored result if it has ended. `None` when there is no such run.
    pub async fn stream_state(&self, run_id: String) -> Result<Option<StreamHold>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let rows = tx
                    .query(
                        "SELECT r.resumed, r.status, r.result, r.updated_at, \
                         COALESCE((SELECT s.updated_at FROM atc_streams s WHERE s.run_id = r.id), 0) \
                         FROM atc_runs r WHERE r.id = $1",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                let Some(row) = rows.into_iter().next() else {
                    return Ok(None);
                };
                let mut row = row.into_iter();
                let mut next = || row.next().unwrap_or(Val::Int(0));
                let (resumed, status, result) =
                    (next().int(), next().into_text(), next().into_text());
                let updated = next().int().max(next().int());
                let ended = status == "done";
                Ok(Some(StreamHold {
                    sent: tail(tx, &run_id).await?,
                    generation: u32::try_from(resumed).unwrap_or(0),
                    result: ended.then_some(result),
                    idle: ended && updated + ORPHANED_MS < now_ms(),
                }))
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
}
