//! The failures of the wire: a reply too large or not a message, a redirect, the network, a
//! broken stream. Their constructors, with the words each one says.

use std::time::Duration;

use reqwest::StatusCode;

use super::{source_chain, Chain, ErrorCode, RunError};

impl RunError {
    /// `unknown_error`: the API answered HTTP `status` with a body over `limit` bytes, which
    /// was not read.
    pub fn response_too_large(status: StatusCode, limit: usize) -> Self {
        RunError::new(
            ErrorCode::UnknownError,
            format!("The Anthropic API sent a response body over {} MiB (HTTP {status}); it was not read.", limit >> 20),
        )
        .with_status(status)
    }

    /// `unknown_error`: a 2xx answer whose body is not a Messages API response (`why`).
    pub fn not_a_message(status: StatusCode, why: &str) -> Self {
        RunError::new(
            ErrorCode::UnknownError,
            format!("The Anthropic API answered HTTP {status} with a body that is not a Messages API response: {why}."),
        )
        .with_status(status)
    }

    /// `unknown_error`: the API answered with a redirect (to `location`, already quoted safe),
    /// which we never follow: the key goes to baseURL and nowhere else.
    pub fn redirected(status: StatusCode, location: Option<&str>) -> Self {
        RunError::new(
            ErrorCode::UnknownError,
            format!(
                "The Anthropic API answered HTTP {} (a redirect{}); redirects are not followed, so the API key goes to baseURL and nowhere else. Point baseURL at the API itself.",
                status.as_u16(),
                location.map(|to| format!(" to {to}")).unwrap_or_default()
            ),
        )
        .with_status(status)
    }

    /// `network_error`: the request to `url` got no answer (timed out after `timeout`, could
    /// not connect, or the connection failed), with the innermost cause named.
    pub fn network(e: &reqwest::Error, url: &str, timeout: Duration) -> Self {
        // reqwest's own sentence only repeats the URL, which the message names already.
        let why = || source_chain(e, Chain::Causes);
        let message = if e.is_timeout() {
            format!("The request to {url} timed out after {} ms (timeoutMs). Try again, or raise timeoutMs.", timeout.as_millis())
        } else if e.is_connect() {
            format!(
                "Could not connect to {url}: {}. Check ANTHROPIC_BASE_URL / baseURL and the network.",
                why()
            )
        } else {
            format!("The connection to {url} failed: {}. Try again.", why())
        };
        RunError::new(ErrorCode::NetworkError, message)
    }

    /// `network_error`: the connection failed (`why`) while a streamed reply was read.
    pub fn stream_broken(why: &str) -> Self {
        RunError::new(
            ErrorCode::NetworkError,
            format!("The connection failed while the streamed reply was read: {why}. Try again."),
        )
    }

    /// `network_error`: a streamed reply ended before `message_stop`.
    pub fn stream_ended() -> Self {
        RunError::new(
            ErrorCode::NetworkError,
            "The stream ended before message_stop: the reply is incomplete. Try again.",
        )
    }

    /// `unknown_error`: a streamed `content_block_delta` of a type we do not know, which cannot
    /// be placed in the reply (dropping it would make the history differ).
    pub fn unknown_delta(kind: &str) -> Self {
        RunError::new(
            ErrorCode::UnknownError,
            format!("The Anthropic API streamed a content_block_delta of unknown type {kind:?}; it cannot be assembled into the reply, so the run stops rather than drop it. Update anthropic-tool-calling."),
        )
    }

    /// `unknown_error`: a stream that is not a Messages API reply (`why`).
    pub fn malformed_stream(why: &str) -> Self {
        RunError::new(
            ErrorCode::UnknownError,
            format!("The Anthropic API sent a stream that is not a Messages API reply: {why}."),
        )
    }

    /// `unknown_error`: a streamed reply grew over `limit` bytes and was not read to its end.
    pub fn stream_too_large(limit: usize) -> Self {
        RunError::new(
            ErrorCode::UnknownError,
            format!(
                "The Anthropic API streamed a reply over {} MiB; it was not read to its end.",
                limit >> 20
            ),
        )
    }
}
