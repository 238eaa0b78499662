//! The prompt: a string (one user message) or the messages of a conversation. Each message is
//! checked through borrowed views and kept as the JSON text it came as: keys keep their order,
//! byte for byte, and nothing of it is copied but the message itself.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::read::value;
use crate::engine::tools::tool::kind_of;
use crate::engine::wire::protocol::{self, RawMessage};
use crate::engine::RunError;

/// A message of the prompt, seen through borrowed fields only.
#[derive(Deserialize)]
struct MessageView<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// A content block, seen through its `type` only.
#[derive(Deserialize)]
struct BlockView<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
}

/// The prompt, read: the history the run starts from.
#[derive(Default)]
pub struct Prompt {
    /// Its messages, each as the JSON text it came as.
    pub messages: Vec<RawMessage>,
    /// Some message has `role: "system"` (mid-conversation tool changes, a beta).
    pub tool_changes: bool,
}

/// The prompt as the history the run starts from.
pub fn parse_prompt(prompt: Option<&RawValue>) -> Result<Prompt, RunError> {
    let mut tool_changes = false;
    let messages = messages(prompt, &mut tool_changes)?;
    Ok(Prompt {
        messages,
        tool_changes,
    })
}

fn messages(prompt: Option<&RawValue>, system: &mut bool) -> Result<Vec<RawMessage>, RunError> {
    let text = prompt.map_or("null", |p| p.get());
    match text.as_bytes().first() {
        Some(b'"') => {
            let s: String = serde_json::from_str(text).map_err(|e| {
                RunError::invalid_request(format!("prompt is not a valid string: {e}. Nothing was sent."))
            })?;
            if s.trim().is_empty() {
                return Err(RunError::invalid_request(
                    "prompt is an empty string; pass the user's question. Nothing was sent.",
                ));
            }
            Ok(vec![protocol::user_text(&s)])
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| {
                RunError::invalid_request(format!("prompt is not a valid array: {e}. Nothing was sent."))
            })?;
            if items.is_empty() {
                return Err(RunError::invalid_request(
                    "prompt is an empty array; pass at least one message. Nothing was sent.",
                ));
            }
            items
                .into_iter()
                .enumerate()
                .map(|(i, m)| message(i, m, system))
                .collect()
        }
        _ => Err(RunError::invalid_request(format!(
            "prompt must be a string or an array of messages ({{ role, content }}); got {}. Nothing was sent.",
            kind_of(&value(prompt.unwrap_or(&*null())))
        ))),
    }
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

/// Message `i` of the prompt, checked: a `user`, `assistant` or `system` role (a `system` one
/// is marked in `system`; `trust.rs` checks it holds only tool changes), and content that is a
/// string or blocks that each have a string `type`.
fn message(i: usize, m: &RawValue, system: &mut bool) -> Result<RawMessage, RunError> {
    let bad_message =
        |why: &str| RunError::invalid_request(format!("prompt[{i}] {why}. Nothing was sent."));
    let view: MessageView = if m.get().starts_with('{') {
        serde_json::from_str(m.get()).map_err(|e| bad_message(&e.to_string()))?
    } else {
        return Err(bad_message(&format!(
            "must be a message {{ role, content }}, got {}",
            kind_of(&value(m))
        )));
    };
    match view.role.as_deref() {
        Some("user") | Some("assistant") => {}
        Some("system") => *system = true,
        _ => {
            return Err(bad_message(
                "needs role \"user\" or \"assistant\" (or \"system\", for tool changes only)",
            ))
        }
    }
    let content = view.content.map_or("null", |c| c.get());
    match content.as_bytes().first() {
        Some(b'"') => {}
        Some(b'[') => {
            let blocks: Vec<&RawValue> =
                serde_json::from_str(content).map_err(|e| bad_message(&e.to_string()))?;
            for block in blocks {
                let typed = block.get().starts_with('{')
                    && serde_json::from_str::<BlockView>(block.get())
                        .ok()
                        .is_some_and(|b| b.kind.is_some());
                if !typed {
                    return Err(bad_message("has a content block without a string type"));
                }
            }
        }
        _ => {
            return Err(bad_message(
                "needs content: a string or an array of content blocks",
            ))
        }
    }
    Ok(m.to_owned().into())
}
