//! Signed thinking: the test server signs the thinking blocks tests script, so a block that comes
//! back changed (or forged) is refused; and builders of the blocks tests send back.

use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{json, Value};

const SIGNING_KEY: &str = "test-server-thinking-signing-key";

/// A keyed hash, 32 hex digits. SipHash with fixed keys: stable within one build, which is all a
/// test process needs (the real API's signatures are opaque too).
fn mac(kind: &str, text: &str) -> String {
    ["a", "b"]
        .iter()
        .map(|salt| {
            let mut hasher = DefaultHasher::new();
            (SIGNING_KEY, kind, salt, text).hash(&mut hasher);
            format!("{:016x}", hasher.finish())
        })
        .collect()
}

/// The signature the test server gives a thinking block with this text.
pub fn sign_thinking(text: &str) -> String {
    mac("thinking", text)
}

/// A thinking block with a valid signature.
pub fn thinking_block(text: &str) -> Value {
    json!({ "type": "thinking", "thinking": text, "signature": sign_thinking(text) })
}

/// A redacted_thinking block whose `data` (the payload in hex, then its MAC) the server accepts.
pub fn redacted_thinking_block(payload: &str) -> Value {
    let hex: String = payload.bytes().map(|b| format!("{b:02x}")).collect();
    let data = format!("{hex}{}", mac("redacted", &hex));
    json!({ "type": "redacted_thinking", "data": data })
}

pub(super) fn valid_redacted_data(data: &str) -> bool {
    data.len() > 32
        && data.is_char_boundary(data.len() - 32)
        && mac("redacted", &data[..data.len() - 32]) == data[data.len() - 32..]
}

/// A server_tool_use block.
pub fn server_tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({ "type": "server_tool_use", "id": id, "name": name, "input": input })
}

/// A web_search_tool_result with one result per `(url, title)`.
pub fn web_search_result(tool_use_id: &str, results: &[(&str, &str)]) -> Value {
    let content: Vec<Value> = results
        .iter()
        .map(|(url, title)| json!({ "type": "web_search_result", "url": url, "title": title, "encrypted_content": "ZW5j", "page_age": null }))
        .collect();
    json!({ "type": "web_search_tool_result", "tool_use_id": tool_use_id, "content": content })
}

/// A compaction block (server-side compaction): `content` the summary (`None`: a failed
/// compaction), with this `encrypted_content`.
pub fn compaction_block(content: Option<&str>, encrypted_content: &str) -> Value {
    json!({ "type": "compaction", "content": content, "encrypted_content": encrypted_content })
}

/// A `tool_addition` or `tool_removal` block (`kind`) naming a tool of the request's `tools`: the
/// content of a `system` message.
pub fn tool_change(kind: &str, name: &str) -> Value {
    json!({ "type": kind, "tool": { "type": "tool_reference", "name": name } })
}
