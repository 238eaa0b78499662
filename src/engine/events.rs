//! What a run tells an observer while it goes on: steps, deltas of the reply being written, tool
//! calls and their results. The binding turns these into the `StreamPart`s of `streamWithTools`
//! (and, later, the lifecycle hooks); the engine knows nothing of how they reach JS.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::result::{ToolCall, Usage};

/// One thing that happened in a run, in the order it happened.
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// A request is about to be sent (step 0 is the first).
    StepStart { step: u32 },
    /// More of the reply's text.
    TextDelta(String),
    /// More of the reply's thinking.
    ReasoningDelta(String),
    /// The model starts writing a client tool call.
    ToolInputStart { id: String, name: String },
    /// A piece of that call's input, partial JSON as the model writes it.
    ToolInputDelta { id: String, delta: String },
    /// A client tool call of the reply, before it is checked and run.
    ToolCall {
        id: String,
        name: String,
        input: Arc<RawValue>,
    },
    /// A call settled. `model_text` is what the model is told when it failed; `declined`: the
    /// person said no (`needsApproval`).
    ToolResult {
        call: ToolCall,
        model_text: Option<String>,
        declined: bool,
    },
    /// A step is over: its reply is read and its tool calls (if any) settled.
    StepFinish {
        step: u32,
        stop_reason: String,
        usage: Usage,
        tool_calls: Vec<ToolCall>,
    },
}

/// Receives a run's events. Called on the engine's threads; must not block.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: RunEvent);
}

impl<F: Fn(RunEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: RunEvent) {
        self(event)
    }
}
