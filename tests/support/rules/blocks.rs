//! Messages and their content blocks: roles, which role may hold which block, the shape of each
//! block, thinking signatures, and no empty message but a final assistant one.

use serde_json::Value;

use super::signatures::{sign_thinking, valid_redacted_data};
use super::EMPTY_MESSAGE;

/// Result blocks of server tools: in assistant messages, after their `server_tool_use`.
const SERVER_RESULTS: &[&str] = &[
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
];

const SERVER_TOOL_NAMES: &[&str] = &[
    "web_search",
    "web_fetch",
    "code_execution",
    "bash_code_execution",
    "text_editor_code_execution",
    "tool_search_tool_regex",
    "tool_search_tool_bm25",
];

/// A block type no API version has: the test server accepts it back as it was sent.
pub const FUTURE_BLOCK: &str = "x_future_block";

pub(super) fn is_server_result(kind: Option<&str>) -> bool {
    kind.is_some_and(|k| SERVER_RESULTS.contains(&k))
}

fn is_server_id(id: &Value) -> bool {
    id.as_str().is_some_and(|id| {
        id.strip_prefix("srvtoolu_").is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
    })
}

fn non_empty_text(block: &Value) -> bool {
    block["text"].as_str().is_some_and(|t| !t.trim().is_empty())
}

/// A document block: a PDF, plain text, custom content, a URL or a file.
fn document_ok(block: &Value) -> bool {
    let source = &block["source"];
    match source["type"].as_str() {
        Some("base64") => source["media_type"] == "application/pdf" && source["data"].is_string(),
        Some("text") => source["media_type"] == "text/plain" && source["data"].is_string(),
        Some("url") => source["url"].is_string(),
        Some("file") => source["file_id"].is_string(),
        Some("content") => source["content"].is_string() || source["content"].is_array(),
        _ => false,
    }
}

/// A search_result block: `source` and `title` strings and a list of text blocks.
fn search_result_ok(block: &Value) -> bool {
    block["source"].is_string()
        && block["title"].is_string()
        && block["content"]
            .as_array()
            .is_some_and(|c| c.iter().all(|b| b["type"] == "text" && non_empty_text(b)))
}

/// A block allowed in a `tool_result`'s content; the error names what is wrong.
fn tool_result_item(item: &Value) -> Result<(), String> {
    match item["type"].as_str() {
        Some("text") if non_empty_text(item) => Ok(()),
        Some("text") => Err("text content blocks must be non-empty".into()),
        Some("image") if item["source"].is_object() => Ok(()),
        Some("document") if document_ok(item) => Ok(()),
        Some("search_result") if search_result_ok(item) => Ok(()),
        Some("tool_reference") if item["tool_name"].is_string() => Ok(()),
        Some(kind @ ("image" | "document" | "search_result" | "tool_reference")) => {
            Err(format!("a malformed {kind} block: {item}"))
        }
        kind => Err(format!(
            "Input tag {kind:?} does not match any of the expected tags: 'text', 'image', 'document', 'search_result', 'tool_reference'"
        )),
    }
}

/// Roles and content blocks are well-formed, and no message but a final assistant one is empty.
pub(super) fn check_shapes(messages: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    let last = messages.len() - 1;
    for (n, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role != "user" && role != "assistant" {
            problems.push(format!(
                "messages.{n}.role: Input should be 'user' or 'assistant'"
            ));
        }
        let content = &message["content"];
        let empty = content.as_str().is_some_and(str::is_empty)
            || content.as_array().is_some_and(Vec::is_empty);
        if empty && !(n == last && role == "assistant") {
            problems.push(format!("messages.{n}: {EMPTY_MESSAGE}"));
        }
        if content.is_string() {
            continue;
        }
        let Some(blocks) = content.as_array() else {
            problems.push(format!(
                "messages.{n}.content: must be a string or an array of blocks"
            ));
            continue;
        };
        for (m, block) in blocks.iter().enumerate() {
            let at = format!("messages.{n}.content.{m}");
            match (role, block["type"].as_str()) {
                (_, Some("text")) if block["text"].is_string() => {
                    if !non_empty_text(block) {
                        problems.push(format!("{at}: text content blocks must be non-empty"));
                    }
                }
                ("user", Some("image")) if block["source"].is_object() => {}
                ("user", Some("document")) if document_ok(block) => {}
                ("user", Some("search_result")) if search_result_ok(block) => {}
                ("assistant", Some("tool_use")) => {
                    if !block["id"].is_string()
                        || !block["name"].is_string()
                        || !block["input"].is_object()
                    {
                        problems.push(format!(
                            "{at}.tool_use: id, name and an object input are required"
                        ));
                    }
                }
                ("assistant", Some("thinking")) => {
                    let valid = match (block["thinking"].as_str(), block["signature"].as_str()) {
                        (Some(text), Some(signature)) => signature == sign_thinking(text),
                        _ => false,
                    };
                    if !valid {
                        problems.push(format!("{at}: Invalid `signature` in `thinking` block"));
                    }
                }
                ("assistant", Some("redacted_thinking")) => {
                    if !block["data"].as_str().is_some_and(valid_redacted_data) {
                        problems.push(format!("{at}: Invalid `data` in `redacted_thinking` block"));
                    }
                }
                ("assistant", Some("server_tool_use")) => {
                    let named = block["name"]
                        .as_str()
                        .is_some_and(|n| SERVER_TOOL_NAMES.contains(&n));
                    if !is_server_id(&block["id"]) || !named || !block["input"].is_object() {
                        problems.push(format!(
                            "{at}.server_tool_use: an id `srvtoolu_…`, a server tool name and an object input are required"
                        ));
                    }
                }
                ("assistant", kind) if is_server_result(kind) => {
                    if !is_server_id(&block["tool_use_id"])
                        || !(block["content"].is_object() || block["content"].is_array())
                    {
                        problems.push(format!(
                            "{at}: a server tool result needs a `srvtoolu_…` tool_use_id and content"
                        ));
                    }
                }
                ("assistant", Some("compaction")) => {
                    let string_or_null = |v: &Value| v.is_null() || v.is_string();
                    if !string_or_null(&block["content"])
                        || !string_or_null(&block["encrypted_content"])
                    {
                        problems.push(format!(
                            "{at}.compaction: content and encrypted_content must be strings"
                        ));
                    }
                }
                ("assistant", Some(FUTURE_BLOCK)) => {}
                ("user", Some("tool_result")) => {
                    if !block["tool_use_id"].is_string() {
                        problems.push(format!("{at}.tool_result.tool_use_id: Field required"));
                    }
                    match block.get("content") {
                        None | Some(Value::String(_)) => {}
                        Some(Value::Array(items)) => {
                            for (k, item) in items.iter().enumerate() {
                                if let Err(why) = tool_result_item(item) {
                                    problems.push(format!("{at}.content.{k}: {why}"));
                                }
                            }
                        }
                        Some(_) => problems.push(format!(
                            "{at}.tool_result.content: must be a string or a list of blocks"
                        )),
                    }
                    if block.get("is_error").is_some_and(|e| !e.is_boolean()) {
                        problems.push(format!(
                            "{at}.tool_result.is_error: Input should be a valid boolean"
                        ));
                    }
                    // The real API's words (seen in anthropics/claude-agent-sdk-python#248).
                    let empty = match block.get("content") {
                        None => true,
                        Some(Value::String(s)) => s.trim().is_empty(),
                        Some(Value::Array(items)) => items.is_empty(),
                        Some(_) => false,
                    };
                    if block["is_error"] == true && empty {
                        problems.push(format!(
                            "{at}.tool_result: content cannot be empty if `is_error` is true"
                        ));
                    }
                }
                (_, kind) => problems.push(format!(
                    "{at}: a {role} message cannot hold a block of type {kind:?}"
                )),
            }
        }
    }
    problems
}
