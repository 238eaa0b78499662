//! `tools`: custom tools with their name, schema and known fields, Anthropic-defined tools with
//! their fixed names and own fields, unique names; and a `tool_choice` that names an offered tool.

use std::collections::HashSet;

use serde_json::Value;

use super::fields::{cache_control, integer_at_least, tagged};
use super::mcp_connector::toolset_problems;

/// The fields a custom tool may carry.
const CUSTOM_TOOL_FIELDS: &[&str] = &[
    "type",
    "name",
    "description",
    "input_schema",
    "cache_control",
    "strict",
    "defer_loading",
    "allowed_callers",
    "input_examples",
];

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

/// `tools`; `betas`: the request's, which an `mcp_toolset` (a server's tools, which have no name
/// here) needs.
pub(super) fn check_tools(tools: &Value, betas: &[String]) -> Vec<String> {
    let Some(tools) = tools.as_array() else {
        return vec!["tools: must be an array".into()];
    };
    let mut problems = Vec::new();
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        if tool["type"] == "mcp_toolset" {
            problems.extend(toolset_problems(tool, i, betas));
            continue;
        }
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
            for field in ["max_uses", "max_content_tokens", "max_characters"] {
                if let Some(v) = tool.get(field).filter(|v| !v.is_null()) {
                    problems.extend(integer_at_least(v, 1, &format!("tools.{i}.{kind}.{field}")));
                }
            }
            // A computer tool must say how large its screen is.
            for field in ["display_width_px", "display_height_px"] {
                if kind.starts_with("computer") || tool.get(field).is_some() {
                    problems.extend(integer_at_least(
                        &tool[field],
                        1,
                        &format!("tools.{i}.{kind}.{field}"),
                    ));
                }
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
            let at = format!("tools.{i}.custom");
            if let Some(fields) = tool.as_object() {
                for key in fields.keys() {
                    if !CUSTOM_TOOL_FIELDS.contains(&key.as_str()) {
                        problems.push(format!("{at}.{key}: Extra inputs are not permitted"));
                    }
                }
            }
            if tool.get("description").is_some_and(|d| !d.is_string()) {
                problems.push(format!("{at}.description: Input should be a valid string"));
            }
            match tool.get("input_schema") {
                None => problems.push(format!("{at}.input_schema: Field required")),
                Some(schema) if schema["type"] != "object" => {
                    problems.push(format!("{at}.input_schema.type: Input should be 'object'"));
                }
                Some(_) => {}
            }
            if let Some(examples) = tool.get("input_examples") {
                if !examples
                    .as_array()
                    .is_some_and(|e| e.iter().all(Value::is_object))
                {
                    problems.push(format!(
                        "{at}.input_examples: Input should be a valid list of dictionaries"
                    ));
                }
            }
        }
        let at = match kind {
            Some(kind) => format!("tools.{i}.{kind}"),
            None => format!("tools.{i}.custom"),
        };
        for field in ["strict", "defer_loading"] {
            if tool.get(field).is_some_and(|v| !v.is_boolean()) {
                problems.push(format!("{at}.{field}: Input should be a valid boolean"));
            }
        }
        if let Some(callers) = tool.get("allowed_callers") {
            if !callers
                .as_array()
                .is_some_and(|c| c.iter().all(Value::is_string))
            {
                problems.push(format!(
                    "{at}.allowed_callers: Input should be a valid list of strings"
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

/// The names of the tools the request offers.
pub(super) fn offered_names(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default()
}

/// `tool_choice`: a known type with only its own fields, and where it forces a tool, tools to
/// choose from (by name, one the request offers).
pub(super) fn check_tool_choice(choice: &Value, offered: &[&str]) -> Vec<String> {
    let Some(fields) = choice.as_object() else {
        return vec!["tool_choice: Input should be a valid dictionary".into()];
    };
    let (kind, mut problems) = match tagged(
        "tool_choice",
        fields,
        &[
            ("auto", &["type", "disable_parallel_tool_use"]),
            ("any", &["type", "disable_parallel_tool_use"]),
            ("tool", &["type", "name", "disable_parallel_tool_use"]),
            ("none", &["type"]),
        ],
    ) {
        Ok(read) => read,
        Err(problem) => return vec![problem],
    };
    if fields
        .get("disable_parallel_tool_use")
        .is_some_and(|v| !v.is_boolean())
    {
        problems.push(format!(
            "tool_choice.{kind}.disable_parallel_tool_use: Input should be a valid boolean"
        ));
    }
    if kind == "tool" {
        match fields.get("name") {
            None => problems.push("tool_choice.tool.name: Field required".into()),
            Some(name) if !name.is_string() => {
                problems.push("tool_choice.tool.name: Input should be a valid string".into());
            }
            Some(_) => {}
        }
    }
    if (kind == "any" || kind == "tool") && offered.is_empty() {
        problems.push(format!(
            "tool_choice: tool_choice.type '{kind}' may only be specified while providing tools."
        ));
    } else if let Some(name) = choice["name"].as_str().filter(|_| kind == "tool") {
        if !offered.contains(&name) {
            problems.push(format!(
                "tool_choice.tool.name: tool '{name}' is not one of the offered tools: {}",
                offered.join(", ")
            ));
        }
    }
    problems
}
