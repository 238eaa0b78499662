//! Bedrock's streamed reply: AWS event-stream frames (`application/vnd.amazon.eventstream`), each
//! `chunk` event carrying one Messages API stream event, base64-encoded in its payload's `bytes`;
//! an `exception` frame is an error. The framing — lengths, headers and both CRC32 checksums — is
//! read by AWS's own `aws-smithy-eventstream`; a frame may arrive split across reads at any byte,
//! so the bytes are buffered until one is whole.

use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::{HeaderValue, Message};

use super::errors::bedrock_twin;
use crate::engine::wire::redact::Redactor;

/// The content type of a Bedrock stream.
pub const EVENT_STREAM: &str = "application/vnd.amazon.eventstream";

/// What went wrong reading a body of frames: the body's own error (`E`), an exception frame, or
/// framing that does not check out.
#[derive(Debug)]
pub enum Failure<E> {
    /// The body could not be read.
    Body(E),
    /// An exception frame: the API error type it stands for (`None`: a model timeout, a network
    /// error) and its type and message, the secrets taken out.
    Exception {
        /// The API error type of its twin.
        twin: Option<&'static str>,
        /// `{exception type}: {message}`.
        message: String,
    },
    /// A frame that cannot be read (a checksum, a length, a payload).
    Malformed(String),
}

/// One Messages API event of the stream: its `type` as its name, and its JSON text.
pub type Event = (String, String);

/// The Messages API events in a body of event-stream frames, as the SSE reader gives them.
pub fn frames<'a, E: Send + 'a>(
    body: impl Stream<Item = Result<Bytes, E>> + Send + 'a,
    secrets: &'a Redactor,
) -> impl Stream<Item = Result<Event, Failure<E>>> + Send + 'a {
    struct State<B> {
        body: B,
        buffer: BytesMut,
        decoder: MessageFrameDecoder,
        done: bool,
    }
    let state = State {
        body: Box::pin(body),
        buffer: BytesMut::new(),
        decoder: MessageFrameDecoder::new(),
        done: false,
    };
    futures::stream::unfold(state, move |mut s| async move {
        loop {
            if s.done {
                return None;
            }
            match s.decoder.decode_frame(&mut s.buffer) {
                Ok(DecodedFrame::Complete(message)) => match event_of(&message, secrets) {
                    Some(Ok(frame)) => return Some((Ok(frame), s)),
                    Some(Err(failure)) => {
                        s.done = true;
                        return Some((Err(failure), s));
                    }
                    None => continue,
                },
                Ok(DecodedFrame::Incomplete) => {}
                Err(e) => {
                    s.done = true;
                    let why = format!("bad event-stream framing: {e}");
                    return Some((Err(Failure::Malformed(why)), s));
                }
            }
            match s.body.next().await {
                Some(Ok(chunk)) => s.buffer.extend_from_slice(&chunk),
                Some(Err(e)) => {
                    s.done = true;
                    return Some((Err(Failure::Body(e)), s));
                }
                None => return None,
            }
        }
    })
}

/// A string header of a frame.
fn header<'m>(message: &'m Message, name: &str) -> Option<&'m str> {
    message
        .headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| match h.value() {
            HeaderValue::String(s) => Some(s.as_str()),
            _ => None,
        })
}

/// One frame read: a chunk's Messages API event, an exception's failure, or `None` for a frame
/// of another kind (skipped).
fn event_of<E>(message: &Message, secrets: &Redactor) -> Option<Result<Event, Failure<E>>> {
    let payload = message.payload();
    match header(message, ":message-type") {
        Some("event") if header(message, ":event-type") == Some("chunk") => Some(chunk(payload)),
        Some("event") => None,
        Some("exception") | Some("error") => {
            let kind = header(message, ":exception-type")
                .or_else(|| header(message, ":error-code"))
                .unwrap_or("exception");
            let said = serde_json::from_slice::<serde_json::Value>(payload)
                .ok()
                .and_then(|j| {
                    ["message", "Message"]
                        .iter()
                        .find_map(|k| j.get(*k)?.as_str().map(str::to_owned))
                });
            let said = match said {
                Some(text) => secrets.redact(&text).into_owned(),
                None => format!("(payload starts {:?})", secrets.quote(payload)),
            };
            Some(Err(Failure::Exception {
                twin: bedrock_twin(kind),
                message: format!("{kind}: {said}"),
            }))
        }
        other => Some(Err(Failure::Malformed(format!(
            "an event-stream frame of message type {other:?}"
        )))),
    }
}

/// A `chunk` event's payload `{ "bytes": base64 }` as the Messages API event it carries.
fn chunk<E>(payload: &[u8]) -> Result<Event, Failure<E>> {
    #[derive(serde::Deserialize)]
    struct Chunk {
        bytes: String,
    }
    #[derive(serde::Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        kind: String,
    }
    let chunk: Chunk = serde_json::from_slice(payload)
        .map_err(|e| Failure::Malformed(format!("a chunk event's payload: {e}")))?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(chunk.bytes.as_bytes())
        .map_err(|e| Failure::Malformed(format!("a chunk event's bytes: {e}")))?;
    let data = String::from_utf8(decoded)
        .map_err(|_| Failure::Malformed("a chunk event's bytes are not UTF-8".into()))?;
    let typed: Typed = serde_json::from_str(&data)
        .map_err(|e| Failure::Malformed(format!("a chunk event's event: {e}")))?;
    Ok((typed.kind, data))
}
