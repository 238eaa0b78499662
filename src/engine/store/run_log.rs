//! Durable runs: each run's log (its options, how far it got, each tool call's records, how it
//! ended), and taking over a run whose process stopped. A run holds its thread (one run per
//! thread) by a lease, as `runs.rs` does; the thread's `active_run` names the holder as
//! `<runId>.<n>`, `n` the times the run was taken over, so a process that lost a run to
//! another can never write over it (every write of a run checks its holder).

use std::collections::HashMap;

use super::database::{now_ms, Store};
use super::threads::{holder, messages, run_of};
use super::tx::{first_row, StoreError, Tx, Val};
use crate::engine::trace::events::Recorded;

/// A run's log, as a process taking it over (or asking for its result) reads it.
#[derive(Debug, Clone, Default)]
pub struct RunLog {
    /// The run's id.
    pub id: String,
    /// Its thread.
    pub thread_id: String,
    /// The thread's owner, `""` for none.
    pub owner: String,
    /// The run's options as JSON (no secret).
    pub options: String,
    /// The history's length when the run began (its new turn written).
    pub start: usize,
    /// How far it got (`Progress` as JSON).
    pub progress: String,
    /// How it ended (`{ data }` or `{ error }` as JSON); `""` while it goes on.
    pub result: String,
    /// How many times it was taken over (this take included).
    pub resumed: u32,
    /// The thread's history.
    pub messages: Vec<String>,
    /// The thread's approval secret.
    pub secret: String,
    /// Each call's records, by `tool_use` id.
    pub calls: HashMap<String, Recorded>,
}

/// How asking to take a run over went.
#[derive(Debug)]
pub enum TakeOver {
    /// This process holds it now.
    Taken(RunLog),
    /// A live process holds it.
    Busy,
    /// It ended: its log holds its result.
    Ended(RunLog),
    /// No run of this id.
    NoSuch,
}

/// A run superseded while nobody held it (its process stopped, then a new run took the thread)
/// ends with this.
const SUPERSEDED: &str = r#"{"data":null,"error":{"code":"aborted","message":"The run was interrupted (the process running it stopped) and its thread went on with a newer run before it was resumed; it was not resumed."}}"#;

/// Starts the log of run `run_id` in thread `thread_id`, in the transaction that took the
/// thread: its options, and where in the history it began. A run the thread was held by whose
/// lease ran out (`superseded`: its holder) ends as superseded.
pub(super) async fn begin(
    tx: &mut dyn Tx,
    run_id: &str,
    thread_id: &str,
    options: &str,
    start: usize,
    superseded: &str,
) -> Result<(), StoreError> {
    if !superseded.is_empty() {
        end_superseded(tx, run_of(superseded)).await?;
    }
    let now = now_ms();
    tx.execute(
        "INSERT INTO atc_runs (id, thread_id, options, started_at_seq, progress, status, result, resumed, stop_requested, created_at, updated_at)
         VALUES ($1, $2, $3, $4, '{}', 'running', '', 0, 0, $5, $5)",
        &[run_id.into(), thread_id.into(), options.into(), (start as i64).into(), now.into()],
    )
    .await?;
    Ok(())
}

async fn end_superseded(tx: &mut dyn Tx, run_id: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE atc_runs SET status = 'done', result = $2, updated_at = $3 WHERE id = $1 AND status = 'running'",
        &[run_id.into(), SUPERSEDED.into(), now_ms().into()],
    )
    .await?;
    Ok(())
}

/// A run stopped (`stopRun`) while nobody held it ends with this when it would be taken over.
pub(super) const STOPPED: &str = r#"{"data":null,"error":{"code":"aborted","message":"The run was stopped (stopRun) while its process was gone; it was not resumed."}}"#;

/// Lets go of the thread `holder` holds and ends its run with `result`, the history as it is.
pub(super) async fn let_go(
    tx: &mut dyn Tx,
    thread_id: &str,
    holder: &str,
    run_id: &str,
    result: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE atc_threads SET active_run = '', lease_until = 0, updated_at = $3 WHERE id = $1 AND active_run = $2",
        &[thread_id.into(), holder.into(), now_ms().into()],
    )
    .await?;
    end(tx, run_id, result).await
}

/// Records the run's end (`result`), in the transaction that lets go of its thread.
pub(super) async fn end(tx: &mut dyn Tx, run_id: &str, result: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE atc_runs SET status = 'done', result = $2, updated_at = $3 WHERE id = $1",
        &[run_id.into(), result.into(), now_ms().into()],
    )
    .await?;
    Ok(())
}

/// Keeps how far the run got, in the transaction that commits its step.
pub(super) async fn note_progress(
    tx: &mut dyn Tx,
    run_id: &str,
    progress: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE atc_runs SET progress = $2 WHERE id = $1",
        &[run_id.into(), progress.into()],
    )
    .await?;
    Ok(())
}

impl Store {
    /// Takes run `run_id` over for this process until `lease_ms` from now, if its lease ran out
    /// (only one of many processes asking together wins: its thread's row is locked); reads
    /// its log. A run asked to stop while nobody held it ends here as aborted, running nothing.
    pub async fn take_over(&self, run_id: String, lease_ms: i64) -> Result<TakeOver, StoreError> {
        let retention = self.streams.retention_ms;
        let taken = self.transact(Box::new(move |tx| {
            Box::pin(async move {
                // The thread's row is locked before the run's is read, as every other write of
                // a run does (PostgreSQL would find a deadlock in the other order); a second
                // taker waits here and then reads what the first one wrote.
                let found = tx
                    .query(
                        "SELECT thread_id FROM atc_runs WHERE id = $1",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                let Some(thread_id) = found.into_iter().next().and_then(|r| r.into_iter().next())
                else {
                    return Ok(TakeOver::NoSuch);
                };
                let thread_id = thread_id.into_text();
                let sql = format!(
                    "SELECT active_run, lease_until, secret, owner FROM atc_threads WHERE id = $1{}",
                    tx.for_update()
                );
                let thread = tx.query(&sql, &[thread_id.as_str().into()]).await?;
                let mut next = first_row(thread);
                let (active, lease) = (next().into_text(), next().int());
                let (secret, owner) = (next().into_text(), next().into_text());
                let rows = tx
                    .query(
                        "SELECT options, started_at_seq, progress, status, result, resumed, stop_requested FROM atc_runs WHERE id = $1",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                let mut next = first_row(rows);
                let mut log = RunLog {
                    id: run_id.clone(),
                    thread_id,
                    owner,
                    secret,
                    options: next().into_text(),
                    start: usize::try_from(next().int()).unwrap_or(0),
                    progress: next().into_text(),
                    ..RunLog::default()
                };
                let (status, result, takes) = (next().into_text(), next().into_text(), next().int());
                let stop = next().int() != 0;
                let takes = u32::try_from(takes).unwrap_or(0);
                let now = now_ms();
                let current = holder(&run_id, takes);
                if status == "done" {
                    log.result = result;
                    log.messages = messages(tx, &log.thread_id).await?;
                    return Ok(TakeOver::Ended(log));
                }
                if active != current {
                    // Another run took the thread while nobody held this one.
                    end_superseded(tx, &run_id).await?;
                    log.result = SUPERSEDED.to_owned();
                    log.messages = messages(tx, &log.thread_id).await?;
                    return Ok(TakeOver::Ended(log));
                }
                if lease > now {
                    return Ok(TakeOver::Busy);
                }
                if stop {
                    log.result = STOPPED.to_owned();
                    let_go(tx, &log.thread_id, &current, &run_id, STOPPED).await?;
                    // Its stream ends with the abort here, in the transaction that ends the run,
                    // as stopRun ends a run nobody holds: this process is the one that ended it.
                    super::stream_end::end_stream(tx, &run_id, retention).await?;
                    log.messages = messages(tx, &log.thread_id).await?;
                    return Ok(TakeOver::Ended(log));
                }
                tx.execute(
                    "UPDATE atc_threads SET active_run = $3, lease_until = $4, updated_at = $5 WHERE id = $1 AND active_run = $2",
                    &[log.thread_id.as_str().into(), current.into(), holder(&run_id, takes + 1).into(), (now + lease_ms).into(), now.into()],
                )
                .await?;
                tx.execute(
                    "UPDATE atc_runs SET resumed = resumed + 1, updated_at = $2 WHERE id = $1",
                    &[run_id.as_str().into(), now.into()],
                )
                .await?;
                log.resumed = takes + 1;
                log.messages = messages(tx, &log.thread_id).await?;
                log.calls = super::call_log::calls(tx, &run_id).await?;
                Ok(TakeOver::Taken(log))
            })
        }))
        .await?;
        if matches!(&taken, TakeOver::Ended(log) if log.result == STOPPED) {
            self.streams.wake();
        }
        Ok(taken)
    }

    /// A run taken over that cannot go on (its options no longer hold here): it ends with
    /// `result`, and its thread is let go as it is (the next run answers what it left open).
    pub async fn give_up(
        &self,
        thread_id: String,
        holder: String,
        result: String,
    ) -> Result<(), StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let run_id = run_of(&holder).to_owned();
                let_go(tx, &thread_id, &holder, &run_id, &result).await
            })
        }))
        .await
    }

    /// The runs whose lease ran out, the longest expired first: at most `limit`.
    pub async fn expired_runs(&self, limit: u32) -> Result<Vec<String>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let rows = tx
                    .query(
                        "SELECT active_run FROM atc_threads WHERE active_run LIKE '%.%' AND lease_until <= $1
                         ORDER BY lease_until LIMIT $2",
                        &[now_ms().into(), i64::from(limit.clamp(1, 10_000)).into()],
                    )
                    .await?;
                Ok(rows
                    .into_iter()
                    .filter_map(|r| r.into_iter().next())
                    .map(|v| run_of(v.text()).to_owned())
                    .collect())
            })
        }))
        .await
    }

    /// Run `run_id`'s logged options, its thread and the thread's owner, read without taking it
    /// (`resumeRun` checks what it is given before it takes the run); `None` when there is none.
    pub async fn run_options(
        &self,
        run_id: String,
    ) -> Result<Option<(String, String, String)>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let rows = tx
                    .query(
                        "SELECT r.options, r.thread_id, t.owner FROM atc_runs r \
                         JOIN atc_threads t ON t.id = r.thread_id WHERE r.id = $1",
                        &[run_id.into()],
                    )
                    .await?;
                Ok(rows.into_iter().next().map(|row| {
                    let mut row = row.into_iter().map(Val::into_text);
                    let mut next = || row.next().unwrap_or_default();
                    (next(), next(), next())
                }))
            })
        }))
        .await
    }
}
