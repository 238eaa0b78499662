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

use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::committer::{store_failed, stored_result, Committer, Kept, LOST_HOLD};
use super::database::Store;
use super::new_turn::{bad, error_result, prepare, unanswered};
use super::run_log::RunLog;
use super::runs::Taken;
use super::threads::holder;
use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::report::calls::ToolOutput;
use crate::engine::run::config::RunConfig;
use crate::engine::run::feedback::NOT_RUN_RUN_ENDED;
use crate::engine::run::main_loop::run_observed;
use crate::engine::tools::approval::{Signer, DEFAULT_APPROVAL_TTL};
use crate::engine::tools::tool::Tool;
use crate::engine::trace::events::{EventSink, JournalRef, RunEvent};
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
    /// The run's own thread (a run with a store and no `thread`): its history is the prompt's,
    /// as for a run without a store, and its approvals are the caller's (`approvalSecret`).
    pub own: bool,
}

/// The owner of a run's own thread: longer than any owner a caller may name (200 characters),
/// so no `getThread`, `listThreads` or `deleteThread` ever reaches it.
pub const OWN_THREAD_OWNER: &str = concat!(
    "(a run's own thread: no caller can name this owner, which is longer than any they may give) ",
    "(a run's own thread: no caller can name this owner, which is longer than any they may give) ",
    "(a run's own thread)"
);

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

/// How often a running run looks whether it was asked to stop.
const STOP_CHECK: Duration = Duration::from_secs(1);

/// A run with a store: a new one (its id, and its options as its log keeps them), or one taken
/// over from a process that stopped.
pub enum DurableRun {
    /// A run starting now.
    New {
        /// Its id.
        id: String,
        /// Its options as JSON, without a secret.
        options: String,
    },
    /// A run taken over: its log.
    TakenOver(Box<RunLog>),
}

/// Runs the conversation on in `thread`: see the module's comment. `new` is the prompt's
/// messages (the user's new turn); `run` the run as the store knows it.
#[allow(clippy::too_many_arguments)]
pub async fn run_in_thread(
    client: &ApiClient,
    cfg: &RunConfig,
    tools: &[Tool],
    new: Vec<RawMessage>,
    cancel: &CancellationToken,
    events: Option<&dyn EventSink>,
    thread: ThreadRef,
    run: DurableRun,
) -> Result<RunOutput, RunError> {
    let ThreadRef {
        store,
        id,
        owner,
        own,
    } = thread;
    let lease_ms = store.lease_ms();
    let mut cfg = cfg.clone();
    let (run_id, takes, history, secret, calls) = match run {
        DurableRun::New {
            id: run_id,
            options,
        } => {
            let new: Vec<String> = new.iter().map(|m| m.get().to_owned()).collect();
            let decisions: Vec<String> = cfg
                .approvals
                .iter()
                .map(|d| d.approval_id.clone())
                .collect();
            let taken = store
                .take_thread(
                    id.clone(),
                    owner,
                    holder(&run_id, 0),
                    options,
                    lease_ms,
                    move |found| {
                        if own {
                            // A new thread of the run's own: the prompt is its whole history.
                            Ok((new, "[]".to_owned()))
                        } else {
                            prepare(found, &new, &decisions)
                        }
                    },
                )
                .await
                .map_err(store_failed)?;
            match taken {
                Taken::Held { history, secret } => (run_id, 0, history, secret, HashMap::new()),
                Taken::Busy => return Err(RunError::thread_busy(&id)),
                Taken::NoSuch => return Err(bad("no such thread. Nothing was sent.".into())),
                Taken::Refused(why) => return Err(why),
            }
        }
        DurableRun::TakenOver(log) => {
            cfg.taken_over = Some(serde_json::from_str(&log.progress).unwrap_or_default());
            (log.id, log.resumed, log.messages, log.secret, log.calls)
        }
    };
    cfg.durable_id = run_id.clone();
    let holder_name = holder(&run_id, takes);
    // The store holds the history as taken: a first commit right after it only appends.
    let stored = history.len();
    let committer = Arc::new(Committer {
        store: store.clone(),
        id: id.clone(),
        run: holder_name.clone(),
        run_id: run_id.clone(),
        kept: Mutex::new(Kept {
            end: stored,
            ..Kept::default()
        }),
        calls,
        starting: Mutex::new(Vec::new()),
        started: Mutex::new(HashMap::new()),
    });
    cfg.journal = Some(JournalRef(committer.clone()));
    if !own {
        cfg.approval_scope = format!("thread:{id}");
        let ttl = cfg.signer.as_ref().map_or(DEFAULT_APPROVAL_TTL, |s| s.ttl);
        cfg.signer = Some(Signer {
            secret: Secret::from(secret),
            ttl,
        });
    }
    let messages: Vec<RawMessage> = history
        .into_iter()
        .filter_map(|m| RawValue::from_string(m).ok().map(RawMessage::from))
        .collect();
    let len_at_start = messages.len();

    // The lease is renewed while the run goes on; a renewal that fails ends the run. Every
    // second (or sooner, with a short lease) the run looks whether `stopRun` asked it to stop.
    let stop = cancel.child_token();
    let lost: Mutex<Option<RunError>> = Mutex::new(None);
    let renew = async {
        let renew_every = Duration::from_millis((lease_ms / 3).max(1) as u64);
        let tick = renew_every.min(STOP_CHECK);
        let mut renewed = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(tick).await;
            // A look that fails is not the run's failure: the renewal below says whether the
            // store still holds the run.
            if let Ok(true) = store.asked_to_stop(run_id.clone()).await {
                stop.cancel();
                std::future::pending::<()>().await;
            }
            if renewed.elapsed() < renew_every {
                continue;
            }
            renewed = tokio::time::Instant::now();
            let why = match store
                .renew_lease(id.clone(), holder_name.clone(), lease_ms)
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
    let mut result = match (lost.into_inner().unwrap_or_else(|p| p.into_inner()), result) {
        (Some(why), _) if !cancel.is_cancelled() => Err(why),
        (_, result) => result,
    };
    match &mut result {
        Ok(output) => {
            output.run_id = Some(run_id.clone());
            output.resumed = Some(takes);
        }
        Err(error) => error.run_id = Some(run_id.clone()),
    }
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
    let ended = stored_result(&mut result);
    let appends = at == committer.kept().end;
    let released = store
        .release_thread(id, holder_name, at, tail, appends, pending, ended)
        .await;
    match (result, released) {
        (Ok(_), Err(e)) => Err(store_failed(e)),
        (Ok(_), Ok(false)) => Err(RunError::store_unavailable(LOST_HOLD)),
        (result, _) => result,
    }
}
