//! `tools`: custom tools with their name and schema, Anthropic-defined tools with their fixed
//! names and own fields, unique names.

use std::collections::HashSet;

use serde_json::Value;

use super::fields::cache_control;

const COMMON_TOOL_FIELDS: &[&str] = &[
    "type",
    "name",
    "cache_control",
    "defer_loading",
    "allowed_callers",
    "strict",
];

/// An Anthropic-defined tool type: the name it must have and the fields it adds to the common ones.
fn typed_tool(kind: &str) -> Option<(&'static str, &'static [&'static str])> {
    const SEARCH: &[&str] = &[
        "max_uses",
        "allowed_domains",
        "blocked_domains",
        "user_location",
    ];
    const FETCH: &[&str] = &[
        "max_uses",
        "allowed_domains",
        "blocked_domains",
        "citations",
        "max_content_tokens",
    ];
    const SCREEN: &[&str] = &[
        "display_width_px",
        "display_height_px",
        "display_number",
        "enable_zoom",
    ];
    Some(match kind {
        "web_search_20250305" | "web_search_20260209" => ("web_search", SEARCH),
        "web_fetch_20250910" | "web_fetch_20260209" => ("web_fetch", FETCH),
        "code_execution_20250522" | "code_execution_20250825" | "code_execution_20260120" => {
            ("code_execution", &[])
        }
        "tool_search_tool_regex_20251119" => ("tool_search_tool_regex", &[]),
        "tool_search_tool_bm25_20251119" => ("tool_search_tool_bm25", &[]),
        "bash_20241022" | "bash_20250124" => ("bash", &[]),
        "text_editor_20241022" | "text_editor_20250124" => ("str_replace_editor", &[]),
        "text_editor_20250429" => ("str_replace_based_edit_tool", &[]),
        "text_editor_20250728" => ("str_replace_based_edit_tool", &["max_characters"]),
        "memory_20250818" => ("memory", &[]),
        "computer_20241022" | "computer_20250124" | "computer_20251124" => ("computer", SCREEN),
        _ => return None,
    })
}

pub(super) fn check_tools(tools: &Value) -> Vec<String> {
    let Some(tools) = tools.as_array() else {
        return vec!["tools: must be an array".into()];
    };
    let mut problems = Vec::new();
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        let name = tool["name"].as_str().unwrap_or_default();
        let kind = tool["type"].as_str().filter(|k| *k != "custom");
        if let Some(kind) = kind {
            let Some((fixed, extra)) = typed_tool(kind) else {
                problems.push(format!(
                    "tools.{i}: Input tag '{kind}' found using 'type' does not match any of the expected tags: 'custom', 'web_search_20250305', …"
                ));
                continue;
            };
            if name != fixed {
                problems.push(format!("tools.{i}.{kind}.name: Input should be '{fixed}'"));
            }
            if let Some(fields) = tool.as_object() {
                for key in fields.keys() {
                    if !COMMON_TOOL_FIELDS.contains(&key.as_str()) && !extra.contains(&key.as_str())
                    {
                        problems.push(format!(
                            "tools.{i}.{kind}.{key}: Extra inputs are not permitted"
                        ));
                    }
                }
            }
            if tool["max_uses"].as_u64() == Some(0)
                || tool
                    .get("max_uses")
                    .is_some_and(|m| !m.is_u64() && !m.is_null())
            {
                problems.push(format!(
                    "tools.{i}.{kind}.max_uses: Input should be a positive integer"
                ));
            }
            if tool["allowed_domains"].is_array() && tool["blocked_domains"].is_array() {
                problems.push(format!(
                    "tools.{i}.{kind}: Cannot specify both allowed_domains and blocked_domains"
                ));
            }
        } else {
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
        }
        if let Some(Err(why)) = tool
            .get("cache_control")
            .map(|c| cache_control(c, &format!("tools.{i}.cache_control")))
        {
            problems.push(why);
        }
        if !names.insert(name.to_owned()) {
            problems.push(format!("tools: Tool names must be unique ({name})"));
        }
    }
    problems
}
