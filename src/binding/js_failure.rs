//! The failures of the checks the JS layer (lib/options.js) makes itself before a run starts (on JS values the
//! engine never sees), worded here with every other failure. JS describes the value; this says
//! what was wrong with it.

use super::options::list::JS_ONLY;
use crate::engine::RunError;

/// A check lib/options.js makes before a run starts, failed.
#[cfg_attr(feature = "node", napi_derive::napi(string_enum = "snake_case"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsProblem {
    /// `options` is not an object: the detail describes what it is.
    OptionsNotAnObject,
    /// An option JS keeps is not what it must be: the detail describes its value.
    BadOption,
    /// `JSON.stringify` of the prompt and options threw: the detail is its message.
    NotJson,
    /// The JS layer itself failed: the detail is the message thrown.
    Internal,
    /// `output` is a Standard Schema that gives no JSON Schema: the detail says why.
    BadOutput,
    /// The answer failed the `output` Standard Schema's `validate`: the detail is its issues,
    /// one per line.
    OutputIssues,
    /// The `output` Standard Schema's `validate` threw on the answer: the detail is what it threw.
    OutputCheckThrew,
    /// The run's signal fired while JS was still finishing the run (a Standard Schema's
    /// `validate` had not settled).
    Aborted,
}

/// The failure for `problem`; `option` names the option of a [`JsProblem::BadOption`].
pub fn js_failure(problem: JsProblem, detail: &str, option: Option<&str>) -> RunError {
    match problem {
        JsProblem::OptionsNotAnObject => RunError::invalid_request(format!(
            "options must be an object, got {detail}. Nothing was sent."
        )),
        JsProblem::BadOption => {
            let expected = JS_ONLY
                .iter()
                .find(|o| Some(o.name) == option)
                .and_then(|o| o.kind.expected());
            match (option, expected) {
                (Some(name), Some(expected)) => RunError::invalid_request(format!(
                    "Option {name} must be {expected}, got {detail}. Nothing was sent."
                )),
                _ => RunError::internal(&format!("option {option:?} has no check")),
            }
        }
        JsProblem::NotJson => RunError::invalid_request(format!(
            "prompt and options must be JSON-serialisable ({detail}). Nothing was sent."
        )),
        JsProblem::Internal => RunError::internal(detail),
        JsProblem::BadOutput => RunError::invalid_request(format!(
            "Option output {detail}. Nothing was sent."
        )),
        JsProblem::OutputIssues => crate::engine::output::answer_format::mismatch(detail),
        JsProblem::Aborted => RunError::aborted(),
        JsProblem::OutputCheckThrew => RunError::output_invalid(format!(
            "The output schema's validate threw on the model's answer ({detail}), so the answer could not be checked. \
             The answer is in error.text; what was thrown is error.cause."
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_js_check_has_its_message() {
        let cases = [
            (JsProblem::OptionsNotAnObject, "string x", None, "invalid_request", "options must be an object, got string x. Nothing was sent."),
            (JsProblem::BadOption, "number 1", Some("signal"), "invalid_request", "Option signal must be an AbortSignal, got number 1. Nothing was sent."),
            (JsProblem::BadOption, "an object", Some("onStepFinish"), "invalid_request", "Option onStepFinish must be a function, got an object. Nothing was sent."),
            (JsProblem::NotJson, "Do not know how to serialize a BigInt", None, "invalid_request", "prompt and options must be JSON-serialisable (Do not know how to serialize a BigInt). Nothing was sent."),
            (JsProblem::Internal, "boom", None, "unknown_error", "Internal error in anthropic-tool-calling: boom. Please report it."),
            (JsProblem::BadOption, "number 1", Some("context"), "unknown_error", "Internal error in anthropic-tool-calling: option Some(\"context\") has no check. Please report it."),
            (JsProblem::BadOutput, "is a zod 3 schema", None, "invalid_request", "Option output is a zod 3 schema. Nothing was sent."),
            (JsProblem::OutputCheckThrew, "TypeError: boom", None, "output_validation_error", "The output schema's validate threw on the model's answer (TypeError: boom), so the answer could not be checked. The answer is in error.text; what was thrown is error.cause."),
        ];
        for (problem, detail, option, code, message) in cases {
            let err = js_failure(problem, detail, option);
            assert_eq!((err.code.as_str(), err.message.as_str()), (code, message));
        }
    }
}
