//! A settled call as a durable run's journal keeps it (JSON), and back: a call that finished in
//! a process that stopped is answered from its record when the run is taken over, never run
//! again.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::engine::report::calls::ToolOutput;
use crate::engine::run::call_outcome::{record, Call, Settled};
use crate::engine::run::check_call::Ready;
use crate::engine::trace::events::Why;

/// What is kept of a settled call: the record's fields, the `tool_result`, and the failure.
#[derive(Serialize, Deserialize)]
struct Kept<'a> {
    /// `"text"`, `"json"` or absent: what `output` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<&'a str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    duration_ms: f64,
    content: String,
    #[serde(default)]
    blocks: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    why: Option<&'a str>,
    /// The message a stop-mode run ends with, when the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop: Option<String>,
}

/// The record of `settled`, as JSON.
pub fn to_record(settled: &Settled) -> String {
    let (kind, output) = match &settled.call.output {
        ToolOutput::None => (None, None),
        ToolOutput::Text(t) => (Some("text"), Some(t.clone())),
        ToolOutput::Json(j) => (Some("json"), Some(j.clone())),
    };
    let kept = Kept {
        kind,
        output,
        error: settled.call.error.clone(),
        duration_ms: settled.call.duration_ms,
        content: settled.content.clone(),
        blocks: settled.blocks,
        why: settled.why.map(Why::label),
        stop: settled.failure.as_ref().map(|f| f.message.clone()),
    };
    serde_json::to_string(&kept).unwrap_or_default()
}

/// The call `ready` as its record says it settled; `None` for a record that cannot be read
/// (the call then runs again, as if it had only started).
pub fn from_record(ready: &Ready<'_>, json: &str) -> Option<Settled> {
    let kept: Kept = serde_json::from_str(json).ok()?;
    let output = match (kept.kind, kept.output) {
        (Some("text"), Some(t)) => ToolOutput::Text(t),
        (Some("json"), Some(j)) => ToolOutput::Json(j),
        _ => ToolOutput::None,
    };
    let why = match kept.why {
        Some(label) => Some(Why::from_label(label)?),
        None => None,
    };
    let call = Call {
        id: ready.id.clone(),
        name: ready.tool.name.clone(),
        input: RawValue::from_string(ready.input.get().to_owned()).ok()?,
    };
    let elapsed = Duration::from_secs_f64((kept.duration_ms / 1000.0).max(0.0));
    let failure = match (why, kept.stop) {
        (Some(why), Some(stop)) => Some(why.error(stop).with_tool(&call.name, &call.id)),
        _ => None,
    };
    Some(Settled {
        call: record(call, output, kept.error, elapsed),
        content: kept.content,
        blocks: kept.blocks,
        failure,
        why,
    })
}
