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
use super::runs::{Found, Prepared, Taken};
use super::tx::StoreError;
use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::report::calls::ToolOutput;
use crate::engine::run::config::RunConfig;
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

/// What the model is told of a call that never ran because the run ended first.
const NOT_RUN: &str = "This call was not run: the run that asked for it ended before it could run.";
/// What the model is told of a call a person never decided on, when the user wrote again.
const UNDECIDED: &str =
    "The user sent a new message instead of deciding on this call, so it was not run.";

fn store_failed(e: StoreError) -> RunError {
    RunError::store_unavailable(&e.0)
}

fn bad(why: String) -> RunError {
    RunError::invalid_request(format!("Option thread: {why}"))
}

/// The content blocks of a message, as an array (a string content is one text block).
/// The content blocks a new user message may hold: what a person writes.
const USER_BLOCKS: [&str; 3] = ["text", "image", "document"];

fn blocks(message: &Value) -> Vec<Value> {
    match message.get("content") {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(text)) => vec![json!({ "type": "text", "text": text })],
        _ => Vec::new(),
    }
}

/// The ids of the `tool_use` blocks of the last message, when it is the assistant's and none of
/// them has a result yet.
fn unanswered(history: &[Value]) -> Vec<String> {
    match history.last() {
        Some(last) if last.get("role").and_then(Value::as_str) == Some("assistant") => blocks(last)
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Appends `content` as the user's: into the last message when it is the user's already (tool
/// results stay first), else as a new one.
fn push_user(history: &mut Vec<Value>, content: Vec<Value>) {
    if content.is_empty() {
        return;
    }
    match history.last_mut() {
        Some(last) if last.get("role").and_then(Value::as_str) == Some("user") => {
            let mut joined = blocks(last);
            joined.extend(content);
            last["content"] = Value::Array(joined);
        }
        _ => history.push(json!({ "role": "user", "content": content })),
    }
}

fn error_result(id: &str, text: &str) -> Value {
    json!({ "type": "tool_result", "tool_use_id": id, "content": text, "is_error": true })
}

/// The stored thread and the prompt as the run's history; what waits is then `[]`.
fn prepare(found: Found, new: &[String], decisions: &[String]) -> Prepared<RunError> {
    let parse = |text: &String| serde_json::from_str::<Value>(text);
    let mut history: Vec<Value> = found
        .messages
        .iter()
        .filter_map(|m| parse(m).ok())
        .collect();
    let pending: Vec<Value> = serde_json::from_str(&found.pending).unwrap_or_default();
    let waiting: Vec<&str> = pending
        .iter()
        .filter_map(|p| p.get("approvalId").and_then(Value::as_str))
        .collect();
    let mut added = Vec::new();
    for (i, text) in new.iter().enumerate() {
        let message = parse(text).map_err(|e| bad(format!("prompt[{i}] is not JSON ({e})")))?;
        if message.get("role").and_then(Value::as_str) != Some("user") {
            return Err(bad(format!(
                "prompt[{i}] is not a user message: the thread's history is kept by the store, so the prompt holds only what is new (the user's message, or approvals). Nothing was sent."
            )));
        }
        let content = blocks(&message);
        // Only what a person writes: a tool result (or any block of the model's) in the prompt
        // would answer a call the store holds, or make a history the API refuses.
        if let Some(block) = content
            .iter()
            .find(|b| !USER_BLOCKS.contains(&b.get("type").and_then(Value::as_str).unwrap_or("")))
        {
            let kind = block
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("untyped");
            return Err(bad(format!(
                "prompt[{i}] holds a {:?} block: the thread's history is kept by the store, so the prompt holds only what the user writes (text, images, documents). Nothing was sent.",
                kind.chars().take(40).collect::<String>()
            )));
        }
        added.extend(content);
    }
    if !decisions.is_empty() {
        if !added.is_empty() {
            return Err(bad("a run that answers approvals takes no new message; send it once the run has resumed. Nothing was run.".into()));
        }
        if let Some(stale) = decisions.iter().find(|d| !waiting.contains(&d.as_str())) {
            return Err(bad(format!(
                "approval {:?} is not waiting in this thread: it was used already, or the thread moved on. Nothing was run.",
                stale.chars().take(120).collect::<String>()
            )));
        }
        if let Some(missing) = waiting.iter().find(|w| !decisions.iter().any(|d| d == *w)) {
            return Err(bad(format!(
                "the thread waits for a decision on every pending call; {missing:?} has none. Nothing was run."
            )));
        }
        let history = history.iter().map(Value::to_string).collect();
        return Ok((history, "[]".into()));
    }
    if added.is_empty() {
        return Err(bad(if waiting.is_empty() {
            "the prompt holds nothing new to send. Nothing was sent.".into()
        } else {
            format!(
                "the thread waits for {} decision(s) (getThread's pendingApprovals): answer them with the approvals option, or send a new message. Nothing was sent.",
                waiting.len()
            )
        }));
    }
    let asked: Vec<&str> = pending
        .iter()
        .filter_map(|p| p.get("toolUseId").and_then(Value::as_str))
        .collect();
    let mut content: Vec<Value> = unanswered(&history)
        .iter()
        .map(|id| {
            error_result(
                id,
                if asked.contains(&id.as_str()) {
                    UNDECIDED
                } else {
                    NOT_RUN
                },
            )
        })
        .collect();
    // A paused round whose other calls ran has their results last: the undecided ones join them.
    let answered_after = history.len() >= 2 && !asked.is_empty();
    if answered_after && content.is_empty() {
        content = asked.iter().map(|id| error_result(id, UNDECIDED)).collect();
    }
    content.extend(added);
    push_user(&mut history, content);
    Ok((history.iter().map(Value::to_string).collect(), "[]".into()))
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
    last: Mutex<Option<(usize, String)>>,
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
            let last = texts.last().cloned();
            let held = self
                .store
                .write_history(self.id.clone(), self.run.clone(), at, texts)
                .await
                .map_err(store_failed)?;
            if !held {
                return Err(RunError::store_unavailable(LOST_HOLD));
            }
            if let Some(last) = last {
                *self.last.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((at + messages.len(), last));
            }
            Ok(())
        })
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
    let committer = Arc::new(Committer {
        store: store.clone(),
        id: id.clone(),
        run: run_id.clone(),
        last: Mutex::new(None),
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
            let committed = committer
                .last
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
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
                    None => error_result(call, NOT_RUN),
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
    let released = store.release_thread(id, run_id, at, tail, pending).await;
    match (result, released) {
        (Ok(_), Err(e)) => Err(store_failed(e)),
        (Ok(_), Ok(false)) => Err(RunError::store_unavailable(LOST_HOLD)),
        (result, _) => result,
    }
}
