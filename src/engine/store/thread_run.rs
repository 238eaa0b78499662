//! A run in a stored thread: the store's history, then the prompt's new user message(s); each
//! step committed before the loop goes on (a [`Journal`]); and, however the run ends, a
//! history the API takes again — every `tool_use` answered — with what waits for a person.
//!
//! Approvals in a thread are the store's: the ids are signed with the thread's own random secret
//! (never shown, no `approvalSecret` needed), and a decision is consumed in the transaction that
//! takes the thread, before any call runs, so no abort, crash or later failure lets it run a call
//! twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::database::Store;
use super::new_turn::{bad, error_result, prepare, unanswered};
use super::runs::Taken;
use super::tx::StoreError;
use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::report::calls::ToolOutput;
use crate::engine::run::config::RunConfig;
use crate::engine::run::feedback::NOT_RUN_RUN_ENDED;
use crate::engine::run::main_loop::run_observed;
use crate::engine::tools::approval::{Signer, DEFAULT_APPROVAL_TTL};
use crate::engine::tools::tool::Tool;
use crate::engine::trace::events::{EventSink, Journal, JournalRef, RunEvent};
use crate::engine::wire::client::ApiClient;
use crate::engine::wire::protocol::RawMessage;
use crate::engine::Secret;

/// Which thread a run goes on in, and in which store.
#[derive(Clone)]
pub struct ThreadRef {
    /// The store.
    pub store: Store,
    /// The thread's id (1–200 characters).
    pub id: String,
    /// Its owner, `""` for none.
    pub owner: String,
}

fn store_failed(e: StoreError) -> RunError {
    RunError::store_unavailable(&e.0)
}

/// What the run told of each call: `(is_error, the text the model would read)`.
#[derive(Default)]
struct Seen {
    results: HashMap<String, (bool, String)>,
}

/// The caller's observer, with each call's result noted on the way: a call whose result never
/// reached the history is answered with it when the run ends early.
struct Noting<'a> {
    inner: Option<&'a dyn EventSink>,
    seen: Mutex<Seen>,
}

impl EventSink for Noting<'_> {
    fn emit(&self, event: RunEvent) {
        if let RunEvent::ToolResult {
            call, model_text, ..
        } = &event
        {
            let text = match (model_text, &call.output) {
                (Some(told), _) => told.clone(),
                (None, ToolOutput::Text(t) | ToolOutput::Json(t)) => t.clone(),
                (None, ToolOutput::None) => String::new(),
            };
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.results
                .insert(call.tool_use_id.clone(), (call.is_error, text));
        }
        if let Some(inner) = self.inner {
            inner.emit(event);
        }
    }
}

/// Commits the run's history to the thread, as long as the run holds it; remembers the last
/// message committed and the history's length then.
struct Committer {
    store: Store,
    id: String,
    run: String,
    kept: Mutex<Kept>,
}

/// What a run's history is, as far as the store holds it or the run's ending will write it.
#[derive(Default)]
struct Kept {
    /// How many messages the store holds: a commit from there on only appends.
    end: usize,
    /// The history's length and its last message, committed or held back.
    last: Option<(usize, String)>,
    /// The step the run ended with, kept for the write that lets go of the thread.
    held_back: Option<(usize, Vec<String>)>,
}

impl Committer {
    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Kept {
    /// `texts` are the history from `at` on.
    fn note(&mut self, at: usize, texts: &[String]) {
        if let Some(last) = texts.last() {
            self.last = Some((at + texts.len(), last.clone()));
        }
    }
}

const LOST_HOLD: &str =
    "the run lost its hold on the thread (its lease ran out and another run took it)";

impl Journal for Committer {
    fn commit<'a>(
        &'a self,
        at: usize,
        messages: &'a [RawMessage],
    ) -> BoxFuture<'a, Result<(), RunError>> {
        Box::pin(async move {
            let texts: Vec<String> = messages.iter().map(|m| m.get().to_owned()).collect();
            let appends = at == self.kept().end;
            let (end, last) = (at + texts.len(), texts.last().cloned());
            let held = self
                .store
                .write_history(self.id.clone(), self.run.clone(), at, texts, appends)
                .await
                .map_err(store_failed)?;
            if !held {
                return Err(RunError::store_unavailable(LOST_HOLD));
            }
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
    ) -> BoxFuture<'a, Result<(), RunError>> {
        let texts: Vec<String> = messages.iter().map(|m| m.get().to_owned()).collect();
        let mut kept = self.kept();
        kept.note(at, &texts);
        kept.held_back = Some((at, texts));
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Runs the conversation on in `thread`: see the module's comment. `new` is the prompt's
/// messages (the user's new turn), `run_id` the run's id in the store.
#[allow(clippy::too_many_arguments)]
pub async fn run_in_thread(
    client: &ApiClient,
    cfg: &RunConfig,
    tools: &[Tool],
    new: Vec<RawMessage>,
    cancel: &CancellationToken,
    events: Option<&dyn EventSink>,
    thread: ThreadRef,
    run_id: String,
) -> Result<RunOutput, RunError> {
    let ThreadRef { store, id, owner } = thread;
    let lease_ms = store.lease_ms();
    let new: Vec<String> = new.iter().map(|m| m.get().to_owned()).collect();
    let decisions: Vec<String> = cfg
        .approvals
        .iter()
        .map(|d| d.approval_id.clone())
        .collect();
    let taken = store
        .take_thread(id.clone(), owner, run_id.clone(), lease_ms, move |found| {
            prepare(found, &new, &decisions)
        })
        .await
        .map_err(store_failed)?;
    let (history, secret) = match taken {
        Taken::Held { history, secret } => (history, secret),
        Taken::Busy => return Err(RunError::thread_busy(&id)),
        Taken::NoSuch => return Err(bad("no such thread. Nothing was sent.".into())),
        Taken::Refused(why) => return Err(why),
    };
    // The store holds the history as taken: a first commit right after it only appends.
    let stored = history.len();
    let committer = Arc::new(Committer {
        store: store.clone(),
        id: id.clone(),
        run: run_id.clone(),
        kept: Mutex::new(Kept {
            end: stored,
            ..Kept::default()
        }),
    });
    let mut cfg = cfg.clone();
    cfg.journal = Some(JournalRef(committer.clone()));
    cfg.approval_scope = format!("thread:{id}");
    let ttl = cfg.signer.as_ref().map_or(DEFAULT_APPROVAL_TTL, |s| s.ttl);
    cfg.signer = Some(Signer {
        secret: Secret::from(secret),
        ttl,
    });
    let messages: Vec<RawMessage> = history
        .into_iter()
        .filter_map(|m| RawValue::from_string(m).ok().map(RawMessage::from))
        .collect();
    let len_at_start = messages.len();

    // The lease is renewed while the run goes on; a renewal that fails ends the run.
    let stop = cancel.child_token();
    let lost: Mutex<Option<RunError>> = Mutex::new(None);
    let renew = async {
        let every = Duration::from_millis((lease_ms / 3).max(1) as u64);
        loop {
            tokio::time::sleep(every).await;
            let why = match store
                .renew_lease(id.clone(), run_id.clone(), lease_ms)
                .await
            {
                Ok(true) => continue,
                Ok(false) => RunError::store_unavailable(LOST_HOLD),
                Err(e) => store_failed(e),
            };
            lost.lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(why);
            stop.cancel();
            std::future::pending::<()>().await;
        }
    };
    let noting = Noting {
        inner: events,
        seen: Mutex::new(Seen::default()),
    };
    let result = tokio::select! {
        result = run_observed(client, &cfg, tools, messages, &stop, Some(&noting)) => result,
        _ = renew => unreachable!("renewing never ends"),
    };
    let seen = noting.seen.into_inner().unwrap_or_else(|p| p.into_inner());
    let result = match (lost.into_inner().unwrap_or_else(|p| p.into_inner()), result) {
        (Some(why), _) if !cancel.is_cancelled() => Err(why),
        (_, result) => result,
    };
    let (at, tail, pending) = match &result {
        Ok(output) => {
            let pending =
                serde_json::to_string(&output.pending_approvals).unwrap_or_else(|_| "[]".into());
            (output.messages.len(), Vec::new(), pending)
        }
        Err(_) => {
            let committed = committer.kept().last.clone();
            let (len, last) = committed.unwrap_or((len_at_start, String::new()));
            let last: Vec<Value> = serde_json::from_str(&last)
                .map(|v| vec![v])
                .unwrap_or_default();
            let answers: Vec<Value> = unanswered(&last)
                .iter()
                .map(|call| match seen.results.get(call) {
                    Some((true, text)) => error_result(call, text),
                    Some((false, text)) => {
                        json!({ "type": "tool_result", "tool_use_id": call, "content": text })
                    }
                    None => error_result(call, NOT_RUN_RUN_ENDED),
                })
                .collect();
            let tail = if answers.is_empty() {
                Vec::new()
            } else {
                vec![json!({ "role": "user", "content": answers }).to_string()]
            };
            (len, tail, "[]".to_owned())
        }
    };
    // The step the run ended with, held back, goes in the same write (before the tail, which
    // answers its calls).
    let held_back = committer.kept().held_back.take();
    let (at, tail) = match held_back {
        Some((from, mut step)) => {
            step.extend(tail);
            (from, step)
        }
        None => (at, tail),
    };
    let released = store.release_thread(id, run_id, at, tail, pending).await;
    match (result, released) {
        (Ok(_), Err(e)) => Err(store_failed(e)),
        (Ok(_), Ok(false)) => Err(RunError::store_unavailable(LOST_HOLD)),
        (result, _) => result,
    }
}
