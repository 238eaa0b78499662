//! Whether a scripted final answer honours the request's structured-output format. The real API
//! constrains the model's text to the schema, so a reply that does not match it is never something
//! the API sends: a test that scripts one by mistake gets a 500 naming why (and a recorded
//! violation), not a quiet pass. A reply built with [`Step::ignoring_format`] is sent anyway, for
//! tests of a client reading a broken answer. As the JS stand-in's `stand-in/conforms.mjs`.
//!
//! [`Step::ignoring_format`]: super::step::Step::ignoring_format

use jsonschema::Draft;
use serde_json::Value;

use super::rules::format_schema_of;
use super::step::Step;

/// How the 500 for a final answer that misses the request's format starts.
pub const FORMAT_MISMATCH: &str =
    "mock-api: the scripted answer does not match output_config.format: ";

/// Whether a reply is a final answer: it ends the turn (or hit a stop sequence) and calls no tool.
pub fn is_final_answer(reply: &Value) -> bool {
    let calls = reply["content"]
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_use"));
    matches!(
        reply["stop_reason"].as_str(),
        Some("end_turn" | "stop_sequence")
    ) && !calls
}

/// The text of a reply's text blocks, joined as a client reads the answer.
pub fn answer_text(reply: &Value) -> String {
    reply["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect()
}

/// Why `value` does not match `schema` (`at /path: reason`), with formats checked.
pub fn schema_mismatch(schema: &Value, value: &Value) -> Option<String> {
    let validator = match jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
    {
        Ok(validator) => validator,
        Err(e) => return Some(format!("the schema does not compile: {e}")),
    };
    let error = validator.validate(value).err()?;
    let path = error.instance_path().as_str();
    Some(format!(
        "at {}: {error}",
        if path.is_empty() { "/" } else { path }
    ))
}

/// Why the reply `reply` to `request` breaks the request's format (the reason after
/// [`FORMAT_MISMATCH`]): none without a format, for a reply that is not a final answer (tool
/// calls, a refusal, a cut answer), or for one that matches.
pub fn answer_mismatch(request: &Value, reply: &Value) -> Option<String> {
    let schema = format_schema_of(request)?;
    if !is_final_answer(reply) {
        return None;
    }
    match serde_json::from_str::<Value>(&answer_text(reply)) {
        Ok(value) => schema_mismatch(schema, &value),
        Err(e) => Some(format!(
            "the text is not JSON ({e}); script it as JSON, or build the step with .ignoring_format()"
        )),
    }
}

/// The step's answer to `request` breaks its format: why, with [`FORMAT_MISMATCH`] before it.
pub fn misfit(step: &Step, request: &Value) -> Option<String> {
    let reply = match step {
        Step::Reply(reply) => reply,
        Step::ReplyWith(_, options) if options.ignore_format => return None,
        Step::ReplyWith(reply, _) => reply,
        _ => return None,
    };
    answer_mismatch(request, reply).map(|why| format!("{FORMAT_MISMATCH}{why}"))
}
