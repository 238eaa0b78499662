//! The error codes of a run and the error type that carries one.

use serde::Serialize;

use super::result::ToolCall;

/// What went wrong, as a user branches on it. One code per row of the contract's §4 table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A bad option or prompt, or the API refused the request (400, 404, 413, 422, other 4xx).
    InvalidRequest,
    /// No key, or the API answered 401 / 403.
    AuthenticationError,
    /// The API answered 429.
    RateLimited,
    /// The API answered 529 or 503.
    Overloaded,
    /// The connection was refused or reset, or a request timed out.
    NetworkError,
    /// The model named a tool that is not offered, or its input failed the tool's schema.
    ToolValidationError,
    /// A tool threw, timed out or returned what cannot be serialised.
    ToolExecutionError,
    /// The model still asked for tools after `maxToolIterations` rounds.
    MaxIterationsExceeded,
    /// A reply asking for a tool was cut (`max_tokens`, `model_context_window_exceeded`): its
    /// input may be incomplete, so nothing was run.
    OutputTruncated,
    /// The caller's `AbortSignal` fired.
    Aborted,
    /// Anything else: other 5xx, a body that is not the expected JSON, a panic.
    UnknownError,
}

impl ErrorCode {
    /// The code as the JS side spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::AuthenticationError => "authentication_error",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Overloaded => "overloaded",
            ErrorCode::NetworkError => "network_error",
            ErrorCode::ToolValidationError => "tool_validation_error",
            ErrorCode::ToolExecutionError => "tool_execution_error",
            ErrorCode::MaxIterationsExceeded => "max_iterations_exceeded",
            ErrorCode::OutputTruncated => "output_truncated",
            ErrorCode::Aborted => "aborted",
            ErrorCode::UnknownError => "unknown_error",
        }
    }
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
    /// Every tool call made before the run failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

impl RunError {
    /// An error with a code and a message and nothing else known.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RunError {
            code,
            message: message.into(),
            retry_after: None,
            tool_name: None,
            tool_use_id: None,
            status: None,
            request_id: None,
            tool_calls: Vec::new(),
        }
    }

    /// Shorthand for an `invalid_request` error about the caller's own input.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        RunError::new(ErrorCode::InvalidRequest, message)
    }

    /// Names the tool at fault.
    pub fn with_tool(mut self, name: &str, tool_use_id: &str) -> Self {
        self.tool_name = Some(name.to_owned());
        self.tool_use_id = Some(tool_use_id.to_owned());
        self
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for RunError {}
