//! `output_config` (effort, the structured-output format, the task budget) and the deprecated
//! top-level `output_format`, the older spelling of `output_config.format`. Worded as the JS
//! stand-in's `stand-in/rules/output-format.mjs`.

use serde_json::Value;

use super::context_management::need_beta;
use super::fields::{extra_keys, integer_at_least, unknown_tag};
use super::schema_subset::check_schema_subset;

pub const TASK_BUDGETS_BETA: &str = "task-budgets-2026-03-13";
pub const EFFORTS: &[&str] = &["low", "medium", "high", "xhigh", "max"];

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|v| !v.is_null())
}

fn first(problems: Vec<String>) -> Result<(), String> {
    problems.into_iter().next().map_or(Ok(()), Err)
}

/// `{type: "json_schema", schema}`, its schema inside the subset; `at` names the field.
fn check_format(format: &Value, at: &str) -> Result<(), String> {
    let fields = format
        .as_object()
        .ok_or_else(|| format!("{at}: Input should be a valid dictionary"))?;
    if format["type"] != "json_schema" {
        return Err(unknown_tag(at, &format["type"], &["json_schema"]));
    }
    first(extra_keys(fields, &["type", "schema"], at))?;
    let schema = fields
        .get("schema")
        .ok_or_else(|| format!("{at}.schema: Field required"))?;
    if !schema.is_object() {
        return Err(format!("{at}.schema: Input should be a valid dictionary"));
    }
    check_schema_subset(schema, &format!("{at}.schema"))
}

fn check_task_budget(budget: &Value, betas: &[String]) -> Result<(), String> {
    let at = "output_config.task_budget";
    let fields = budget
        .as_object()
        .ok_or_else(|| format!("{at}: Input should be a valid dictionary"))?;
    if let Some(problem) = need_beta(betas, TASK_BUDGETS_BETA, at, "a task budget") {
        return Err(problem);
    }
    first(extra_keys(fields, &["type", "total", "remaining"], at))?;
    if budget["type"] != "tokens" {
        return Err(format!("{at}.type: Input should be 'tokens'"));
    }
    let total = fields
        .get("total")
        .ok_or_else(|| format!("{at}.total: Field required"))?;
    first(
        integer_at_least(total, 1, &format!("{at}.total"))
            .into_iter()
            .collect(),
    )?;
    if let Some(remaining) = present(budget, "remaining") {
        first(
            integer_at_least(remaining, 0, &format!("{at}.remaining"))
                .into_iter()
                .collect(),
        )?;
    }
    Ok(())
}

fn check(body: &Value, betas: &[String]) -> Result<(), String> {
    if let Some(config) = body.get("output_config") {
        let fields = config
            .as_object()
            .ok_or("output_config: Input should be a valid dictionary")?;
        first(extra_keys(
            fields,
            &["effort", "format", "task_budget"],
            "output_config",
        ))?;
        if let Some(effort) = present(config, "effort") {
            if !EFFORTS.iter().any(|e| effort == e) {
                let (last, rest) = EFFORTS.split_last().expect("efforts");
                let rest: Vec<String> = rest.iter().map(|e| format!("'{e}'")).collect();
                return Err(format!(
                    "output_config.effort: Input should be {} or '{last}'",
                    rest.join(", ")
                ));
            }
        }
        if let Some(format) = present(config, "format") {
            check_format(format, "output_config.format")?;
        }
        if let Some(budget) = present(config, "task_budget") {
            check_task_budget(budget, betas)?;
        }
    }
    if let Some(format) = present(body, "output_format") {
        if present(&body["output_config"], "format").is_some() {
            return Err("output_format: cannot be used together with `output_config.format`; `output_format` is deprecated, send only `output_config.format`".into());
        }
        check_format(format, "output_format")?;
    }
    Ok(())
}

/// `output_config` and `output_format`; `betas`: the request's `anthropic-beta` names.
pub(super) fn check_output_fields(body: &Value, betas: &[String]) -> Vec<String> {
    check(body, betas).err().into_iter().collect()
}

/// The schema the request's answer must match (`output_config.format`, else `output_format`).
pub fn format_schema_of(body: &Value) -> Option<&Value> {
    let format = match &body["output_config"]["format"] {
        Value::Object(_) => &body["output_config"]["format"],
        _ => &body["output_format"],
    };
    (format["type"] == "json_schema" && format["schema"].is_object()).then(|| &format["schema"])
}
