//! What the prompt adds to a stored thread: the user's new message (only what a person writes),
//! or the person's decisions on the calls a pause left waiting; a call the thread left without
//! an answer is answered as not run, so the history is one the API takes.

use serde_json::{json, Value};

use super::runs::{Found, Prepared};
use crate::engine::error::RunError;

use crate::engine::run::feedback::{NOT_RUN_RUN_ENDED, UNDECIDED_USER_WROTE};

pub(super) fn bad(why: String) -> RunError {
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
pub(super) fn unanswered(history: &[Value]) -> Vec<String> {
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

pub(super) fn error_result(id: &str, text: &str) -> Value {
    json!({ "type": "tool_result", "tool_use_id": id, "content": text, "is_error": true })
}

/// The stored thread and the prompt as the run's history; what waits is then `[]`.
pub(super) fn prepare(found: Found, new: &[String], decisions: &[String]) -> Prepared<RunError> {
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
                    UNDECIDED_USER_WROTE
                } else {
                    NOT_RUN_RUN_ENDED
                },
            )
        })
        .collect();
    // A paused round whose other calls ran has their results last: the undecided ones join them.
    let answered_after = history.len() >= 2 && !asked.is_empty();
    if answered_after && content.is_empty() {
        content = asked
            .iter()
            .map(|id| error_result(id, UNDECIDED_USER_WROTE))
            .collect();
    }
    content.extend(added);
    push_user(&mut history, content);
    Ok((history.iter().map(Value::to_string).collect(), "[]".into()))
}
