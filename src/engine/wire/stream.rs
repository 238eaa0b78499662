//! A streamed Messages API reply (`"stream": true`): server-sent events read from the response
//! body, the reply assembled exactly as the non-streamed one (`stream/assemble.rs`, event by
//! event; `stream/block.rs`, one content block and its deltas; `stream/fields.rs`, a JSON object
//! kept in its order), and what arrives early handed to the caller as [`StreamEvent`]s. What
//! can go wrong is a [`StreamFailure`]; its code is given in `error.rs`.
//!
//! SSE framing is left to `eventsource-stream`, Bedrock's event-stream framing to
//! `platform/bedrock.rs`; this file only reads the body and hands each event on.

mod assemble;
mod block;

use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use reqwest::header::HeaderMap;

use crate::engine::error::{source_chain, twin_status, Chain, RunError};
use crate::engine::wire::platform::bedrock;
use crate::engine::wire::protocol::{self, ErrorBody, MessageResponse};
use crate::engine::wire::redact::Redactor;
use crate::engine::wire::retry;
use crate::engine::wire::settings::MAX_RESPONSE_BYTES;

/// What a streamed reply shows before it is complete, for the loop to forward to JS.
/// `index` is the block's position in the reply's `content`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// More text of a `text` block.
    TextDelta {
        /// The block's position in the reply's content.
        index: usize,
        /// The text added.
        text: String,
    },
    /// More thinking of a `thinking` block.
    ReasoningDelta {
        /// The block's position in the reply's content.
        index: usize,
        /// The thinking added.
        text: String,
    },
    /// A `tool_use` (or, with `server`, a `server_tool_use`) block starts; its input follows.
    ToolInputStart {
        /// The block's position in the reply's content.
        index: usize,
        /// The call's `tool_use` id.
        id: String,
        /// The tool called.
        name: String,
        /// Whether the API runs this tool itself (a server tool).
        server: bool,
    },
    /// A piece of a tool block's input, partial JSON as the model writes it.
    ToolInputDelta {
        /// The block's position in the reply's content.
        index: usize,
        /// The call's `tool_use` id.
        id: String,
        /// The piece of the input's JSON text.
        partial_json: String,
    },
    /// A block is complete.
    BlockStop {
        /// The block's position in the reply's content.
        index: usize,
    },
}

/// Why a streamed reply could not be read; [`StreamError::run_error`] gives its code.
#[derive(Debug, Clone)]
pub struct StreamError {
    /// What went wrong.
    pub failure: StreamFailure,
    /// The `request-id` header of the response.
    pub request_id: Option<String>,
    /// The reply had begun (its `message_start` had come): the API may hold all of it or none.
    pub started: bool,
}

/// What went wrong while a streamed reply was read and assembled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamFailure {
    /// An `event: error` after HTTP 200, with the API's `error.type` and `error.message`.
    Api {
        /// The API's `error.type` (empty when the event's data is not the API's JSON).
        kind: String,
        /// The API's `error.message` (or a quote of the data that is not the API's JSON).
        message: String,
        /// The API's `error.details.error_code`, when it gives one.
        code: Option<String>,
    },
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

impl StreamFailure {
    /// A [`StreamFailure::Malformed`] saying what was wrong.
    fn malformed(what: impl std::fmt::Display) -> Self {
        StreamFailure::Malformed(what.to_string())
    }
}

/// One event of a streamed reply, as the SSE framing gives it (Bedrock's event-stream frames
/// are read into the same: `platform/bedrock.rs`): its name and its JSON data.
pub struct Frame {
    /// The event's name (`message_start`, `content_block_delta`, `error` …).
    pub event: String,
    /// The event's data.
    pub data: String,
}

/// Reads a 2xx streamed response (`text/event-stream`, or Bedrock's
/// `application/vnd.amazon.eventstream`) to its end and assembles the reply, calling `events` as
/// deltas arrive. `ping` and unknown event names are ignored. An error event whose data is not
/// the API's JSON is quoted with `secrets` taken out.
pub async fn read_reply(
    response: reqwest::Response,
    events: &mut (dyn FnMut(StreamEvent) + Send),
    secrets: &Redactor,
) -> Result<MessageResponse, StreamError> {
    let request_id = protocol::request_id(response.headers());
    let aws_frames = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with(bedrock::EVENT_STREAM));
    let started = std::sync::atomic::AtomicBool::new(false);
    let fail = |failure| StreamError {
        failure,
        request_id: request_id.clone(),
        started: started.load(std::sync::atomic::Ordering::Relaxed),
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
    let mut frames: futures::stream::BoxStream<'_, Result<Frame, StreamFailure>> = if aws_frames {
        bedrock::frames(body, secrets)
            .map(|frame| match frame {
                Ok((event, data)) => Ok(Frame { event, data }),
                Err(bedrock::Failure::Body(body)) => Err(body.failure()),
                Err(bedrock::Failure::Exception {
                    twin: Some(kind),
                    message,
                }) => Err(StreamFailure::Api {
                    kind: kind.to_owned(),
                    message,
                    code: None,
                }),
                Err(bedrock::Failure::Exception {
                    twin: None,
                    message,
                }) => Err(StreamFailure::Connection(message)),
                Err(bedrock::Failure::Malformed(why)) => Err(StreamFailure::Malformed(why)),
            })
            .boxed()
    } else {
        body.eventsource()
            .map(|event| match event {
                Ok(event) => Ok(Frame {
                    event: event.event,
                    data: event.data,
                }),
                Err(EventStreamError::Transport(body)) => Err(body.failure()),
                Err(other) => Err(StreamFailure::Malformed(format!(
                    "bad server-sent events framing: {other}"
                ))),
            })
            .boxed()
    };
    let mut reply = assemble::Assembly::default();
    while let Some(event) = frames.next().await {
        let event = event.map_err(fail)?;
        if event.event == "error" {
            return Err(fail(api_failure(&event.data, secrets)));
        }
        reply
            .apply(&event.event, &event.data, events)
            .map_err(fail)?;
        started.store(reply.started(), std::sync::atomic::Ordering::Relaxed);
        if reply.done {
            // Not read to its end: nothing may follow message_stop, and waiting for the close
            // would hang on a proxy that keeps the connection open.
            return reply.finish(request_id.clone()).map_err(fail);
        }
    }
    Err(fail(StreamFailure::Ended))
}

/// The body stream's error: the connection's, or ours when the body is too large.
enum Body {
    Http(reqwest::Error),
    TooLarge,
}

impl Body {
    /// What the body's error means for the reply.
    fn failure(self) -> StreamFailure {
        match self {
            // reqwest's own sentence ("error decoding response body") is kept: it says what
            // was being done when the connection failed. Not its URL: the query of a baseURL
            // may hold a key.
            Body::Http(e) => {
                StreamFailure::Connection(source_chain(&e.without_url(), Chain::Whole))
            }
            Body::TooLarge => StreamFailure::TooLarge,
        }
    }
}

impl std::fmt::Display for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Body::Http(e) => write!(f, "{e}"),
            Body::TooLarge => write!(f, "over {} MiB", MAX_RESPONSE_BYTES >> 20),
        }
    }
}

/// An `event: error`'s data read as the API's error JSON (quoted, the secrets taken out, when
/// it is not).
fn api_failure(data: &str, secrets: &Redactor) -> StreamFailure {
    match serde_json::from_str::<ErrorBody>(data) {
        Ok(body) => StreamFailure::Api {
            code: body.error.error_code(),
            kind: body.error.kind,
            message: body.error.message,
        },
        Err(_) => StreamFailure::Api {
            kind: String::new(),
            message: format!(
                "(no JSON error body; data starts {:?})",
                secrets.quote(data.as_bytes())
            ),
            code: None,
        },
    }
}

impl StreamError {
    /// Whether the request may be sent again, as its HTTP twin would be. The caller must also
    /// check that nothing of the attempt was shown yet (else parts would repeat).
    pub fn retryable(&self) -> bool {
        match &self.failure {
            StreamFailure::Api { kind, .. } => {
                retry::should_retry(twin_status(kind), &HeaderMap::new())
            }
            StreamFailure::Connection(_) | StreamFailure::Ended => true,
            StreamFailure::UnknownDelta(_)
            | StreamFailure::Malformed(_)
            | StreamFailure::TooLarge => false,
        }
    }

    /// The run's error: an error event gets the code of its HTTP twin (`overloaded_error` →
    /// `overloaded`, `rate_limit_error` → `rate_limited`, …), a broken connection or a stream
    /// cut short `network_error`, anything unreadable `unknown_error`.
    pub fn run_error(&self) -> RunError {
        let error = match &self.failure {
            StreamFailure::Api {
                kind,
                message,
                code,
            } => RunError::stream_error_event(kind, message).with_api_error_code(code.clone()),
            StreamFailure::Connection(why) => RunError::stream_broken(why),
            StreamFailure::Ended => RunError::stream_ended(),
            StreamFailure::UnknownDelta(kind) => RunError::unknown_delta(kind),
            StreamFailure::Malformed(why) => RunError::malformed_stream(why),
            StreamFailure::TooLarge => RunError::stream_too_large(MAX_RESPONSE_BYTES),
        };
        error.or_request_id(self.request_id.clone())
    }
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.run_error().fmt(f)
    }
}

impl std::error::Error for StreamError {}
