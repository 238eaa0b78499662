//! The shape of the answer (`output`): the schema the API constrains the final answer with, and
//! the check of that answer against the full schema once it comes. The API only takes part of
//! JSON Schema, so what it is sent is looser (see `compatible.rs`); the answer is checked here
//! against everything the caller wrote.

use std::sync::Arc;

use jsonschema::Validator;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::engine::error::RunError;
use crate::engine::report::usage::Usage;
use crate::engine::run::model_reply::Reply;
use crate::engine::run::stop::StopReason;
use crate::engine::tools::schema;

use crate::engine::output::compatible::{self, Refs};

pub use crate::engine::json::ordered_value::Json;

/// An `output` schema, ready for a run: compiled for the check, and in the form the API takes.
#[derive(Clone)]
pub struct OutputFormat {
    validator: Arc<Validator>,
    /// `{"type":"json_schema","schema":…}`, the schema in the API's form.
    format: Box<RawValue>,
}

impl std::fmt::Debug for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputFormat")
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl OutputFormat {
    /// Reads an `output` schema (a JSON object, its members in the order the caller wrote
    /// them). The error says what is wrong with it, where.
    pub fn new(schema: &Json) -> Result<OutputFormat, String> {
        let full = schema.to_value();
        if !full.is_object() {
            return Err("a JSON Schema must be an object".to_owned());
        }
        compatible::check_refs(&full, Refs::Outside)?;
        let validator = schema::compile_checking_formats(&full)
            .map_err(|e| format!("not a valid JSON Schema: {e}"))?;
        let sent = compatible::api_form(schema)?;
        // Not through its text: the rewrite may nest one level deeper than serde reads.
        compatible::check_refs(&sent.to_value(), Refs::OutsideOrRecursive)?;
        let sent = sent.to_text();
        let format = format!(r#"{{"type":"json_schema","schema":{sent}}}"#);
        Ok(OutputFormat {
            validator: Arc::new(validator),
            format: RawValue::from_string(format).expect("written as JSON"),
        })
    }

    /// `output_config.format` as sent: `{ type: "json_schema", schema }`.
    pub fn format(&self) -> &RawValue {
        &self.format
    }

    /// The answer's value: the final reply's text, parsed and checked against the full schema.
    /// `usage` is what the run spent, for the error.
    pub fn read(
        &self,
        reply: &Reply,
        max_tokens: u32,
        usage: Usage,
    ) -> Result<Box<RawValue>, RunError> {
        if reply.stop == StopReason::Truncated {
            let what_to_do = if reply.stop_reason == "model_context_window_exceeded" {
                "the conversation filled the model's context window: shorten the history, or compact it".to_owned()
            } else {
                format!("raise maxTokens (now {max_tokens}), or ask for a shorter answer")
            };
            return Err(RunError::output_truncated(format!(
                "The model's answer was cut ({}) before it was complete, so it is not the JSON that output asks for; \
                 {what_to_do}.",
                reply.stop_reason
            ))
            .with_usage(usage));
        }
        let text = reply.text.trim();
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => {
                let why = e.to_string();
                let issues =
                    serde_json::json!([{ "message": format!("not JSON: {why}"), "path": [] }]);
                let likely = if reply.stop_reason == "stop_sequence" {
                    "It ended at one of stopSequences, which may have cut it"
                } else {
                    "A model or gateway without structured outputs may have ignored output_config.format"
                };
                return Err(RunError::output_invalid(format!(
                    "The model's answer is not JSON ({why}), so it does not match output. {likely}; the answer is in error.text."
                ))
                .with_answer(issues, reply.text.clone(), usage));
            }
        };
        let issues = schema::issues(&self.validator, &value);
        if !issues.listed.is_empty() {
            let listed = Value::Array(issues.listed.iter().map(schema::Issue::to_json).collect());
            return Err(mismatch(&issues.lines().join("\n")).with_answer(
                listed,
                reply.text.clone(),
                usage,
            ));
        }
        Ok(RawValue::from_string(text.to_owned()).expect("parsed as JSON above"))
    }
}

/// `output_validation_error` for an answer that fails its schema; `issues` one per line
/// (`field: why`). A Standard Schema's own issues are worded the same way.
pub fn mismatch(issues: &str) -> RunError {
    RunError::output_invalid(format!(
        "The model's answer does not match output:\n{issues}\nThe answer is in error.text. The API cannot enforce \
         every constraint (lengths, ranges and patterns are only described to the model): describe what you need \
         in the prompt, or loosen the schema."
    ))
}
