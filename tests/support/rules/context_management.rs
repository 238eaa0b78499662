//! `context_management`: the edits of a long loop (server-side compaction, clearing old tool uses
//! and thinking), each with its own fields, and each needing its beta in `anthropic-beta`.

use serde_json::Value;

use super::fields::{extra_keys, integer_at_least, unknown_tag};

pub const COMPACT_BETA: &str = "compact-2026-01-12";
pub const CONTEXT_MANAGEMENT_BETA: &str = "context-management-2025-06-27";

/// Each edit type: the beta it needs and the fields it takes, in the API's order of tags.
const EDITS: &[(&str, &str, &[&str])] = &[
    (
        "compact_20260112",
        COMPACT_BETA,
        &["type", "trigger", "pause_after_compaction", "instructions"],
    ),
    (
        "clear_tool_uses_20250919",
        CONTEXT_MANAGEMENT_BETA,
        &[
            "type",
            "trigger",
            "keep",
            "clear_at_least",
            "exclude_tools",
            "clear_tool_inputs",
        ],
    ),
    (
        "clear_thinking_20251015",
        CONTEXT_MANAGEMENT_BETA,
        &["type", "keep"],
    ),
];

/// The API's words when `betas` lacks the `beta` that `what` (at `at`) needs.
pub(super) fn need_beta(betas: &[String], beta: &str, at: &str, what: &str) -> Option<String> {
    (!betas.iter().any(|b| b == beta)).then(|| {
        format!("{at}: {what} requires the `{beta}` beta; add it to the `anthropic-beta` header")
    })
}

/// A `{type, value}` count such as a trigger: `type` one of `types`, `value` an integer of at
/// least `min`.
fn count(v: &Value, at: &str, types: &[&str], min: i64) -> Vec<String> {
    let Some(fields) = v.as_object() else {
        return vec![format!("{at}: Input should be a valid dictionary")];
    };
    if !types.iter().any(|t| v["type"] == *t) {
        return vec![unknown_tag(at, &v["type"], types)];
    }
    let mut problems = extra_keys(fields, &["type", "value"], at);
    match fields.get("value") {
        None => problems.push(format!("{at}.value: Field required")),
        Some(value) => problems.extend(integer_at_least(value, min, &format!("{at}.value"))),
    }
    problems
}

fn strings(v: &Value) -> bool {
    v.as_array().is_some_and(|a| a.iter().all(Value::is_string))
}

/// The first entry of a list that is not a string, with the API's words.
fn string_list(v: &Value, at: &str) -> Option<String> {
    let Some(items) = v.as_array() else {
        return Some(format!("{at}: Input should be a valid list"));
    };
    let k = items.iter().position(|s| !s.is_string())?;
    Some(format!("{at}.{k}: Input should be a valid string"))
}

fn edit_problems(edit: &Value, at: &str, betas: &[String]) -> Vec<String> {
    let Some(fields) = edit.as_object() else {
        return vec![format!("{at}: Input should be a valid dictionary")];
    };
    let kind = &edit["type"];
    if !kind.is_string() {
        return vec![format!("{at}.type: Input should be a valid string")];
    }
    let Some((kind, beta, allowed)) = EDITS.iter().find(|(tag, _, _)| kind == *tag) else {
        let tags: Vec<&str> = EDITS.iter().map(|(tag, _, _)| *tag).collect();
        return vec![unknown_tag(at, kind, &tags)];
    };
    if let Some(problem) = need_beta(betas, beta, at, &format!("the `{kind}` edit")) {
        return vec![problem];
    }
    let mut problems = extra_keys(fields, allowed, at);
    let present = |key: &str| fields.get(key).filter(|v| !v.is_null());
    let under = |key: &str| format!("{at}.{key}");
    match *kind {
        "compact_20260112" => {
            if let Some(trigger) = present("trigger") {
                problems.extend(count(trigger, &under("trigger"), &["input_tokens"], 1));
            }
            if fields
                .get("pause_after_compaction")
                .is_some_and(|v| !v.is_boolean())
            {
                problems.push(format!(
                    "{}: Input should be a valid boolean",
                    under("pause_after_compaction")
                ));
            }
            if present("instructions").is_some_and(|v| !v.is_string()) {
                problems.push(format!(
                    "{}: Input should be a valid string",
                    under("instructions")
                ));
            }
        }
        "clear_tool_uses_20250919" => {
            if let Some(trigger) = fields.get("trigger") {
                let types = ["input_tokens", "tool_uses"];
                problems.extend(count(trigger, &under("trigger"), &types, 1));
            }
            if let Some(keep) = fields.get("keep") {
                problems.extend(count(keep, &under("keep"), &["tool_uses"], 0));
            }
            if let Some(least) = present("clear_at_least") {
                problems.extend(count(least, &under("clear_at_least"), &["input_tokens"], 0));
            }
            if let Some(tools) = present("exclude_tools") {
                problems.extend(string_list(tools, &under("exclude_tools")));
            }
            // A flag for every tool's inputs, or the names of the tools whose inputs go.
            if present("clear_tool_inputs").is_some_and(|v| !v.is_boolean() && !strings(v)) {
                problems.push(format!(
                    "{}: Input should be a valid boolean or a list of strings",
                    under("clear_tool_inputs")
                ));
            }
        }
        _ => match fields.get("keep") {
            None => {}
            Some(keep) if keep == "all" || keep["type"] == "all" => {
                if let Some(all) = keep.as_object() {
                    problems.extend(extra_keys(all, &["type"], &under("keep.all")));
                }
            }
            Some(keep) if keep.is_object() => {
                let types = ["thinking_turns", "all"];
                problems.extend(count(keep, &under("keep"), &types, 0));
            }
            Some(_) => problems.push(format!(
                "{}: Input should be 'all' or a valid dictionary",
                under("keep")
            )),
        },
    }
    problems
}

/// `context_management`: only `edits`, each a known edit with its fields and its beta.
pub(super) fn check_context_management(v: &Value, betas: &[String]) -> Vec<String> {
    let Some(fields) = v.as_object() else {
        return vec!["context_management: Input should be a valid dictionary".into()];
    };
    let mut problems = extra_keys(fields, &["edits"], "context_management");
    match fields.get("edits") {
        None => {}
        Some(Value::Array(edits)) => {
            for (k, edit) in edits.iter().enumerate() {
                let at = format!("context_management.edits.{k}");
                problems.extend(edit_problems(edit, &at, betas));
            }
        }
        Some(_) => problems.push("context_management.edits: Input should be a valid list".into()),
    }
    problems
}
