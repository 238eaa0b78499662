//! What the real Messages API refuses, checked on every request the engine sends
//! (see /work/shared/ANTHROPIC_API.md). Messages are the API's own where it has one.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

/// Checks one request; returns its parsed body (`Null` if not JSON) and every problem found.
pub fn check_request(
    method: &str,
    path: &str,
    headers: &BTreeMap<String, String>,
    body: &[u8],
) -> (Value, Vec<String>) {
    let mut problems = Vec::new();
    if method != "POST" || path != "/v1/messages" {
        problems.push(format!("{method} {path}: expected POST /v1/messages"));
    }
    if headers.get("content-type").map(String::as_str) != Some("application/json") {
        problems.push(format!(
            "content-type is {:?}, expected application/json",
            headers.get("content-type")
        ));
    }
    if !headers.contains_key("anthropic-version") {
        problems.push("anthropic-version: header is required".into());
    }
    let bearer = headers
        .get("authorization")
        .is_some_and(|v| v.starts_with("Bearer "));
    if !headers.contains_key("x-api-key") && !bearer {
        problems.push("x-api-key header is required".into());
    }
    let body: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("the body is not JSON: {e}"));
            return (Value::Null, problems);
        }
    };
    problems.extend(check_body(&body));
    (body, problems)
}

/// The body's fields, tools and messages.
pub fn check_body(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if !body.is_object() {
        return vec!["the body is not an object".into()];
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
    if let Some(choice) = body.get("tool_choice") {
        match choice["type"].as_str() {
            Some("auto" | "any" | "none") => {}
            Some("tool") if choice["name"].is_string() => {}
            _ => problems.push(format!("tool_choice: invalid {choice}")),
        }
    }
    if let Some(tools) = body.get("tools") {
        problems.extend(check_tools(tools));
    }
    match body["messages"].as_array() {
        Some(messages) if !messages.is_empty() => {
            problems.extend(check_shapes(messages));
            if problems.is_empty() {
                if let Err(why) = check_pairing(messages) {
                    problems.push(why);
                }
            }
        }
        _ => problems.push("messages: must be a non-empty array".into()),
    }
    problems
}

fn check_tools(tools: &Value) -> Vec<String> {
    let Some(tools) = tools.as_array() else {
        return vec!["tools: must be an array".into()];
    };
    let mut problems = Vec::new();
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        let name = tool["name"].as_str().unwrap_or_default();
        let valid = (1..=128).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            problems.push(format!(
                "tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            ));
        }
        if tool["input_schema"]["type"] != "object" {
            problems.push(format!(
                "tools.{i}.custom.input_schema.type: Input should be 'object'"
            ));
        }
        if !names.insert(name.to_owned()) {
            problems.push(format!("tools: Tool names must be unique ({name})"));
        }
    }
    problems
}

/// Roles and content blocks are well-formed.
fn check_shapes(messages: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    for (n, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role != "user" && role != "assistant" {
            problems.push(format!(
                "messages.{n}.role: Input should be 'user' or 'assistant'"
            ));
        }
        let content = &message["content"];
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
                (_, Some("text")) if block["text"].is_string() => {}
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
                ("user", Some("tool_result")) => {
                    if !block["tool_use_id"].is_string() {
                        problems.push(format!("{at}.tool_result.tool_use_id: Field required"));
                    }
                    let content_ok = match block.get("content") {
                        None | Some(Value::String(_)) => true,
                        Some(Value::Array(items)) => items
                            .iter()
                            .all(|i| i["type"] == "text" || i["type"] == "image"),
                        Some(_) => false,
                    };
                    if !content_ok {
                        problems.push(format!(
                            "{at}.tool_result.content: must be a string or text/image blocks"
                        ));
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

fn blocks(message: &Value) -> &[Value] {
    message["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn ids_of<'a>(blocks: &'a [Value], kind: &str, field: &str) -> Vec<&'a str> {
    blocks
        .iter()
        .filter(|b| b["type"] == kind)
        .filter_map(|b| b[field].as_str())
        .collect()
}

/// The pairing rules of `tool_use` and `tool_result`; the error is the API's 400 message.
pub fn check_pairing(messages: &[Value]) -> Result<(), String> {
    let mut seen = HashSet::new();
    for (n, message) in messages.iter().enumerate() {
        let uses = ids_of(blocks(message), "tool_use", "id");
        for id in &uses {
            if !seen.insert(*id) {
                return Err(format!(
                    "messages.{n}: `tool_use` ids must be unique ({id})"
                ));
            }
        }
        if !uses.is_empty() {
            let next = messages.get(n + 1).filter(|m| m["role"] == "user");
            let next_blocks = next.map(blocks).unwrap_or(&[]);
            let results = ids_of(next_blocks, "tool_result", "tool_use_id");
            let missing: Vec<&str> = uses
                .iter()
                .copied()
                .filter(|id| !results.contains(id))
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. \
                     Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    missing.join(", ")
                ));
            }
            let leading = next_blocks
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .count();
            if leading < uses.len() {
                return Err(format!(
                    "messages.{}: Did not find {} `tool_result` block(s) at the beginning of this message. \
                     Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
                    n + 1,
                    uses.len()
                ));
            }
        }
        if message["role"] == "user" {
            let previous_uses = match n.checked_sub(1).map(|p| &messages[p]) {
                Some(p) if p["role"] == "assistant" => ids_of(blocks(p), "tool_use", "id"),
                _ => Vec::new(),
            };
            let mut answered = HashSet::new();
            for (m, block) in blocks(message)
                .iter()
                .enumerate()
                .filter(|(_, b)| b["type"] == "tool_result")
            {
                let id = block["tool_use_id"].as_str().unwrap_or_default();
                if !previous_uses.contains(&id) {
                    return Err(format!(
                        "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. \
                         Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    ));
                }
                if !answered.insert(id) {
                    return Err(format!(
                        "messages.{n}.content.{m}: `tool_result` ids must be unique ({id})"
                    ));
                }
            }
        }
    }
    Ok(())
}
