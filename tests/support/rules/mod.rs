//! What the real Messages API refuses, checked on every request the engine sends. Messages are
//! the API's own where it has one. The rules the JS stand-in (`stand-in/`) also checks are listed
//! once in `stand-in/rules.json`, which `tests/shared_rules.rs` sends here; both servers must
//! answer each case with the same status and error type (where the words differ, the table says
//! how). A server looser than the API would let an engine bug through unseen.
//!
//! Split by what they check: `fields` (top-level fields, thinking settings), `output_format`
//! (`output_config` and structured outputs, with `schema_subset` for the schema),
//! `context_management` (its edits and their betas), `tools` (and `tool_choice`), `blocks`
//! (messages and their blocks), `tool_changes` (system messages and their tool changes),
//! `mcp_connector` (`mcp_servers`, their toolsets and their calls' blocks), `conversation`
//! (rules across messages), `signatures`, `versions` (the API versions, and what 2026-10-21
//! refuses that 2023-06-01 takes). The route, the credentials and the headers are checked here.

mod blocks;
mod context_management;
mod conversation;
mod fields;
mod mcp_connector;
mod output_format;
mod schema_subset;
mod signatures;
mod tool_changes;
mod tools;
mod versions;

use std::collections::BTreeMap;

use serde_json::Value;

use super::step::Step;

// Each test crate uses a different part of what is re-exported here.
#[allow(unused_imports)]
pub use blocks::FUTURE_BLOCK;
#[allow(unused_imports)]
pub use context_management::{COMPACT_BETA, CONTEXT_MANAGEMENT_BETA};
#[allow(unused_imports)]
pub use conversation::{
    check_no_final_thinking, check_pairing, check_server_pairing, check_thinking_placement,
};
#[allow(unused_imports)]
pub use output_format::{format_schema_of, TASK_BUDGETS_BETA};
#[allow(unused_imports)]
pub use signatures::{
    compaction_block, redacted_thinking_block, server_tool_use, sign_thinking, thinking_block,
    tool_change, web_search_result,
};
#[allow(unused_imports)]
pub use tool_changes::TOOL_CHANGES_BETA;
#[allow(unused_imports)]
pub use versions::{CURRENT as CURRENT_VERSION, LEGACY as LEGACY_VERSION};

use blocks::check_shapes;
use context_management::check_context_management;
use conversation::check_pending_code_execution;
use fields::{check_fields, check_thinking_compatibility, thinking_on};
use mcp_connector::{check_mcp_pairing, check_mcp_servers, check_mcp_toolsets};
use output_format::check_output_fields;
use tools::{check_tool_choice, check_tools, offered_names};

/// Checks one request; returns its parsed body (`Null` if not JSON) and every problem found.
/// `credentials` are the API keys and auth tokens the server takes as valid.
pub fn check_request(
    method: &str,
    path: &str,
    headers: &BTreeMap<String, String>,
    body: &[u8],
    credentials: &[String],
) -> (Value, Vec<String>) {
    let (body, mut problems) = check_head(method, path, headers, body, credentials);
    if !body.is_null() {
        problems.extend(check_body_under(
            &body,
            &betas_of(headers),
            version_of(headers),
        ));
    }
    (body, problems)
}

/// The `anthropic-version` a request's body rules are checked under (an unknown or missing one
/// is refused by [`check_head`]; its body is then checked as the oldest version's).
pub fn version_of(headers: &BTreeMap<String, String>) -> &str {
    headers
        .get("anthropic-version")
        .map_or(versions::LEGACY, String::as_str)
}

/// Checks the route, the credentials and the headers of one request, and parses its body
/// (`Null` if not JSON); the body's own rules are [`check_body_under`]'s.
pub fn check_head(
    method: &str,
    path: &str,
    headers: &BTreeMap<String, String>,
    body: &[u8],
    credentials: &[String],
) -> (Value, Vec<String>) {
    let mut problems = Vec::new();
    // In the order the API checks: the route, the credentials, then the other headers.
    let route = path.split('?').next().unwrap_or_default();
    if route != "/v1/messages" {
        problems.push(format!(
            "{NO_ROUTE} {method} {route}; only POST /v1/messages exists"
        ));
    } else if method != "POST" {
        problems.push(format!(
            "{NOT_ALLOWED} {method} is not allowed on /v1/messages; use POST"
        ));
    }
    let sent = match headers.get("x-api-key") {
        Some(key) => Some(key.as_str()),
        None => headers
            .get("authorization")
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim),
    };
    if !sent.is_some_and(|c| credentials.iter().any(|known| known == c)) {
        problems.push(UNAUTHENTICATED.into());
    }
    let version = headers.get("anthropic-version");
    match version {
        None => problems.push("anthropic-version: header is required".into()),
        Some(version) if !versions::VERSIONS.contains(&version.as_str()) => {
            problems.push(versions::unknown_version(version))
        }
        Some(_) => {}
    }
    // A parameter such as `; charset=utf-8` may follow the media type, as the API allows.
    let media_type = headers
        .get("content-type")
        .and_then(|v| v.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase());
    if media_type.as_deref() != Some("application/json") {
        problems.push(format!(
            "content-type: must be application/json, got {}",
            headers
                .get("content-type")
                .map_or("null".to_owned(), |v| format!("{v:?}"))
        ));
    }
    match serde_json::from_slice(body) {
        Ok(v) => (v, problems),
        Err(e) => {
            problems.push(format!("the body is not JSON: {e}"));
            (Value::Null, problems)
        }
    }
}

/// The `anthropic-beta` header, split on commas.
pub fn betas_of(headers: &BTreeMap<String, String>) -> Vec<String> {
    headers
        .get("anthropic-beta")
        .map(|b| {
            b.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The API's words (with a 401 `authentication_error`) for a request without valid credentials.
pub const UNAUTHENTICATED: &str = "invalid x-api-key";

/// How a refusal for a path other than the one endpoint starts (a 404 `not_found_error`).
const NO_ROUTE: &str = "test server: no route";

/// How a refusal for a method other than POST starts (a 405 `invalid_request_error`).
const NOT_ALLOWED: &str = "test server: method";

/// The answer the API gives to a request refused for `problem`: 401 without valid credentials,
/// 404 on another path, 405 for another method (with `allow: POST`), else 400.
pub fn refusal(problem: &str) -> Step {
    if problem == UNAUTHENTICATED {
        Step::error(401, problem)
    } else if problem.starts_with(NO_ROUTE) {
        Step::error(404, problem)
    } else if problem.starts_with(NOT_ALLOWED) {
        Step::Error {
            status: 405,
            kind: "invalid_request_error".into(),
            message: problem.into(),
            headers: vec![("allow".into(), "POST".into())],
            details: None,
        }
    } else {
        Step::error(400, problem)
    }
}

const TOP_LEVEL: &[&str] = &[
    "model",
    "max_tokens",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "temperature",
    "top_k",
    "top_p",
    "stop_sequences",
    "stream",
    "metadata",
    "thinking",
    "service_tier",
    "cache_control",
    "output_config",
    "output_format",
    "context_management",
    "container",
    "inference_geo",
    "mcp_servers",
];

/// The API's words when code-called tools are answered without the container they run in.
pub const CONTAINER_REQUIRED: &str =
    "container_id is required when there are pending tool uses generated by code execution with tools.";

/// The API's words when a message other than a final assistant one is empty.
pub const EMPTY_MESSAGE: &str =
    "all messages must have non-empty content except for the optional final assistant message";

/// The body's fields, tools and messages, sent without `anthropic-beta`.
pub fn check_body(body: &Value) -> Vec<String> {
    check_body_with_betas(body, &[])
}

/// The body's fields, tools and messages, sent with these betas (which the beta features need)
/// under API version 2023-06-01.
pub fn check_body_with_betas(body: &Value, betas: &[String]) -> Vec<String> {
    check_body_under(body, betas, versions::LEGACY)
}

/// The body's fields, tools and messages, sent with these betas under API `version` (one this
/// server speaks).
pub fn check_body_under(body: &Value, betas: &[String], version: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(fields) = body.as_object() else {
        return vec!["the body is not an object".into()];
    };
    let removed =
        |key: &str| versions::has_removals(version) && versions::REMOVED_FIELDS.contains(&key);
    for key in fields.keys() {
        if !TOP_LEVEL.contains(&key.as_str()) || removed(key) {
            problems.push(versions::removed_field(key));
        }
    }
    if body["model"].as_str().is_none_or(|m| m.is_empty()) {
        problems.push("model: Field required".into());
    }
    if body["max_tokens"].as_u64().is_none_or(|n| n < 1) {
        problems.push(format!(
            "max_tokens: must be a positive integer, got {}",
            body["max_tokens"]
        ));
    }
    if let Some(t) = body.get("temperature") {
        if !t.as_f64().is_some_and(|t| (0.0..=1.0).contains(&t)) {
            problems.push(format!("temperature: must be a number in [0, 1], got {t}"));
        }
    }
    problems.extend(check_fields(body));
    problems.extend(check_output_fields(body, betas));
    if let Some(cm) = body.get("context_management").filter(|v| !v.is_null()) {
        problems.extend(check_context_management(cm, betas));
    }
    let (servers, server_problems) = check_mcp_servers(body, betas);
    problems.extend(server_problems);
    if let Some(tools) = body.get("tools") {
        problems.extend(check_tools(tools, betas));
    }
    if problems.is_empty() {
        problems.extend(check_mcp_toolsets(body, &servers));
    }
    if let Some(choice) = body.get("tool_choice") {
        problems.extend(check_tool_choice(choice, &offered_names(body)));
    }
    problems.extend(check_thinking_compatibility(body));
    match body["messages"].as_array() {
        Some(messages) if !messages.is_empty() => {
            problems.extend(check_shapes(messages, betas, &offered_names(body), version));
            if problems.is_empty() {
                let rules = [
                    check_pairing(messages),
                    check_server_pairing(messages),
                    check_mcp_pairing(messages),
                    if thinking_on(body) {
                        check_thinking_placement(messages)
                    } else {
                        check_no_final_thinking(messages)
                    },
                    check_pending_code_execution(body, messages),
                ];
                problems.extend(rules.into_iter().filter_map(Result::err).take(1));
            }
        }
        _ => problems.push("messages: must be a non-empty array".into()),
    }
    problems
}
