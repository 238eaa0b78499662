//! A streamed reply's deltas, handed on as run events while the reply is being written.

use crate::engine::trace::events::{EventSink, RunEvent};
use crate::engine::wire::stream::StreamEvent;

/// Hands a streamed reply's deltas on as run events: text, thinking, and client tool calls'
/// inputs (a server tool's input is Anthropic's business). Thinking blocks are joined by a
/// blank line, as `data.reasoning` joins them, so the deltas add up to it.
pub struct Deltas<'s> {
    sink: &'s dyn EventSink,
    server_ids: Vec<String>,
    /// Some thinking was shown earlier in the run.
    thought_before: &'s mut bool,
    /// The thinking block being shown.
    thinking_block: Option<usize>,
}

impl<'s> Deltas<'s> {
    /// Deltas of one reply, told to `sink`; `thought_before` carries over from reply to reply.
    pub fn new(sink: &'s dyn EventSink, thought_before: &'s mut bool) -> Self {
        Deltas {
            sink,
            server_ids: Vec::new(),
            thought_before,
            thinking_block: None,
        }
    }

    /// Hands one event of the stream on (or not: empty deltas and server tools' inputs).
    pub fn on(&mut self, event: StreamEvent) {
        let run_event = match event {
            StreamEvent::TextDelta { text, .. } => RunEvent::TextDelta(text),
            StreamEvent::ReasoningDelta { index, text } => {
                if text.is_empty() {
                    return;
                }
                if self.thinking_block != Some(index) {
                    if *self.thought_before {
                        self.sink.emit(RunEvent::ReasoningDelta("\n\n".to_owned()));
                    }
                    self.thinking_block = Some(index);
                    *self.thought_before = true;
                }
                RunEvent::ReasoningDelta(text)
            }
            StreamEvent::ToolInputStart {
                id, server: true, ..
            } => {
                self.server_ids.push(id);
                return;
            }
            StreamEvent::ToolInputStart { id, name, .. } => RunEvent::ToolInputStart { id, name },
            StreamEvent::ToolInputDelta {
                id, partial_json, ..
            } => {
                if partial_json.is_empty() || self.server_ids.contains(&id) {
                    return;
                }
                RunEvent::ToolInputDelta {
                    id,
                    delta: partial_json,
                }
            }
            StreamEvent::BlockStop { .. } => return,
        };
        self.sink.emit(run_event);
    }
}
