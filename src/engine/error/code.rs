//! The codes a user branches on, and what decides each one: the HTTP status of the API's answer
//! (or the status an error event in a stream stands for) and the advice that goes with it.

use reqwest::StatusCode;
use serde::Serialize;

/// What went wrong, as a user branches on it.
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
    /// input may be incomplete, so nothing was run. With `output`: the answer was cut.
    OutputTruncated,
    /// The caller's `AbortSignal` fired.
    Aborted,
    /// The next request would cross the run's token budget (`maxTotalTokens`), or a reply was
    /// cut by the cap the budget lowered.
    BudgetExceeded,
    /// With `output`: the final answer is not JSON, or does not match the schema.
    OutputValidationError,
    /// The store (`createStore`) could not be reached or used.
    StoreUnavailable,
    /// Another run holds the thread.
    ThreadBusy,
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
            ErrorCode::BudgetExceeded => "budget_exceeded",
            ErrorCode::OutputValidationError => "output_validation_error",
            ErrorCode::StoreUnavailable => "store_unavailable",
            ErrorCode::ThreadBusy => "thread_busy",
            ErrorCode::UnknownError => "unknown_error",
        }
    }

    /// The code of an API answer with this HTTP error status.
    pub fn for_status(status: u16) -> ErrorCode {
        match status {
            401 | 403 => ErrorCode::AuthenticationError,
            429 => ErrorCode::RateLimited,
            503 | 529 => ErrorCode::Overloaded,
            400..=499 => ErrorCode::InvalidRequest,
            _ => ErrorCode::UnknownError,
        }
    }

    /// What to do about an API answer with this code: the sentence that ends its message.
    pub(super) fn advice(self) -> &'static str {
        match self {
            ErrorCode::AuthenticationError => {
                " Check ANTHROPIC_API_KEY (or the apiKey option) and the key's permissions."
            }
            ErrorCode::RateLimited => {
                " Wait before sending more requests (see retryAfter), or lower the request rate."
            }
            ErrorCode::Overloaded => " The API is overloaded; try again in a little while.",
            ErrorCode::InvalidRequest => {
                " Fix the request; retrying it unchanged will fail the same way."
            }
            _ => " This is on the API's side; try again later.",
        }
    }
}

/// The HTTP status the API answers an error of this `error.type` with. An error event in a
/// stream (which arrives after HTTP 200) is treated like that answer: same code, same advice,
/// same retry rule. A type we do not know counts as a 500.
pub fn twin_status(error_type: &str) -> StatusCode {
    let status = match error_type {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "conflict_error" => 409,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => 500,
    };
    StatusCode::from_u16(status).expect("a valid status")
}
