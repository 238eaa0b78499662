//! What a run tells an observer while it goes on: steps, deltas of the reply being written, tool
//! calls and their results. The binding turns these into `StreamPart`s, which `streamWithTools`
//! hands out and from which the JS layer calls the `onToolResult` and `onStepFinish` hooks (of
//! `runWithTools` too); the engine knows nothing of how they reach JS.

use std::sync::Arc;
use std::time::Instant;

use futures::future::BoxFuture;
use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::report::calls::ToolCall;
use crate::engine::report::usage::Usage;
use crate::engine::trace::request::RequestTrace;
use crate::engine::wire::protocol::RawMessage;

/// One thing that happened in a run, in the order it happened.
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// A request is about to be sent (step 0 is the first).
    StepStart {
        /// Counted from 0.
        step: u32,
        /// The run's id in its store (a durable run): the first part a stream shows carries it.
        run_id: Option<String>,
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
    /// The history from message `at` on is now `messages`; `progress` is how far the run got
    /// (JSON, see [`Progress`]), kept so that a run taken over goes on counting from there.
    fn commit<'a>(
        &'a self,
        at: usize,
        messages: &'a [RawMessage],
        progress: &'a Progress,
    ) -> BoxFuture<'a, Result<(), RunError>>;

    /// The same, for the step the run ends with: the journal may keep it with the run's ending,
    /// in one write, instead of on its own. By default it is committed now.
    fn commit_last<'a>(
        &'a self,
        at: usize,
        messages: &'a [RawMessage],
        progress: &'a Progress,
    ) -> BoxFuture<'a, Result<(), RunError>> {
        self.commit(at, messages, progress)
    }

    /// The calls that start right after the next commit (the reply asking for them): the
    /// journal may record them as started in that commit, rather than one write each.
    fn will_start(&self, _tool_use_ids: Vec<String>) {}

    /// Call `tool_use_id` is about to run: recorded as started before it does; the attempt
    /// this is (1 the first time, 2 … when a run taken over runs it again).
    fn call_started<'a>(&'a self, _tool_use_id: &'a str) -> BoxFuture<'a, Result<u32, RunError>> {
        Box::pin(std::future::ready(Ok(1)))
    }

    /// Call `tool_use_id` finished: `record` is what it came to (JSON, written and read by the
    /// loop), so that it never runs again.
    fn call_finished<'a>(
        &'a self,
        _tool_use_id: &'a str,
        _record: String,
    ) -> BoxFuture<'a, Result<(), RunError>> {
        Box::pin(std::future::ready(Ok(())))
    }

    /// What an earlier holder of the run recorded of call `tool_use_id`, if anything.
    fn recorded(&self, _tool_use_id: &str) -> Option<Recorded> {
        None
    }
}

/// How far a run got, as its journal keeps it with each step.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Progress {
    /// Tokens spent so far.
    pub input_tokens: u64,
    /// See [`Progress::input_tokens`].
    pub output_tokens: u64,
    /// See [`Progress::input_tokens`].
    pub cache_read_input_tokens: u64,
    /// See [`Progress::input_tokens`].
    pub cache_creation_input_tokens: u64,
    /// Tool rounds so far.
    pub rounds: u32,
    /// The step the run is at.
    pub step: u32,
}

/// A call as an earlier holder of the run left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// How many times it was started.
    pub attempts: u32,
    /// What it came to (the JSON `call_finished` was given), if it finished.
    pub finished: Option<String>,
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

/// Why a call failed, or was answered without running: decides its error code and its label
/// in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The model named a tool that is not offered.
    UnknownTool,
    /// The input failed the tool's schema (or the executor's own check).
    InvalidInput,
    /// The same call already failed `maxToolFailures` times; not run.
    Repeated,
    /// The same call already succeeded `maxIdenticalCalls` times; not run (an answer, not a
    /// failure: the model has its result).
    Identical,
    /// It did not finish within `toolTimeoutMs`.
    Timeout,
    /// The tool threw a `ToolError`, its words for the model.
    ToolError,
    /// The tool failed in any other way.
    Threw,
    /// The tool returned what cannot be sent.
    BadOutput,
    /// The person declined it (an answer, not a failure).
    Declined,
    /// In order, an earlier call of the turn waits for approval (not run; not a failure).
    NotRunWaiting,
    /// It started in a process that stopped, and its tool asks not to be run again
    /// (`onInterrupted: "report"`): told to the model as interrupted (an answer, not a failure).
    Interrupted,
}

impl Why {
    /// The error a stop-mode run ends with when a call fails this way.
    pub fn error(self, message: String) -> RunError {
        match self {
            Why::UnknownTool | Why::InvalidInput => RunError::tool_validation(message),
            _ => RunError::tool_execution(message),
        }
    }

    /// Whether a call answered this way failed: one refused as a repeat, declined, or not run
    /// while an earlier call waits for approval was answered, not failed.
    pub fn is_failure(self) -> bool {
        !matches!(
            self,
            Why::Repeated | Why::Identical | Why::Declined | Why::NotRunWaiting | Why::Interrupted
        )
    }

    /// Its name in the log and in traces.
    pub fn label(self) -> &'static str {
        match self {
            Why::UnknownTool => "unknown_tool",
            Why::InvalidInput => "invalid_input",
            Why::Repeated => "not_run_repeated",
            Why::Identical => "not_run_identical",
            Why::Timeout => "timeout",
            Why::ToolError => "tool_error",
            Why::Threw => "threw",
            Why::BadOutput => "bad_output",
            Why::Declined => "declined",
            Why::NotRunWaiting => "not_run_waiting",
            Why::Interrupted => "interrupted",
        }
    }

    /// The reason of a [`Why::label`].
    pub fn from_label(label: &str) -> Option<Why> {
        [
            Why::UnknownTool,
            Why::InvalidInput,
            Why::Repeated,
            Why::Identical,
            Why::Timeout,
            Why::ToolError,
            Why::Threw,
            Why::BadOutput,
            Why::Declined,
            Why::NotRunWaiting,
            Why::Interrupted,
        ]
        .into_iter()
        .find(|w| w.label() == label)
    }
}
