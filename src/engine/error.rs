//! Every way a run can fail, and the one place each failure gets its code.
//!
//! The codes are what a user branches on, so they are decided here and nowhere else: the rest of
//! the engine (and the binding) never names a code. It calls the constructor named for what went
//! wrong — [`RunError::http`], [`RunError::network`], [`RunError::aborted`],
//! [`RunError::internal`] … — which picks the code, records what is known (the status, the
//! request id, the tool at fault) and writes the sentence that tells the user what to do.

use reqwest::StatusCode;
use serde::Serialize;

use crate::engine::report::calls::ToolCall;
use crate::engine::report::usage::Usage;

mod api_said;
mod aws_failures;
mod chain;
mod code;
mod wire_failures;

pub use chain::{source_chain, Chain};
pub use code::{twin_status, ErrorCode};

/// A thread id as a message quotes it: at most 200 characters (the longest id taken).
fn cut_id(id: &str) -> String {
    id.chars().take(200).collect()
}

/// A run's failure: a code to branch on and a sentence for a person, plus what is known
/// (the HTTP status, the request id, the tool at fault, the tool calls made so far).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    /// What kind of failure this is.
    pub code: ErrorCode,
    /// What failed, with the concrete value, and what to do. Never holds the API key.
    pub message: String,
    /// Seconds the API asked us to wait (with `rate_limited` / `overloaded`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<f64>,
    /// The tool at fault (with the tool error codes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The `tool_use` id of the failed call, so the binding can attach what was thrown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The HTTP status of the API's answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The API's `request-id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The `error.details.error_code` of the API's refusal (`thread_not_found`,
    /// `image_dimensions_too_large` …): a stable code naming the cause, to branch on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_error_code: Option<String>,
    /// Every tool call made before the run failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The tokens the run spent, where that is the point (`budget_exceeded`, an answer that
    /// does not match `output`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The issues of an answer that does not match `output`: `[{ message, path }]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<serde_json::Value>,
    /// The answer that does not match `output`, as the model wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The run's id in its store (a durable run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// How every internal error's sentence starts: a bug of ours…
const INTERNAL: &str = "Internal error in anthropic-tool-calling";
/// …which we ask to hear of.
const PLEASE_REPORT: &str = "Please report it.";

/// The one sentence of an internal error, with `detail` (what happened) in its middle.
fn internal_sentence(detail: &str) -> String {
    format!("{INTERNAL}{detail}. {PLEASE_REPORT}")
}

impl RunError {
    /// The one way an error is made: private, so a code is only ever given in this file.
    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RunError {
            code,
            message: message.into(),
            retry_after: None,
            tool_name: None,
            tool_use_id: None,
            status: None,
            request_id: None,
            api_error_code: None,
            tool_calls: Vec::new(),
            usage: None,
            cause: None,
            text: None,
            run_id: None,
        }
    }

    /// `output_validation_error`: the final answer is not JSON, or does not match the `output`
    /// schema; `message` says where and why. Say what the answer was with
    /// [`RunError::with_answer`].
    pub fn output_invalid(message: impl Into<String>) -> Self {
        RunError::new(ErrorCode::OutputValidationError, message)
    }

    /// The tokens the run spent.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// The answer that did not match (`text`), its `issues` (`[{ message, path }]`) and the
    /// tokens the run spent.
    pub fn with_answer(mut self, issues: serde_json::Value, text: String, usage: Usage) -> Self {
        self.cause = Some(issues);
        self.text = Some(text);
        self.usage = Some(usage);
        self
    }

    /// `invalid_request`: the API compacted the conversation twice in a row without the model
    /// answering: what every request sends (the system prompt, the tools, the summary) is over
    /// the compaction trigger, so it would compact forever.
    pub fn compacting_in_circles() -> Self {
        RunError::invalid_request(
            "The API compacted the conversation again right after a compaction, without the model answering \
             (or its compactions kept failing): the system prompt, the tools and the summary alone are over the \
             compaction trigger, so every request would compact again. Raise the trigger of the compact_20260112 \
             edit in contextManagement. The run was stopped.",
        )
    }

    /// `budget_exceeded`: the run's token budget would be crossed (`message` says by what),
    /// after spending `usage`; nothing more was sent.
    pub fn budget_exceeded(message: impl Into<String>, usage: Usage) -> Self {
        let mut error = RunError::new(ErrorCode::BudgetExceeded, message);
        error.usage = Some(usage);
        error
    }

    /// `invalid_request`: the caller's own input (an option, the prompt, the history) is wrong;
    /// `message` says which and how.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        RunError::new(ErrorCode::InvalidRequest, message)
    }

    /// `authentication_error`: there is no credential to send, so nothing was sent.
    pub fn no_credentials() -> Self {
        RunError::new(
            ErrorCode::AuthenticationError,
            "No API key: set ANTHROPIC_API_KEY in the environment (or pass the apiKey option, or authToken / ANTHROPIC_AUTH_TOKEN). Nothing was sent.",
        )
    }

    /// `authentication_error`: a run on a cloud platform (`platform`, as messages name it) has
    /// no credential; `looked_for` says where one is looked for.
    pub fn no_platform_credentials(platform: &str, looked_for: &str) -> Self {
        RunError::new(
            ErrorCode::AuthenticationError,
            format!("No credentials for {platform}: looked for {looked_for}. ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN never apply to a platform. Nothing was sent."),
        )
    }

    /// `authentication_error`: a platform's credential (`what`) cannot be written into a header.
    pub fn unsendable_platform_credential(what: &str) -> Self {
        RunError::new(
            ErrorCode::AuthenticationError,
            format!("The {what} contains characters that cannot be sent in an HTTP header."),
        )
    }

    /// `authentication_error`: the credential (`what`: "API key", "auth token") cannot be
    /// written into a header.
    pub fn unsendable_credential(what: &str) -> Self {
        RunError::new(
            ErrorCode::AuthenticationError,
            format!("The {what} contains characters that cannot be sent in an HTTP header; check ANTHROPIC_API_KEY."),
        )
    }

    /// `unknown_error`: the model's reply cannot be used as it is (`message` says how).
    pub fn unknown(message: impl Into<String>) -> Self {
        RunError::new(ErrorCode::UnknownError, message)
    }

    /// `aborted`: the caller's `AbortSignal` fired.
    pub fn aborted() -> Self {
        RunError::new(
            ErrorCode::Aborted,
            "The run was aborted by its AbortSignal.",
        )
    }

    /// `store_unavailable`: the store could not be reached or used; `what` says what failed,
    /// with its URL quoted without a password.
    pub fn store_unavailable(what: &str) -> Self {
        RunError::new(
            ErrorCode::StoreUnavailable,
            format!("The store failed: {what}. Check that the database is up and reachable, then send the message again."),
        )
    }

    /// `thread_busy`: the run to resume is held by a live process; nothing was run.
    pub fn run_busy(run_id: &str) -> Self {
        RunError::new(
            ErrorCode::ThreadBusy,
            format!(
                "The run {:?} is going on in another process (its lease has not run out); nothing was run. \
                 Wait for it to end, or for its lease to run out if that process stopped, then resume it again.",
                cut_id(run_id)
            ),
        )
    }

    /// `thread_busy`: another run holds the thread; nothing was sent.
    pub fn thread_busy(id: &str) -> Self {
        RunError::new(
            ErrorCode::ThreadBusy,
            format!(
                "Another run is going on in thread {:?}; nothing was sent. Wait for it to end (or stop it), then send the message again.",
                cut_id(id)
            ),
        )
    }

    /// `aborted`: the JS thread that started the run is going away (a worker terminated).
    pub fn thread_shutting_down() -> Self {
        RunError::new(
            ErrorCode::Aborted,
            "The run was stopped: the JS thread that started it is shutting down.",
        )
    }

    /// `max_iterations_exceeded`: the model wanted more rounds than `maxToolIterations`
    /// allows; `message` says what was not done.
    pub fn max_iterations(message: impl Into<String>) -> Self {
        RunError::new(ErrorCode::MaxIterationsExceeded, message)
    }

    /// `output_truncated`: a reply asking for tools was cut, so nothing was run, or an answer
    /// `output` asks for was cut; `message` says what and the limit.
    pub fn output_truncated(message: impl Into<String>) -> Self {
        RunError::new(ErrorCode::OutputTruncated, message)
    }

    /// `tool_validation_error`: the call names a tool not offered, or its input fails the
    /// tool's schema. Name the call with [`RunError::with_tool`].
    pub fn tool_validation(message: impl Into<String>) -> Self {
        RunError::new(ErrorCode::ToolValidationError, message)
    }

    /// `tool_execution_error`: the tool threw, timed out, or returned what cannot be
    /// serialised. Name the call with [`RunError::with_tool`].
    pub fn tool_execution(message: impl Into<String>) -> Self {
        RunError::new(ErrorCode::ToolExecutionError, message)
    }

    /// `unknown_error`: a bug of ours (`what` happened that cannot), asking for a report.
    pub fn internal(what: &str) -> Self {
        RunError::new(
            ErrorCode::UnknownError,
            internal_sentence(&format!(": {what}")),
        )
    }

    /// `unknown_error`: the engine panicked (`what` is the panic's message), asking for a report.
    pub fn panicked(what: &str) -> Self {
        RunError::new(
            ErrorCode::UnknownError,
            internal_sentence(&format!(" (a Rust panic: {what})")),
        )
    }

    /// The JSON of an internal error that says nothing more, for where even serialising an
    /// error failed: written by hand, so that it cannot fail itself.
    pub fn internal_json() -> String {
        format!(
            r#"{{"code":"{}","message":"{}"}}"#,
            ErrorCode::UnknownError.as_str(),
            internal_sentence("")
        )
    }

    fn with_status(mut self, status: StatusCode) -> Self {
        self.status = Some(status.as_u16());
        self
    }

    /// Names the tool at fault.
    pub fn with_tool(mut self, name: &str, tool_use_id: &str) -> Self {
        self.tool_name = Some(name.to_owned());
        self.tool_use_id = Some(tool_use_id.to_owned());
        self
    }

    /// Gives the answer's `request-id` (the header's), unless one is known already (the one
    /// an error body carries).
    pub fn or_request_id(mut self, request_id: Option<String>) -> Self {
        self.request_id = self.request_id.or(request_id);
        self
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for RunError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn an_api_error_says_how_it_arrived_what_the_api_said_and_what_to_do() {
        let e = RunError::http(
            529,
            "overloaded_error",
            "Overloaded.",
            Some(Duration::from_secs(3)),
        );
        assert_eq!(e.code, ErrorCode::Overloaded);
        assert_eq!(e.message, "The Anthropic API answered HTTP 529 overloaded_error: Overloaded. The API is overloaded; try again in a little while.");
        assert_eq!((e.status, e.retry_after), (Some(529), Some(3.0)));
        // A wait is advice only where the code says to wait.
        let e = RunError::http(400, "", "bad", Some(Duration::from_secs(3)));
        assert_eq!(e.message, "The Anthropic API answered HTTP 400: bad. Fix the request; retrying it unchanged will fail the same way.");
        assert_eq!(e.retry_after, None);
        let e = RunError::stream_error_event("rate_limit_error", "Slow down");
        assert_eq!(e.code, ErrorCode::RateLimited);
        assert_eq!(e.message, "The Anthropic API sent an error event in the stream after HTTP 200 (like HTTP 429) rate_limit_error: Slow down. Wait before sending more requests (see retryAfter), or lower the request rate.");
        assert_eq!(e.status, None);
        assert_eq!(
            RunError::stream_error_event("x_new_error", "?").code,
            ErrorCode::UnknownError
        );
    }

    #[test]
    fn an_internal_error_is_one_sentence_asking_for_a_report() {
        assert_eq!(
            RunError::internal("a thing").message,
            "Internal error in anthropic-tool-calling: a thing. Please report it."
        );
        assert_eq!(
            RunError::panicked("boom").message,
            "Internal error in anthropic-tool-calling (a Rust panic: boom). Please report it."
        );
        let json: serde_json::Value = serde_json::from_str(&RunError::internal_json()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({ "code": "unknown_error", "message": "Internal error in anthropic-tool-calling. Please report it." })
        );
    }
}
