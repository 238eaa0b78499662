//! Messages and their content blocks: roles and a user message first, which role may hold which
//! block, the shape of each block (ids, image sources, citations, cache_control), thinking
//! signatures, and no empty message but a final assistant one.

use serde_json::Value;

use super::fields::{cache_control, extra_keys, unknown_tag};
use super::mcp_connector;
use super::signatures::{sign_thinking, valid_redacted_data};
use super::tool_changes::{system_message_problems, tool_change_list};
use super::versions;
use super::EMPTY_MESSAGE;

/// The ids of `tool_use` blocks (and what a `tool_result` names) must match this.
const TOOL_ID_PATTERN: &str = "^[a-zA-Z0-9_-]+$";

const IMAGE_MEDIA_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

const CITATION_TYPES: &[&str] = &[
    "char_location",
    "page_location",
    "content_block_location",
    "web_search_result_location",
    "search_result_location",
];

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

fn is_tool_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What is wrong with `value` as one of the listed tags (`None`: it is one of them).
fn bad_tag(value: &Value, tags: &[&str], at: &str) -> Option<String> {
    let tag = value.as_str().unwrap_or_default();
    (!tags.contains(&tag)).then(|| unknown_tag(at, value, tags))
}

/// A text block: non-empty text, and citations (if any) of a known type.
fn text_problems(block: &Value, at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if !non_empty_text(block) {
        problems.push(format!("{at}: text content blocks must be non-empty"));
    }
    match block.get("citations") {
        None | Some(Value::Null) => {}
        Some(Value::Array(citations)) => {
            problems.extend(citations.iter().enumerate().filter_map(|(k, c)| {
                bad_tag(&c["type"], CITATION_TYPES, &format!("{at}.citations.{k}"))
            }))
        }
        Some(_) => problems.push(format!("{at}.citations: Input should be a valid list")),
    }
    problems
}

/// An image block: a base64 image of a type the API reads, a URL or a file.
fn image_problem(block: &Value, at: &str) -> Option<String> {
    let source = &block["source"];
    if !source.is_object() {
        return Some(format!("{at}.source: Input should be a valid dictionary"));
    }
    let want_string = |field: &str, kind: &str| {
        (!source[field].is_string())
            .then(|| format!("{at}.source.{kind}.{field}: Input should be a valid string"))
    };
    match source["type"].as_str() {
        Some("base64") if !IMAGE_MEDIA_TYPES.iter().any(|t| source["media_type"] == *t) => Some(format!(
            "{at}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
        )),
        Some("base64") => want_string("data", "base64"),
        Some("url") => want_string("url", "url"),
        Some("file") => want_string("file_id", "file"),
        _ => bad_tag(&source["type"], &["base64", "url", "file"], &format!("{at}.source")),
    }
}

/// A document block: a PDF, plain text, custom content, a URL or a file.
fn document_problem(block: &Value, at: &str) -> Option<String> {
    let source = &block["source"];
    let media = |kind: &str, wanted: &str| {
        (source["media_type"] != wanted || !source["data"].is_string())
            .then(|| format!("{at}.source.{kind}.media_type: Input should be '{wanted}'"))
    };
    match source["type"].as_str() {
        Some("base64") => media("base64", "application/pdf"),
        Some("text") => media("text", "text/plain"),
        Some("url") => (!source["url"].is_string())
            .then(|| format!("{at}.source.url.url: Input should be a valid string")),
        Some("file") => (!source["file_id"].is_string())
            .then(|| format!("{at}.source.file.file_id: Input should be a valid string")),
        Some("content") => {
            (!(source["content"].is_string() || source["content"].is_array())).then(|| {
                format!("{at}.source.content.content: Input should be a valid string or list")
            })
        }
        _ => bad_tag(
            &source["type"],
            &["base64", "text", "url", "content", "file"],
            &format!("{at}.source"),
        ),
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

/// A block allowed in a `tool_result`'s content (at `at`): what is wrong with it.
fn tool_result_item(item: &Value, at: &str) -> Vec<String> {
    let mut problems: Vec<String> = match item["type"].as_str() {
        Some("text") => text_problems(item, at),
        Some("image") => image_problem(item, at).into_iter().collect(),
        Some("document") => document_problem(item, at).into_iter().collect(),
        Some("search_result") if search_result_ok(item) => Vec::new(),
        Some("tool_reference") if item["tool_name"].is_string() => Vec::new(),
        Some(kind @ ("search_result" | "tool_reference")) => {
            vec![format!("{at}: a malformed {kind} block: {item}")]
        }
        kind => vec![format!(
            "{at}: Input tag {kind:?} does not match any of the expected tags: 'text', 'image', 'document', 'search_result', 'tool_reference'"
        )],
    };
    problems.extend(block_cache_control(item, at));
    problems
}

/// A block's `cache_control`, where it has one; thinking blocks cannot have one.
fn block_cache_control(block: &Value, at: &str) -> Option<String> {
    let cc = block.get("cache_control")?;
    if matches!(
        block["type"].as_str(),
        Some("thinking" | "redacted_thinking")
    ) {
        return Some(format!(
            "{at}.cache_control: Extra inputs are not permitted"
        ));
    }
    cache_control(cc, &format!("{at}.cache_control")).err()
}

/// A compaction block: a summary (null: a failed compaction, a no-op; never empty), and the
/// opaque members it came with.
fn compaction_problems(block: &Value, at: &str) -> Vec<String> {
    let Some(fields) = block.as_object() else {
        return Vec::new();
    };
    const FIELDS: &[&str] = &[
        "type",
        "content",
        "encrypted_content",
        "signature",
        "tool_changes",
        "cache_control",
    ];
    let mut problems = extra_keys(fields, FIELDS, at);
    for key in ["content", "encrypted_content", "signature"] {
        match fields.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s.is_empty() && key == "content" => problems.push(format!(
                "{at}.content: String should have at least 1 character"
            )),
            Some(Value::String(_)) => {}
            Some(_) => problems.push(format!("{at}.{key}: Input should be a valid string")),
        }
    }
    if let Some(changes) = fields.get("tool_changes") {
        problems.extend(tool_change_list(changes, &format!("{at}.tool_changes")));
    }
    problems
}

/// Roles and content blocks are well-formed, and no message but a final assistant one is empty.
/// `betas` and `offered` (the tools' names): what a `system` message (tool changes) needs.
/// `version`: the API version the request speaks (what it refuses, see `versions`).
pub(super) fn check_shapes(
    messages: &[Value],
    betas: &[String],
    offered: &[&str],
    version: &str,
) -> Vec<String> {
    let mut problems = Vec::new();
    let last = messages.len() - 1;
    for (n, message) in messages.iter().enumerate() {
        if let Some(fields) = message.as_object() {
            for key in fields.keys().filter(|k| *k != "role" && *k != "content") {
                problems.push(format!(
                    "messages.{n}.{key}: Extra inputs are not permitted"
                ));
            }
        }
        let role = message["role"].as_str().unwrap_or_default();
        if role == "system" {
            problems.extend(system_message_problems(n, message, betas, offered));
            continue;
        }
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
        if role == "user" {
            problems.extend(versions::user_citations(blocks, n, version));
        }
        for (m, block) in blocks.iter().enumerate() {
            let at = format!("messages.{n}.content.{m}");
            problems.extend(block_cache_control(block, &at));
            if role == "assistant" {
                if let Some(problem) = versions::assistant_block_problem(block, &at, version) {
                    problems.push(problem);
                    continue;
                }
            }
            match (role, block["type"].as_str()) {
                (_, Some("text")) if block["text"].is_string() => {
                    problems.extend(text_problems(block, &at));
                }
                ("user", Some("image")) => problems.extend(image_problem(block, &at)),
                // An assistant message may hold one under the versions before the removals.
                (_, Some("document")) => problems.extend(document_problem(block, &at)),
                ("user", Some("search_result")) if search_result_ok(block) => {}
                ("assistant", Some("tool_use")) => {
                    match block["id"].as_str() {
                        None => problems.push(format!("{at}.id: Input should be a valid string")),
                        Some(id) if !is_tool_id(id) => problems.push(format!(
                            "{at}.id: String should match pattern '{TOOL_ID_PATTERN}'"
                        )),
                        Some(_) => {}
                    }
                    if block["name"].as_str().is_none_or(str::is_empty) {
                        problems.push(format!("{at}.name: Input should be a non-empty string"));
                    }
                    if !block["input"].is_object() {
                        problems.push(format!("{at}.input: Input should be a valid dictionary"));
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
                    problems.extend(compaction_problems(block, &at));
                }
                (_, Some(kind @ ("tool_addition" | "tool_removal"))) => problems.push(format!(
                    "{at}: `{kind}` blocks can only be in `system` messages"
                )),
                ("assistant", Some("mcp_tool_use" | "mcp_tool_result")) => {
                    problems.extend(mcp_connector::block_problems(
                        block,
                        &at,
                        betas,
                        text_problems,
                    ));
                }
                (_, Some(kind @ ("mcp_tool_use" | "mcp_tool_result"))) => problems.push(format!(
                    "{at}: `{kind}` blocks can only be in `assistant` messages"
                )),
                ("assistant", Some(FUTURE_BLOCK)) => {}
                ("user", Some("tool_result")) => {
                    match block["tool_use_id"].as_str() {
                        None => {
                            problems.push(format!("{at}.tool_result.tool_use_id: Field required"));
                        }
                        Some(id) if !is_tool_id(id) => problems.push(format!(
                            "{at}.tool_use_id: String should match pattern '{TOOL_ID_PATTERN}'"
                        )),
                        Some(_) => {}
                    }
                    match block.get("content") {
                        None | Some(Value::String(_)) => {}
                        Some(Value::Array(items)) => {
                            for (k, item) in items.iter().enumerate() {
                                problems
                                    .extend(tool_result_item(item, &format!("{at}.content.{k}")));
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
                    // A failure must say what went wrong: the API refuses an error result with nothing in it,
                    // in these words.
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
    if messages[0]["role"] != "user" {
        problems.push("messages: first message must use the \"user\" role".into());
    }
    problems
}
