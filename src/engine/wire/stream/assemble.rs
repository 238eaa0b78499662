//! The reply built from its stream events, in order, the way the official SDK's `MessageStream`
//! builds it, so the assembled content is the same JSON as the non-streamed reply: the message
//! started, its blocks started, grown (`block.rs`) and stopped, its stop reason and usage
//! updated, and at `message_stop` the final message written.
//!
//! Each block is kept as its members in the order `content_block_start` gave them (values as
//! written, `fields.rs`), and deltas only replace or append members. We do not turn on
//! serde_json's `preserve_order` for this: that feature is crate-graph-wide and would change the
//! key order of every `serde_json::Map` in the engine and the test server.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::block::{apply_delta, Block, Delta};
use super::{StreamEvent, StreamFailure};
use crate::engine::json::ordered_fields::{raw, Fields};
use crate::engine::report::usage::ApiUsage;
use crate::engine::wire::protocol::{lenient_text, Container, ContextManagement, MessageResponse};

/// The `message` of `message_start`: the reply's envelope, and any blocks it already has.
#[derive(Deserialize)]
struct StartMessage {
    #[serde(rename = "type")]
    kind: String,
    role: String,
    #[serde(default, deserialize_with = "lenient_text")]
    id: Option<String>,
    #[serde(default, deserialize_with = "lenient_text")]
    model: Option<String>,
    #[serde(default)]
    content: Vec<Fields>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: ApiUsage,
    #[serde(default)]
    container: Option<Container>,
    #[serde(default, deserialize_with = "ContextManagement::lenient")]
    context_management: Option<ContextManagement>,
}

/// The `delta` member of `message_delta`.
#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    container: Option<Container>,
}

/// The reply so far.
#[derive(Default)]
pub(super) struct Assembly {
    message: Option<StartMessage>,
    blocks: Vec<Block>,
    /// `message_stop` arrived.
    pub(super) done: bool,
}

/// An event's data read as the JSON the Messages API sends for it.
fn parse<'a, T: Deserialize<'a>>(event: &str, data: &'a str) -> Result<T, StreamFailure> {
    serde_json::from_str(data).map_err(|e| {
        StreamFailure::malformed(format!(
            "the {event} event is not what the Messages API sends ({e})"
        ))
    })
}

impl Assembly {
    /// The reply has begun: its `message_start` came.
    pub(super) fn started(&self) -> bool {
        self.message.is_some()
    }

    /// Applies one event; `emit` gets what the caller forwards while the reply arrives.
    pub(super) fn apply(
        &mut self,
        event: &str,
        data: &str,
        emit: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), StreamFailure> {
        if self.message.is_none() && event != "message_start" {
            return Err(StreamFailure::malformed(format!(
                "the stream sent {event} before message_start"
            )));
        }
        match event {
            "message_start" if self.message.is_some() => {
                // A second message spliced into the first: whatever of it came would be lost or
                // mixed, and a call of the second could run on the first's request.
                return Err(StreamFailure::malformed(
                    "the stream sent a second message_start before message_stop",
                ));
            }
            "message_start" => {
                #[derive(Deserialize)]
                struct Start {
                    message: StartMessage,
                }
                let mut start: Start = parse(event, data)?;
                self.blocks = std::mem::take(&mut start.message.content)
                    .into_iter()
                    .map(Block::new)
                    .collect();
                self.message = Some(start.message);
            }
            "content_block_start" => {
                #[derive(Deserialize)]
                struct Start {
                    index: usize,
                    content_block: Fields,
                }
                let start: Start = parse(event, data)?;
                if start.index != self.blocks.len() {
                    return Err(StreamFailure::malformed(format!(
                        "content_block_start has index {} where block {} was next",
                        start.index,
                        self.blocks.len()
                    )));
                }
                let block = Block::new(start.content_block);
                if matches!(block.kind.as_str(), "tool_use" | "server_tool_use") {
                    emit(StreamEvent::ToolInputStart {
                        index: start.index,
                        id: block.fields.string("id").unwrap_or_default(),
                        name: block.fields.string("name").unwrap_or_default(),
                        server: block.kind == "server_tool_use",
                    });
                }
                self.blocks.push(block);
            }
            "content_block_delta" => {
                #[derive(Deserialize)]
                struct Event {
                    index: usize,
                    delta: Delta,
                }
                let Event { index, delta } = parse(event, data)?;
                let block = self.block(index)?;
                apply_delta(block, index, delta, emit)?;
            }
            "content_block_stop" => {
                #[derive(Deserialize)]
                struct Stop {
                    index: usize,
                }
                let Stop { index } = parse(event, data)?;
                self.block(index)?.stop();
                emit(StreamEvent::BlockStop { index });
            }
            "message_delta" => {
                #[derive(Deserialize)]
                struct Event {
                    delta: MessageDelta,
                    #[serde(default)]
                    usage: Option<ApiUsage>,
                    /// What context editing cleared: on the event, beside `delta`.
                    #[serde(default, deserialize_with = "ContextManagement::lenient")]
                    context_management: Option<ContextManagement>,
                }
                let Event {
                    delta,
                    usage,
                    context_management,
                } = parse(event, data)?;
                let message = self.message.as_mut().expect("checked above");
                if context_management.is_some() {
                    message.context_management = context_management;
                }
                if delta.stop_reason.is_some() {
                    message.stop_reason = delta.stop_reason;
                }
                if delta.container.is_some() {
                    message.container = delta.container;
                }
                if let Some(usage) = usage {
                    // Cumulative counts: each one sent replaces ours; one not sent is kept.
                    let u = &mut message.usage;
                    u.input_tokens = usage.input_tokens.or(u.input_tokens);
                    u.output_tokens = usage.output_tokens.or(u.output_tokens);
                    u.cache_creation_input_tokens = usage
                        .cache_creation_input_tokens
                        .or(u.cache_creation_input_tokens);
                    u.cache_read_input_tokens =
                        usage.cache_read_input_tokens.or(u.cache_read_input_tokens);
                    u.iterations = usage.iterations.or(u.iterations);
                }
            }
            "message_stop" => self.done = true,
            _ => {}
        }
        Ok(())
    }

    fn block(&mut self, index: usize) -> Result<&mut Block, StreamFailure> {
        self.blocks.get_mut(index).ok_or_else(|| {
            StreamFailure::malformed(format!("an event for block {index}, which never started"))
        })
    }

    /// The reply, once `message_stop` has arrived.
    pub(super) fn finish(
        mut self,
        request_id: Option<String>,
    ) -> Result<MessageResponse, StreamFailure> {
        let message = self
            .message
            .take()
            .ok_or_else(|| StreamFailure::malformed("no message_start"))?;
        if message.kind != "message" || message.role != "assistant" {
            return Err(StreamFailure::malformed(format!(
                "message_start has type {:?} and role {:?}, expected \"message\" and \"assistant\"",
                message.kind, message.role
            )));
        }
        let truncated = matches!(
            message.stop_reason.as_deref(),
            Some("max_tokens" | "model_context_window_exceeded")
        );
        let mut content = String::from("[");
        for (i, block) in self.blocks.iter_mut().enumerate() {
            if block.cut_input {
                // A reply cut mid-input: the loop never runs such a call and ends with
                // output_truncated, so `{}` (what the SDK's partial parse yields at worst) will do.
                if !truncated {
                    return Err(StreamFailure::malformed(format!(
                        "the input of block {i} ({}) is not valid JSON",
                        block.kind
                    )));
                }
                block.fields.set("input", raw(&serde_json::Map::new()));
            }
            // A block left open (no content_block_stop) still gets its deltas.
            block.settle();
            if i > 0 {
                content.push(',');
            }
            block.fields.write(&mut content);
        }
        content.push(']');
        Ok(MessageResponse {
            kind: message.kind,
            role: message.role,
            id: message.id,
            model: message.model,
            content: RawValue::from_string(content).map_err(StreamFailure::malformed)?,
            stop_reason: message.stop_reason,
            usage: message.usage,
            container: message.container,
            context_management: message.context_management,
            request_id,
            after_cut: false,
        })
    }
}

#[cfg(test)]
mod tests;
