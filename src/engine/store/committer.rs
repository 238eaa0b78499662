//! A durable run's journal in the store: the history committed step by step while the run
//! holds its thread, each tool call recorded as started and as finished, and what an earlier
//! holder recorded of each call. Every write checks the hold, so a run that lost its thread
//! writes nothing over the run that took it.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;

use super::database::Store;
use super::tx::StoreError;
use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::trace::events::{Journal, Progress, Recorded};
use crate::engine::wire::protocol::RawMessage;

pub(super) fn store_failed(e: StoreError) -> RunError {
    RunError::store_unavailable(&e.0)
}

/// Commits the run's history to the thread, as long as the run holds it; remembers the last
/// message committed and the history's length then.
pub(super) struct Committer {
    pub(super) store: Store,
    pub(super) id: String,
    /// The holder's name (`run_log::holder`).
    pub(super) run: String,
    /// The run's id.
    pub(super) run_id: String,
    pub(super) kept: Mutex<Kept>,
    /// What an earlier holder recorded of each call (a run taken over).
    pub(super) calls: HashMap<String, Recorded>,
    /// The calls the next commit records as started (`Journal::will_start`).
    pub(super) starting: Mutex<Vec<String>>,
    /// Calls recorded as started by a commit, not yet begun: their attempts.
    pub(super) started: Mutex<HashMap<String, u32>>,
}

/// What a run's history is, as far as the store holds it or the run's ending will write it.
#[derive(Default)]
pub(super) struct Kept {
    /// How many messages the store holds: a commit from there on only appends.
    pub(super) end: usize,
    /// The history's length and its last message, committed or held back.
    pub(super) last: Option<(usize, String)>,
    /// The step the run ended with, kept for the write that lets go of the thread.
    pub(super) held_back: Option<(usize, Vec<String>)>,
}

impl Committer {
    fn lock_starting(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.starting.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_started(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.started.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Kept {
    /// `texts` are the history from `at` on.
    pub(super) fn note(&mut self, at: usize, texts: &[String]) {
        if let Some(last) = texts.last() {
            self.last = Some((at + texts.len(), last.clone()));
        }
    }
}

pub(super) const LOST_HOLD: &str =
    "the run lost its hold on the thread (its lease ran out and another run took it)";

/// What a write that checks the run's hold came to: its value, or the run's failure (`None`:
/// the hold was lost).
fn held<T>(written: Result<Option<T>, StoreError>) -> Result<T, RunError> {
    match written {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(RunError::store_unavailable(LOST_HOLD)),
        Err(e) => Err(store_failed(e)),
    }
}

impl Journal for Committer {
    fn commit<'a>(
        &'a self,
        at: usize,
        messages: &'a [RawMessage],
        progress: &'a Progress,
    ) -> BoxFuture<'a, Result<(), RunError>> {
        Box::pin(async move {
            let texts: Vec<String> = messages.iter().map(|m| m.get().to_owned()).collect();
            let appends = at == self.kept().end;
            let (end, last) = (at + texts.len(), texts.last().cloned());
            let progress = serde_json::to_string(progress).unwrap_or_else(|_| "{}".into());
            let starting = std::mem::take(&mut *self.lock_starting());
            let written = held(
                self.store
                    .write_history(
                        self.id.clone(),
                        self.run.clone(),
                        at,
                        texts,
                        appends,
                        progress,
                        starting,
                    )
                    .await,
            );
            let started = match written {
                Ok(started) => started,
                Err(e) => {
                    // The write may have committed all the same (its answer lost): what the
                    // store holds is no longer known, so the next write rewrites from its
                    // start rather than appending.
                    self.kept().end = usize::MAX;
                    return Err(e);
                }
            };
            self.lock_started().extend(started);
            let mut kept = self.kept();
            kept.end = end;
            if let Some(last) = last {
                kept.last = Some((end, last));
            }
            Ok(())
        })
    }

    /// The last step is written with the thread let go (one transaction for both): the run
    /// ends right after it, answered or paused.
    fn commit_last<'a>(
        &'a self,
        at: usize,
        messages: &'a [RawMessage],
        _progress: &'a Progress,
    ) -> BoxFuture<'a, Result<(), RunError>> {
        let texts: Vec<String> = messages.iter().map(|m| m.get().to_owned()).collect();
        let mut kept = self.kept();
        kept.note(at, &texts);
        kept.held_back = Some((at, texts));
        Box::pin(std::future::ready(Ok(())))
    }

    fn will_start(&self, tool_use_ids: Vec<String>) {
        *self.lock_starting() = tool_use_ids;
    }

    fn call_started<'a>(&'a self, tool_use_id: &'a str) -> BoxFuture<'a, Result<u32, RunError>> {
        Box::pin(async move {
            // Recorded with the step before it (the reply that asked for it).
            if let Some(attempt) = self.lock_started().remove(tool_use_id) {
                return Ok(attempt);
            }
            let (id, run, run_id) = (self.id.clone(), self.run.clone(), self.run_id.clone());
            held(
                self.store
                    .call_started(id, run, run_id, tool_use_id.to_owned())
                    .await,
            )
        })
    }

    fn call_finished<'a>(
        &'a self,
        tool_use_id: &'a str,
        record: String,
    ) -> BoxFuture<'a, Result<(), RunError>> {
        Box::pin(async move {
            let (id, run, run_id) = (self.id.clone(), self.run.clone(), self.run_id.clone());
            let written = self
                .store
                .call_finished(id, run, run_id, tool_use_id.to_owned(), record)
                .await;
            held(written.map(|kept| kept.then_some(())))
        })
    }

    fn recorded(&self, tool_use_id: &str) -> Option<Recorded> {
        self.calls.get(tool_use_id).cloned()
    }
}

/// How the run ended, as its log keeps it: `{ data, error }` as `runWithTools` resolves,
/// without the history (the thread's) and with every output (a later process holds none).
pub(super) fn stored_result(result: &mut Result<RunOutput, RunError>) -> String {
    #[derive(serde::Serialize)]
    struct Envelope<'a> {
        data: Option<&'a RunOutput>,
        error: Option<&'a RunError>,
    }
    let json = match result {
        Ok(output) => {
            let messages = std::mem::take(&mut output.messages);
            let json = serde_json::to_string(&Envelope {
                data: Some(output),
                error: None,
            });
            output.messages = messages;
            json
        }
        Err(error) => serde_json::to_string(&Envelope {
            data: None,
            error: Some(error),
        }),
    };
    json.unwrap_or_default()
}
