//! What one call came to: the record for the developer, the `tool_result` for the model, and —
//! when it failed — why, and the error a stop-mode run ends with.

use std::time::Duration;

use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::report::calls::{ToolCall, ToolOutput};
use crate::engine::run::feedback as fb;
use crate::engine::run::model_reply::Requested;
use crate::engine::trace::events::{CallOutcome, Why};

/// A settled call: the record for the developer and the `tool_result` for the model.
pub struct Settled {
    /// The record, as `toolCalls[i]` shows it.
    pub call: ToolCall,
    /// The `tool_result` text, or its content blocks as a JSON array when `blocks`.
    pub content: String,
    /// `content` is a JSON array of content blocks.
    pub blocks: bool,
    /// The error a stop-mode run ends with, when the call failed.
    pub failure: Option<RunError>,
    /// Why it failed (or was answered without running), when it did.
    pub why: Option<Why>,
}

impl Settled {
    /// Whether this failure counts towards `maxToolFailures` (a call refused as repeated was
    /// not run, so it adds nothing).
    pub fn counts_as_failure(&self) -> bool {
        self.why.is_some_and(Why::is_failure)
    }

    /// What the call came to, as an observer is told.
    pub fn outcome(&self) -> CallOutcome {
        self.why.map_or(CallOutcome::Ok, CallOutcome::Why)
    }

    /// Writes its log line.
    pub fn log(&self) {
        log_call(&self.call, self.why.map_or("ok", Why::label));
    }
}

/// The log line of a settled call.
pub fn log_call(call: &ToolCall, outcome: &str) {
    tracing::info!(
        tool = call.tool_name.as_str(),
        tool_use_id = call.tool_use_id.as_str(),
        outcome,
        duration_ms = format_args!("{:.1}", call.duration_ms),
        "tool call"
    );
}

/// The words for one failure: what the model is told, what the developer reads in
/// `toolCalls[i].error`, and the message a stop-mode run ends with.
pub struct Words {
    /// The `is_error` text for the model.
    pub model: String,
    /// `toolCalls[i].error`.
    pub dev: String,
    /// The message a stop-mode run ends with.
    pub stop: String,
}

impl Words {
    /// The developer's words end a stop-mode run as they are.
    pub fn new(model: String, dev: String) -> Self {
        Words {
            stop: dev.clone(),
            model,
            dev,
        }
    }
}

/// The call being answered.
pub struct Call {
    /// Its `tool_use` id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The model's input, verbatim.
    pub input: Box<RawValue>,
}

impl From<Requested> for Call {
    fn from(req: Requested) -> Call {
        Call {
            id: req.id,
            name: req.name,
            input: req.input,
        }
    }
}

/// The record of a call: failed when `error` is given.
pub fn record(
    call: Call,
    output: ToolOutput,
    error: Option<String>,
    elapsed: Duration,
) -> ToolCall {
    ToolCall {
        tool_name: call.name,
        input: call.input,
        output,
        is_error: error.is_some(),
        error,
        duration_ms: elapsed.as_secs_f64() * 1000.0,
        tool_use_id: call.id,
        interrupted: false,
        output_held: false,
    }
}

/// A call that ran and returned: its output, sent to the model as `content`.
pub fn succeeded(
    call: Call,
    output: ToolOutput,
    content: String,
    blocks: bool,
    elapsed: Duration,
) -> Settled {
    Settled {
        call: record(call, output, None, elapsed),
        content,
        blocks,
        failure: None,
        why: None,
    }
}

/// A failed call: its record (output `null`), the `is_error` text and the stop-mode error.
pub fn failed(call: Call, why: Why, words: Words, elapsed: Duration) -> Settled {
    let failure = why.error(words.stop).with_tool(&call.name, &call.id);
    Settled {
        call: record(call, ToolOutput::None, Some(words.dev), elapsed),
        content: words.model,
        blocks: false,
        failure: Some(failure),
        why: Some(why),
    }
}

/// A checked call answered without running it, which is an answer, not a failure.
pub fn not_run(call: Call, why: Why, dev: String, model: String) -> Settled {
    Settled {
        call: record(call, ToolOutput::None, Some(dev), Duration::ZERO),
        content: model,
        blocks: false,
        failure: None,
        why: Some(why),
    }
}

/// A call that already succeeded `times` times with the same input (`maxIdenticalCalls`): not
/// run; the model is told it has the result. Not a failure.
pub fn identical(call: Call, times: u32) -> Settled {
    let dev = fb::identical_for_developer(&call.name, times);
    let model = fb::identical_for_model(&call.name, times);
    not_run(call, Why::Identical, dev, model)
}

/// In order, a call after one that waits for approval: not run, and told so. Not a failure.
pub fn not_run_waiting(call: Call, waiting: &str) -> Settled {
    let dev = fb::not_run_waiting_for_developer(&call.name, waiting);
    let model = fb::not_run_waiting_for_model(&call.name, waiting);
    not_run(call, Why::NotRunWaiting, dev, model)
}

/// A call the person declined: answered with the denial, which is an answer, not a failure.
pub fn declined(call: Call, reason: Option<&str>) -> Settled {
    not_run(
        call,
        Why::Declined,
        fb::declined_for_developer(reason),
        fb::declined_for_model(reason),
    )
}
