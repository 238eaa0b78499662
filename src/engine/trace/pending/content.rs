//! A request's messages in the JSON form the OpenTelemetry GenAI conventions give them
//! (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`): a
//! message is `{ role, parts }`, and each content block becomes the part that says the same.
//! Only a run that records content pays for this.

use serde_json::{json, Map, Value};

use crate::engine::wire::protocol::RawMessage;

/// `system` (a string or text blocks) as the conventions' list of parts.
pub fn system(system: &serde_json::value::RawValue) -> String {
    let parts = match serde_json::from_str::<Value>(system.get()) {
        Ok(Value::String(text)) => vec![text_part(text)],
        Ok(Value::Array(blocks)) => blocks.into_iter().map(part).collect(),
        _ => Vec::new(),
    };
    Value::Array(parts).to_string()
}

/// The history as sent, as the conventions' input messages.
pub fn input(messages: &[RawMessage]) -> String {
    let messages: Vec<Value> = messages
        .iter()
        .filter_map(|m| serde_json::from_str::<Value>(m.get()).ok())
        .map(|m| {
            let parts = parts(m.get("content"));
            // A user message of tool results only is the tools' answer: the conventions' `tool`.
            let answers =
                !parts.is_empty() && parts.iter().all(|p| p["type"] == "tool_call_response");
            let role = match m.get("role") {
                _ if answers => Value::from("tool"),
                Some(role) => role.clone(),
                None => Value::Null,
            };
            json!({ "role": role, "parts": parts })
        })
        .collect();
    Value::Array(messages).to_string()
}

/// A reply's content as the conventions' output messages: one message, with why it stopped.
pub fn output(content: &serde_json::value::RawValue, stop_reason: Option<&str>) -> String {
    let content = serde_json::from_str::<Value>(content.get()).ok();
    // The conventions require a finish reason; a reply without one says so.
    let reason = stop_reason.unwrap_or("unknown");
    let message =
        json!({ "role": "assistant", "parts": parts(content.as_ref()), "finish_reason": reason });
    Value::Array(vec![message]).to_string()
}

/// A message's content (a string, or blocks) as parts.
fn parts(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(text)) => vec![text_part(text.clone())],
        Some(Value::Array(blocks)) => blocks.iter().cloned().map(part).collect(),
        _ => Vec::new(),
    }
}

fn text_part(text: String) -> Value {
    json!({ "type": "text", "content": text })
}

/// One content block as the part that says the same; a kind the conventions have no part for
/// keeps only its type.
fn part(block: Value) -> Value {
    let Value::Object(mut b) = block else {
        return json!({ "type": "unknown" });
    };
    let kind = b
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    let mut take = |key: &str| b.remove(key).unwrap_or(Value::Null);
    match kind.as_str() {
        "text" => json!({ "type": "text", "content": take("text") }),
        "thinking" => json!({ "type": "reasoning", "content": take("thinking") }),
        "tool_use" => json!({
            "type": "tool_call", "id": take("id"), "name": take("name"), "arguments": take("input"),
        }),
        "tool_result" => json!({
            "type": "tool_call_response", "id": take("tool_use_id"), "response": take("content"),
        }),
        "server_tool_use" | "mcp_tool_use" => json!({
            "type": "server_tool_call", "id": take("id"), "name": take("name"),
            "server_tool_call": { "type": kind, "input": take("input") },
        }),
        k if k.ends_with("_tool_result") => json!({
            "type": "server_tool_call_response", "id": take("tool_use_id"),
            "server_tool_call_response": { "type": kind },
        }),
        "image" | "document" => media(&kind, take("source")),
        _ => json!({ "type": kind }),
    }
}

/// An image or a document: its data, link or file id, as the conventions' blob, uri or file part.
fn media(kind: &str, source: Value) -> Value {
    let modality = if kind == "image" { "image" } else { "document" };
    let source = match source {
        Value::Object(source) => source,
        _ => Map::new(),
    };
    let field = |key: &str| source.get(key).cloned().unwrap_or(Value::Null);
    match source.get("type").and_then(Value::as_str) {
        Some("text") => json!({ "type": "text", "content": field("data") }),
        Some("base64") => json!({
            "type": "blob", "modality": modality, "mime_type": field("media_type"), "content": field("data"),
        }),
        Some("url") => json!({ "type": "uri", "modality": modality, "uri": field("url") }),
        Some("file") => {
            json!({ "type": "file", "modality": modality, "file_id": field("file_id") })
        }
        _ => json!({ "type": kind }),
    }
}
