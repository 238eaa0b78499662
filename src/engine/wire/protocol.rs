//! The Messages API wire format: what we send and what we read back.
//!
//! Messages are kept as pre-serialised JSON in shared bytes ([`RawMessage`]) so a request body
//! is the history's pieces shared, never re-serialised nor copied again each round.

use bytes::Bytes;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::engine::report::usage::ApiUsage;

/// One message of the conversation, serialised once: its JSON text in shared bytes, so each
/// request body takes it by reference count instead of copying it.
#[derive(Clone, Debug)]
pub struct RawMessage(Bytes);

impl RawMessage {
    /// The message's JSON text.
    pub fn get(&self) -> &str {
        // SAFETY: only ever made from a `RawValue`'s text (`From<Box<RawValue>>`), valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// The message's JSON text as shared bytes (a reference count, no copy).
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }
}

impl From<Box<RawValue>> for RawMessage {
    /// Takes over the text's memory (no copy).
    fn from(raw: Box<RawValue>) -> Self {
        let text: Box<str> = raw.into();
        RawMessage(Bytes::from(text.into_boxed_bytes()))
    }
}

impl Serialize for RawMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(self.get()).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// A successful answer of the Messages API. Unknown fields are ignored.
#[derive(Deserialize)]
pub struct MessageResponse {
    /// The body's `type`: `"message"` for a reply.
    #[serde(rename = "type")]
    pub kind: String,
    /// Who wrote it: `"assistant"` for a reply.
    pub role: String,
    /// The message's `id` (`msg_…`), kept for traces; anything but a string is dropped.
    #[serde(default, deserialize_with = "lenient_text")]
    pub id: Option<String>,
    /// The model that wrote it, kept for traces; anything but a string is dropped.
    #[serde(default, deserialize_with = "lenient_text")]
    pub model: Option<String>,
    /// Kept verbatim: it goes back into the history exactly as the model wrote it
    /// (thinking blocks carry signatures that must not change).
    pub content: Box<RawValue>,
    /// Why the model stopped (`end_turn`, `tool_use`, `max_tokens`, `pause_turn`…).
    pub stop_reason: Option<String>,
    /// What the reply cost in tokens.
    #[serde(default)]
    pub usage: ApiUsage,
    /// The code-execution container the reply ran in, if any.
    #[serde(default)]
    pub container: Option<Container>,
    /// What context editing did to the request (`applied_edits`), when the API says.
    #[serde(default, deserialize_with = "ContextManagement::lenient")]
    pub context_management: Option<ContextManagement>,
    /// The `request-id` header of the answer (not part of the body).
    #[serde(skip)]
    pub request_id: Option<String>,
    /// The reply answers the request's restart: an earlier attempt's streamed reply was cut once
    /// it began, so the request that continued an API thread was sent again as a new thread.
    #[serde(skip)]
    pub after_cut: bool,
}

/// A field only traces show: a string is kept, anything else dropped rather than failing the
/// reply over it.
pub fn lenient_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    // Taken as raw text first: a value nested past serde's depth limit is skipped, not fatal.
    let raw = Box::<RawValue>::deserialize(d)?;
    Ok(serde_json::from_str(raw.get()).ok())
}

/// A code-execution container: its id goes with the next request.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// The container's id.
    pub id: String,
    /// When the API lets the container go (an ISO 8601 time).
    #[serde(default, rename(serialize = "expiresAt"))]
    pub expires_at: String,
}

/// A reply's `context_management`: what the API cleared from the request before the model
/// read it.
#[derive(Default, Debug)]
pub struct ContextManagement {
    /// Each edit applied (`clear_tool_uses_20250919` with `cleared_tool_uses`, …), as written.
    pub applied_edits: Vec<Box<RawValue>>,
}

impl ContextManagement {
    /// Read leniently: it is only reported, so one of another shape (not an object, no list of
    /// edits) reports nothing rather than failing the reply.
    pub fn lenient<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        #[derive(Deserialize)]
        struct Shape {
            #[serde(default)]
            applied_edits: Option<Vec<Box<RawValue>>>,
        }
        let raw = Box::<RawValue>::deserialize(d)?;
        Ok(serde_json::from_str::<Shape>(raw.get())
            .ok()
            .map(|s| ContextManagement {
                applied_edits: s.applied_edits.unwrap_or_default(),
            }))
    }
}

/// One content block of a response, read loosely: only `text`, `thinking` and `tool_use` matter
/// to the loop, every other block type passes through untouched in the raw content.
#[derive(Deserialize)]
pub struct ContentBlock<'a> {
    /// The block's `type` (`text`, `thinking`, `tool_use`, …).
    #[serde(rename = "type", borrow)]
    pub kind: std::borrow::Cow<'a, str>,
    /// A text block's text.
    #[serde(default)]
    pub text: Option<String>,
    /// A thinking block's thinking.
    #[serde(default)]
    pub thinking: Option<String>,
    /// A `tool_use` block's id.
    #[serde(default)]
    pub id: Option<String>,
    /// The tool a `tool_use` block calls.
    #[serde(default)]
    pub name: Option<String>,
    /// A `tool_use` block's input, as the model wrote it.
    #[serde(default, borrow)]
    pub input: Option<&'a RawValue>,
    /// A `compaction` block's summary (`null` when the compaction failed), as written.
    #[serde(default, borrow)]
    pub content: Option<&'a RawValue>,
    /// A `compaction` block's tool changes (those of the turns it summarised).
    #[serde(default, borrow)]
    pub tool_changes: Option<&'a RawValue>,
}

/// The `request-id` header of an answer: what Anthropic's support asks for to find a request.
pub fn request_id(headers: &reqwest::header::HeaderMap) -> Option<String> {
    // Bedrock names it `x-amzn-requestid`.
    ["request-id", "x-amzn-requestid"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::to_owned)
}

/// The error body: `{"type":"error","error":{"type":…,"message":…},"request_id":…}`.
#[derive(Deserialize)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
    /// The request's id, as the body gives it.
    #[serde(default)]
    pub request_id: Option<String>,
}

/// The `error` member of an error body.
#[derive(Deserialize)]
pub struct ErrorDetail {
    /// The error's `type` (`overloaded_error`, `invalid_request_error`, …).
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The API's own sentence.
    #[serde(default)]
    pub message: String,
    /// Machine-readable detail about the cause: its `error_code` names it (`thread_not_found`,
    /// `image_dimensions_too_large` …). Read as any JSON, so that a shape we do not expect
    /// never costs the type and message.
    #[serde(default)]
    pub details: Option<serde_json::Value>,
}

impl ErrorDetail {
    /// `details.error_code`, when it is a string: the stable code that names the cause.
    pub fn error_code(&self) -> Option<String> {
        let code = self.details.as_ref()?.get("error_code")?.as_str()?;
        Some(code.to_owned())
    }
}

/// A `tool_result` block of the user message that answers one `tool_use`.
#[derive(Serialize)]
pub struct ToolResultBlock<'a> {
    /// Always `"tool_result"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The `tool_use` this answers.
    pub tool_use_id: &'a str,
    /// What the model reads.
    pub content: ResultContent<'a>,
    /// The call failed: the content says how.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// The content of a `tool_result`: text, or content blocks as the tool gave them.
#[derive(Serialize)]
#[serde(untagged)]
pub enum ResultContent<'a> {
    /// Plain text.
    Text(&'a str),
    /// A JSON array of content blocks, written as given.
    Blocks(&'a RawValue),
}

/// A message whose content is serialised from `content`.
#[derive(Serialize)]
pub struct OutgoingMessage<C: Serialize> {
    /// `"user"` or `"assistant"`.
    pub role: &'static str,
    /// A string, or an array of content blocks.
    pub content: C,
}

/// Serialises a message once, for the history.
pub fn raw_message<C: Serialize>(role: &'static str, content: C) -> RawMessage {
    // `to_raw_value` keeps serde_json's own output without parsing it again to check it.
    serde_json::value::to_raw_value(&OutgoingMessage { role, content })
        .expect("messages built from strings and raw JSON always serialise")
        .into()
}

/// The user message that starts a run from a plain string prompt.
pub fn user_text(prompt: &str) -> RawMessage {
    raw_message("user", prompt)
}

/// The assistant message that goes back into the history: the model's content, verbatim.
pub fn assistant_message(content: &RawValue) -> RawMessage {
    raw_message("assistant", content)
}

/// Two content arrays as one, each block kept as it was written (a paused server-tool turn and
/// its continuation become one assistant message).
pub fn join_content(first: &RawValue, then: &RawValue) -> Box<RawValue> {
    let a = first.get().trim();
    let b = then.get().trim();
    let a_inner = a[1..a.len() - 1].trim();
    let b_inner = b[1..b.len() - 1].trim();
    let joined = match (a_inner.is_empty(), b_inner.is_empty()) {
        (true, _) => format!("[{b_inner}]"),
        (_, true) => format!("[{a_inner}]"),
        _ => format!("[{a_inner},{b_inner}]"),
    };
    RawValue::from_string(joined).expect("two JSON arrays joined are a JSON array")
}

/// Whether a content array is empty.
pub fn is_empty_content(content: &RawValue) -> bool {
    let c = content.get().trim();
    c.len() >= 2 && c[1..c.len() - 1].trim().is_empty()
}

/// The `content` of a message (its JSON text), as the raw JSON it holds.
pub fn content_of(message: &str) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Of {
        content: Box<RawValue>,
    }
    serde_json::from_str::<Of>(message).ok().map(|m| m.content)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn joins_content_arrays_keeping_each_block() {
        let a = raw(r#"[{"type":"server_tool_use","id":"srvtoolu_1","z":1,"a":2}]"#);
        let b = raw(r#"[ {"type":"text","text":"done"} ]"#);
        assert_eq!(
            join_content(&a, &b).get(),
            r#"[{"type":"server_tool_use","id":"srvtoolu_1","z":1,"a":2},{"type":"text","text":"done"}]"#
        );
        assert_eq!(
            join_content(&raw("[]"), &b).get(),
            r#"[{"type":"text","text":"done"}]"#
        );
        assert_eq!(join_content(&a, &raw("[ ]")).get(), a.get());
        assert!(is_empty_content(&raw("[ ]")));
        assert!(!is_empty_content(&b));
    }
}
