//! Mid-conversation tool changes: messages with `role: "system"` holding `tool_addition` /
//! `tool_removal` blocks (a beta), which change the offered tools from that point on; and the
//! same blocks as a compaction block's `tool_changes`.

use serde_json::Value;

use super::fields::{cache_control, extra_keys, unknown_tag};

pub const TOOL_CHANGES_BETA: &str = "mid-conversation-tool-changes-2026-07-01";
pub(super) const TOOL_CHANGE_TYPES: &[&str] = &["tool_addition", "tool_removal"];

const SYSTEM_CONTENT: &str =
    "a `system` message must hold a non-empty list of `tool_addition` / `tool_removal` blocks";

/// One `tool_addition` / `tool_removal` block: `{type, tool: {type: "tool_reference", name}}`.
pub(super) fn tool_change_problems(block: &Value, at: &str) -> Vec<String> {
    let Some(fields) = block.as_object() else {
        return vec![format!("{at}: Input should be a valid dictionary")];
    };
    if !TOOL_CHANGE_TYPES.iter().any(|t| block["type"] == *t) {
        return vec![unknown_tag(at, &block["type"], TOOL_CHANGE_TYPES)];
    }
    let mut problems = extra_keys(fields, &["type", "tool", "cache_control"], at);
    match fields.get("tool") {
        None => problems.push(format!("{at}.tool: Field required")),
        Some(tool) => match tool.as_object() {
            None => problems.push(format!("{at}.tool: Input should be a valid dictionary")),
            Some(_) if tool["type"] != "tool_reference" => {
                problems.push(unknown_tag(
                    &format!("{at}.tool"),
                    &tool["type"],
                    &["tool_reference"],
                ));
            }
            Some(reference) => {
                problems.extend(extra_keys(
                    reference,
                    &["type", "name"],
                    &format!("{at}.tool"),
                ));
                match reference.get("name") {
                    None => problems.push(format!("{at}.tool.name: Field required")),
                    Some(name) if !name.is_string() => {
                        problems.push(format!("{at}.tool.name: Input should be a valid string"));
                    }
                    Some(_) => {}
                }
            }
        },
    }
    if let Some(Err(why)) = fields
        .get("cache_control")
        .map(|c| cache_control(c, &format!("{at}.cache_control")))
    {
        problems.push(why);
    }
    problems
}

/// A compaction block's `tool_changes`: null, or a list of tool change blocks.
pub(super) fn tool_change_list(value: &Value, at: &str) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(blocks) => blocks
            .iter()
            .enumerate()
            .flat_map(|(k, block)| tool_change_problems(block, &format!("{at}.{k}")))
            .collect(),
        _ => vec![format!("{at}: Input should be a valid list")],
    }
}

/// Message `n`, a `system` one: with the beta (without it the API knows only user and assistant),
/// a non-empty list of tool changes, each naming one of the request's `tools` (`offered`).
pub(super) fn system_message_problems(
    n: usize,
    message: &Value,
    betas: &[String],
    offered: &[&str],
) -> Vec<String> {
    if !betas.iter().any(|b| b == TOOL_CHANGES_BETA) {
        return vec![format!(
            "messages.{n}.role: Input should be 'user' or 'assistant'"
        )];
    }
    let blocks = match message.get("content") {
        None => return vec![format!("messages.{n}.content: Field required")],
        Some(Value::Array(blocks)) if !blocks.is_empty() => blocks,
        Some(_) => return vec![format!("messages.{n}.content: {SYSTEM_CONTENT}")],
    };
    let mut problems = Vec::new();
    for (m, block) in blocks.iter().enumerate() {
        let at = format!("messages.{n}.content.{m}");
        let shape = tool_change_problems(block, &at);
        if !shape.is_empty() {
            problems.extend(shape);
            continue;
        }
        let name = block["tool"]["name"].as_str().unwrap_or_default();
        if !offered.contains(&name) {
            problems.push(format!(
                "{at}.tool.name: Tool '{name}' is not in `tools`; a `{}` may only name a tool the request defines",
                block["type"].as_str().unwrap_or_default()
            ));
        }
    }
    problems
}
