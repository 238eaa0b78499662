//! A run in a stored thread: the store's history, then the prompt's new user message(s); each
//! step committed as the loop tells it ([`RunEvent::History`]); and, however the run ends, a
//! history the API takes again — every `tool_use` answered — with what waits for a person.
//!
//! Approvals in a thread are the store's: the ids are signed with the thread's own random secret
//! (never shown, no `approvalSecret` needed), and a decision is consumed in the transaction that
//! takes the thread, before any call runs, so no abort, crash or later failure lets it run a call
//! twice.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::runs::{Found, Prepared, Taken};
use super::{Store, StoreError};
use crate::engine::api::ApiClient;
use crate::engine::approval::{Signer, DEFAULT_APPROVAL_TTL};
use crate::engine::config::RunConfig;
use crate::engine::error::RunError;
use crate::engine::events::{EventSink, RunEvent};
use crate::engine::protocol::RawMessage;
use crate::engine::result::{RunOutput, ToolOutput};
use crate::engine::run::run_observed;
use crate::engine::tool::Tool;
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
        added.extend(blocks(&message));
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
    /// The last message written, and the history's length then.
    last: Option<(usize, String)>,
}

/// The observer a thread run wraps around the caller's: history goes to the writer, the rest on.
struct Journal<'a> {
    inner: Option<&'a dyn EventSink>,
    writes: mpsc::UnboundedSender<(usize, Vec<String>)>,
    seen: Mutex<Seen>,
}

impl EventSink for Journal<'_> {
    fn emit(&self, event: RunEvent) {
        match event {
            RunEvent::History { at, messages } => {
                let texts: Vec<String> = messages.iter().map(|m| m.get().to_owned()).collect();
                if let Some(last) = texts.last() {
                    let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
                    seen.last = Some((at + texts.len(), last.clone()));
                }
                let _ = self.writes.send((at, texts));
            }
            other => {
                if let RunEvent::ToolResult {
                    call, model_text, ..
                } = &other
                {
                    let text = match (&model_text, &call.output) {
                        (Some(told), _) => told.clone(),
                        (None, ToolOutput::Text(t) | ToolOutput::Json(t)) => t.clone(),
                        (None, ToolOutput::None) => String::new(),
                    };
                    let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
                    seen.results
                        .insert(call.tool_use_id.clone(), (call.is_error, text));
                }
                if let Some(inner) = self.inner {
                    inner.emit(other);
                }
            }
        }
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
    let mut cfg = cfg.clone();
    cfg.journal = true;
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

    // The run ends when the store fails under it or its hold is lost; `lost` says why.
    let stop = cancel.child_token();
    let lost: Mutex<Option<RunError>> = Mutex::new(None);
    let lose = |why: RunError| {
        lost.lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(why);
        stop.cancel();
    };
    let (writes, mut queue) = mpsc::unbounded_channel::<(usize, Vec<String>)>();
    let journal = Journal {
        inner: events,
        writes,
        seen: Mutex::new(Seen::default()),
    };
    let writer = async {
        while let Some((at, texts)) = queue.recv().await {
            match store.write_history(id.clone(), run_id.clone(), at, texts).await {
                Ok(true) => {}
                Ok(false) => lose(RunError::store_unavailable("the run lost its hold on the thread (its lease ran out and another run took it)")),
                Err(e) => lose(store_failed(e)),
            }
        }
    };
    let renew = async {
        let every = Duration::from_millis((lease_ms / 3).max(1) as u64);
        loop {
            tokio::time::sleep(every).await;
            match store.renew_lease(id.clone(), run_id.clone(), lease_ms).await {
                Ok(true) => {}
                Ok(false) => lose(RunError::store_unavailable("the run lost its hold on the thread (its lease ran out and another run took it)")),
                Err(e) => lose(store_failed(e)),
            }
        }
    };
    let work = run_observed(client, &cfg, tools, messages, &stop, Some(&journal));
    let (result, seen) = {
        tokio::pin!(writer);
        let mut renew = Box::pin(renew);
        let result = tokio::select! {
            result = work => result,
            _ = &mut renew => unreachable!("renewing never ends"),
        };
        let Journal { seen, writes, .. } = journal;
        drop(writes);
        writer.await;
        (result, seen.into_inner().unwrap_or_else(|p| p.into_inner()))
    };
    let lost = lost.into_inner().unwrap_or_else(|p| p.into_inner());
    let result = match (lost, result) {
        (Some(why), Err(_)) if !cancel.is_cancelled() => Err(why),
        (Some(why), Ok(_)) => Err(why),
        (_, result) => result,
    };
    let (at, tail, pending) = match &result {
        Ok(output) => {
            let pending =
                serde_json::to_string(&output.pending_approvals).unwrap_or_else(|_| "[]".into());
            (output.messages.len(), Vec::new(), pending)
        }
        Err(_) => {
            let (len, last) = seen.last.clone().unwrap_or((len_at_start, String::new()));
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
        (result, _) => result,
    }
}
