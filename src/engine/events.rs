//! What a run tells an observer while it goes on: steps, deltas of the reply being written, tool
//! calls and their results. The binding turns these into `StreamPart`s, which `streamWithTools`
//! hands out and from which the JS layer calls the `onToolResult` and `onStepFinish` hooks (of
//! `runWithTools` too); the engine knows nothing of how they reach JS.

use std::sync::Arc;
use std::time::Instant;

use serde_json::value::RawValue;

use super::protocol::RawMessage;
use super::result::{ToolCall, Usage};
use super::settled::Why;
use super::trace::RequestTrace;

/// One thing that happened in a run, in the order it happened.
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// A request is about to be sent (step 0 is the first).
    StepStart {
        /// Counted from 0.
        step: u32,
    },
    /// More of the reply's text.
    TextDelta(String),
    /// More of the reply's thinking.
    ReasoningDelta(String),
    /// The model starts writing a client tool call.
    ToolInputStart {
        /// The call's `tool_use` id.
        id: String,
        /// The tool asked for.
        name: String,
    },
    /// A piece of that call's input, partial JSON as the model writes it.
    ToolInputDelta {
        /// The call's `tool_use` id.
        id: String,
        /// The next piece of its input.
        delta: String,
    },
    /// A client tool call of the reply, before it is checked and run.
    ToolCall {
        /// Its `tool_use` id.
        id: String,
        /// The tool asked for.
        name: String,
        /// The model's input, verbatim.
        input: Arc<RawValue>,
    },
    /// A call is about to run, on an executor that does not run where the run was started (an
    /// MCP server's tool): what `onToolCall` is told.
    ToolStart {
        /// Its `tool_use` id.
        id: String,
        /// The tool.
        name: String,
        /// When it was handed to its executor.
        at: std::time::Instant,
    },
    /// A call settled. `model_text` is what the model is told when it failed.
    ToolResult {
        /// The call's record.
        call: ToolCall,
        /// What the model is told, when the call failed.
        model_text: Option<String>,
        /// What the call came to (ran, failed and why, declined, not run …).
        outcome: CallOutcome,
        /// When it settled.
        at: Instant,
    },
    /// A request to the API is over (answered, or failed after its retries): told only when the
    /// run is traced (`RunConfig::trace`).
    Request(Box<RequestTrace>),
    /// A step is over: its reply is read and its tool calls (if any) settled.
    StepFinish {
        /// The step, as its `StepStart` counted it.
        step: u32,
        /// Its reply's `stop_reason`, `""` without one.
        stop_reason: String,
        /// Its reply's tokens alone.
        usage: Usage,
        /// The calls of its tool round, if it had one.
        tool_calls: Vec<ToolCall>,
    },
}

/// What one tool call came to, as an observer tells it apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// It ran and returned.
    Ok,
    /// It failed, or was answered without running, for this reason.
    Why(Why),
    /// It was stopped while running (an abort, or a failed sibling in stop mode).
    Interrupted,
    /// It came after the tool-round limit (`onMaxIterations: "answer"`): not run.
    PastLimit,
}

impl CallOutcome {
    /// Its name, as logs and traces spell it.
    pub fn label(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Why(why) => why.label(),
            CallOutcome::Interrupted => "interrupted",
            CallOutcome::PastLimit => "not_run_limit",
        }
    }

    /// Whether the call failed. A call declined by the person, refused as a repeat, or not run
    /// (the limit, a call before it that waits for approval) did not: it was answered.
    pub fn failed(self) -> bool {
        match self {
            CallOutcome::Ok | CallOutcome::PastLimit => false,
            CallOutcome::Interrupted => true,
            CallOutcome::Why(why) => why.is_failure(),
        }
    }
}

/// Commits a run's history as it grows (a store, for a run in a thread). The loop waits for each
/// commit: a reply is kept before any of its calls runs.
pub trait Journal: Send + Sync {
    /// The history from message `at` on is now `messages`.
    fn commit<'a>(
        &'a self,
        at: usize,
        messages: &'a [RawMessage],
    ) -> futures::future::BoxFuture<'a, Result<(), super::error::RunError>>;
}

/// A [`Journal`] as a run's settings hold it.
#[derive(Clone)]
pub struct JournalRef(pub Arc<dyn Journal>);

impl std::fmt::Debug for JournalRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JournalRef")
    }
}

/// Receives a run's events. Called on the engine's threads; must not block.
pub trait EventSink: Send + Sync {
    /// Tells one event, in the order the run makes them.
    fn emit(&self, event: RunEvent);
}

impl<F: Fn(RunEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: RunEvent) {
        self(event)
    }
}
