//! A streamed Messages API reply (`"stream": true`): server-sent events read from the response
//! body, the reply assembled exactly as the non-streamed one (`assemble`), and what arrives
//! early handed to the caller as [`StreamEvent`]s.
//!
//! SSE framing is left to `eventsource-stream`; this file only dispatches on event names.

mod assemble;

use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;

use super::api::{api_error, MAX_RESPONSE_BYTES};
use super::error::{ErrorCode, RunError};
use super::protocol::{ErrorBody, MessageResponse};
use super::redact::Redactor;
use super::retry::{self, Hint};

/// What a streamed reply shows before it is complete, for the loop to forward to JS.
/// `index` is the block's position in the reply's `content`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// More text of a `text` block.
    TextDelta { index: usize, text: String },
    /// More thinking of a `thinking` block.
    ReasoningDelta { index: usize, text: String },
    /// A `tool_use` (or, with `server`, a `server_tool_use`) block starts; its input follows.
    ToolInputStart {
        index: usize,
        id: String,
        name: String,
        server: bool,
    },
    /// A piece of a tool block's input, partial JSON as the model writes it.
    ToolInputDelta {
        index: usize,
        id: String,
        partial_json: String,
    },
    /// A block is complete.
    BlockStop { index: usize },
}

/// Why a streamed reply could not be read; [`StreamError::run_error`] gives its code.
#[derive(Debug, Clone)]
pub struct StreamError {
    /// What went wrong.
    pub failure: Failure,
    /// The `request-id` header of the response.
    pub request_id: Option<String>,
}

/// The kinds of [`StreamError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// An `event: error` after HTTP 200, with the API's `error.type` and `error.message`.
    Api { kind: String, message: String },
    /// The connection failed while the body was read (reset, timeout…).
    Connection(String),
    /// The body ended without `message_stop`.
    Ended,
    /// A `content_block_delta` of a type we do not know (its data cannot be placed).
    UnknownDelta(String),
    /// An event we could not read: bad JSON, bad SSE framing, an impossible order.
    Malformed(String),
    /// The body grew over [`MAX_RESPONSE_BYTES`].
    TooLarge,
}

/// Reads a 2xx `text/event-stream` response to its end and assembles the reply, calling
/// `events` as deltas arrive. `ping` and unknown event names are ignored. An error event whose
/// data is not the API's JSON is quoted with `secrets` taken out.
pub async fn read_reply(
    response: reqwest::Response,
    events: &mut (dyn FnMut(StreamEvent) + Send),
    secrets: &Redactor,
) -> Result<MessageResponse, StreamError> {
    let request_id = response
        .headers()
        .get("request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let fail = |failure| StreamError {
        failure,
        request_id: request_id.clone(),
    };
    let mut read = 0usize;
    let body = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(Body::Http)?;
        read += chunk.len();
        if read > MAX_RESPONSE_BYTES {
            return Err(Body::TooLarge);
        }
        Ok(chunk)
    });
    let mut sse = body.eventsource();
    let mut reply = assemble::Assembly::default();
    while let Some(event) = sse.next().await {
        let event = event.map_err(|e| {
            fail(match e {
                EventStreamError::Transport(Body::Http(e)) => Failure::Connection(source_chain(&e)),
                EventStreamError::Transport(Body::TooLarge) => Failure::TooLarge,
                other => Failure::Malformed(format!("bad server-sent events framing: {other}")),
            })
        })?;
        if event.event == "error" {
            return Err(fail(api_failure(&event.data, secrets)));
        }
        reply
            .apply(&event.event, &event.data, events)
            .map_err(fail)?;
        if reply.done {
            // Not read to its end: nothing may follow message_stop, and waiting for the close
            // would hang on a proxy that keeps the connection open.
            return reply.finish(request_id.clone()).map_err(fail);
        }
    }
    Err(fail(Failure::Ended))
}

/// The body stream's error: the connection's, or ours when the body is too large.
enum Body {
    Http(reqwest::Error),
    TooLarge,
}

impl std::fmt::Display for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Body::Http(e) => write!(f, "{e}"),
            Body::TooLarge => write!(f, "over {} MiB", MAX_RESPONSE_BYTES >> 20),
        }
    }
}

fn api_failure(data: &str, secrets: &Redactor) -> Failure {
    match serde_json::from_str::<ErrorBody>(data) {
        Ok(body) => Failure::Api {
            kind: body.error.kind,
            message: body.error.message,
        },
        Err(_) => Failure::Api {
            kind: String::new(),
            message: format!(
                "(no JSON error body; data starts {:?})",
                secrets.quote(data.as_bytes())
            ),
        },
    }
}

/// The HTTP status the API uses for an error of this `error.type` (its streamed twin maps
/// like it); a type we do not know counts as a 500.
fn twin_status(kind: &str) -> StatusCode {
    let code = match kind {
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
    StatusCode::from_u16(code).expect("a valid status")
}

impl StreamError {
    /// Whether the request may be sent again, as its HTTP twin would be. The caller must also
    /// check that nothing of the attempt was shown yet (else parts would repeat).
    pub fn retryable(&self) -> bool {
        match &self.failure {
            Failure::Api { kind, .. } => retry::should_retry(twin_status(kind), &HeaderMap::new()),
            Failure::Connection(_) | Failure::Ended => true,
            Failure::UnknownDelta(_) | Failure::Malformed(_) | Failure::TooLarge => false,
        }
    }

    /// The run's error: an error event gets the code of its HTTP twin (`overloaded_error` →
    /// `overloaded`, `rate_limit_error` → `rate_limited`, …), a broken connection or a stream
    /// cut short `network_error`, anything unreadable `unknown_error`.
    pub fn run_error(&self) -> RunError {
        let mut error = match &self.failure {
            Failure::Api { kind, message } => {
                let status = twin_status(kind);
                let mut error = api_error(status, kind, message, Hint::None);
                // Same code and advice as the HTTP error, but the answer was a 200.
                let said = format!("The Anthropic API answered HTTP {}", status.as_u16());
                error.message = match error.message.strip_prefix(&said) {
                    Some(rest) => format!("The Anthropic API sent an error event in the stream after HTTP 200 (like HTTP {}){rest}", status.as_u16()),
                    None => format!("{} (an error event in the stream after HTTP 200)", error.message),
                };
                error.status = None;
                error
            }
            Failure::Connection(why) => RunError::new(
                ErrorCode::NetworkError,
                format!("The connection failed while the streamed reply was read: {why}. Try again."),
            ),
            Failure::Ended => RunError::new(
                ErrorCode::NetworkError,
                "The stream ended before message_stop: the reply is incomplete. Try again.",
            ),
            Failure::UnknownDelta(kind) => RunError::new(
                ErrorCode::UnknownError,
                format!("The Anthropic API streamed a content_block_delta of unknown type {kind:?}; it cannot be assembled into the reply, so the run stops rather than drop it. Update anthropic-tool-calling."),
            ),
            Failure::Malformed(why) => RunError::new(
                ErrorCode::UnknownError,
                format!("The Anthropic API sent a stream that is not a Messages API reply: {why}."),
            ),
            Failure::TooLarge => RunError::new(
                ErrorCode::UnknownError,
                format!("The Anthropic API streamed a reply over {} MiB; it was not read to its end.", MAX_RESPONSE_BYTES >> 20),
            ),
        };
        error.request_id = error.request_id.take().or_else(|| self.request_id.clone());
        error
    }
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.run_error().fmt(f)
    }
}

impl std::error::Error for StreamError {}

/// The innermost causes of an error, which name what really happened (reset, timeout…).
fn source_chain(e: &reqwest::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(err) = cur {
        parts.push(err.to_string());
        cur = err.source();
    }
    parts.join(": ")
}
