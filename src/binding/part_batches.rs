//! The parts of a streamed run, on their way to JS: the engine's [`RunEvent`]s as the JSON of
//! `StreamPart`s, sent in batches — one `ThreadsafeFunction` call per few milliseconds or per
//! [`MAX_BATCH`] parts, whichever comes first, never one per token. Adjacent deltas of the same
//! kind are joined, so a batch of text costs JS one part.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::call_gate::RunShared;
use super::trace_parts::{self, Traced};
use crate::engine::report::calls::{ToolCall, ToolOutput};
use crate::engine::report::usage::Usage;
use crate::engine::trace::events::CallOutcome;
use crate::engine::trace::events::Why;
use crate::engine::{EventSink, RunEvent};

/// How long parts may wait to share a call into JS.
pub const BATCH_WINDOW: Duration = Duration::from_millis(8);
/// At most this many parts in one call.
pub const MAX_BATCH: usize = 256;

/// The engine's side: events go into a channel, never blocking the run.
pub struct ChannelSink {
    /// Where the run's events go, to be batched for JS.
    pub tx: mpsc::UnboundedSender<RunEvent>,
    /// Which calls JS began: a call stopped before JS began it had no effect, and is not told.
    pub run: Arc<RunShared>,
}

impl EventSink for ChannelSink {
    fn emit(&self, event: RunEvent) {
        if let RunEvent::ToolResult { call, .. } = &event {
            if !self.run.had_effect(call) {
                return;
            }
        }
        // The forwarder is gone only when the run is over: nothing left to tell.
        let _ = self.tx.send(event);
    }
}

/// Forwards the events of `rx` in batches (`send(partsJson, false)`) until the run drops its
/// sender, then calls `send("[]", true)`. A traced run's batches carry its trace parts too.
/// The first part after a quiet moment goes at once (no added latency to the first text);
/// parts that follow within [`BATCH_WINDOW`] share a call. A step's start waits for the step's
/// first content and goes with it.
pub async fn forward(
    mut rx: mpsc::UnboundedReceiver<RunEvent>,
    trace: Option<Traced>,
    send: impl Fn(String, bool),
) {
    let mut last_flush: Option<Instant> = None;
    let mut batch: Vec<RunEvent> = Vec::new();
    let mut open = true;
    while open {
        match rx.recv().await {
            Some(event) => batch.push(event),
            None => break,
        }
        if let Some(at) = last_flush {
            let until = at + BATCH_WINDOW;
            while batch.len() < MAX_BATCH {
                match tokio::time::timeout_at(until, rx.recv()).await {
                    Ok(Some(event)) => batch.push(event),
                    Ok(None) => {
                        open = false;
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(event) => batch.push(event),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        // A step's start alone shows nothing: it waits for the step's first content, which
        // then goes at once instead of inside the window this flush would open.
        if open
            && batch
                .iter()
                .all(|e| matches!(e, RunEvent::StepStart { .. }))
        {
            continue;
        }
        let json = batch_json(std::mem::take(&mut batch), trace.as_ref());
        // A batch with nothing for JS (a trace-only run between its trace parts) is not sent.
        if json.len() > 2 {
            send(json, false);
        }
        last_flush = Some(Instant::now());
    }
    send(String::from("[]"), true);
}

/// One `StreamPart` as JSON. Successful tool outputs are `null`: JS puts back the very values
/// its tools returned.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
enum Part<'a> {
    #[serde(rename_all = "camelCase")]
    StartStep {
        step: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        run_id: Option<&'a str>,
    },
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolInputStart {
        tool_use_id: String,
        tool_name: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolInputDelta {
        tool_use_id: String,
        delta: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        tool_use_id: String,
        tool_name: String,
        input: &'a RawValue,
    },
    /// Not a StreamPart: lib/run.js tells `onToolCall` and keeps it from the stream.
    #[serde(rename_all = "camelCase")]
    ToolStart {
        tool_use_id: &'a str,
        tool_name: &'a str,
        /// The engine's clock (`clock.rs`), for a traced run's spans.
        started_at: f64,
    },
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool_use_id: &'a str,
        tool_name: &'a str,
        output: PartOutput<'a>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
        duration_ms: f64,
        /// The person declined the call (`needsApproval`): shown as denied, not as a failure.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        declined: bool,
    },
    #[serde(rename_all = "camelCase")]
    FinishStep {
        step: u32,
        stop_reason: &'a str,
        usage: Usage,
        tool_calls: &'a [ToolCall],
    },
}

/// A tool-result part's output: a failure's text for the model; `null` for a success whose value
/// JS holds (it puts it back); the value itself when no JS tool returned it (an MCP server's).
#[derive(Serialize)]
#[serde(untagged)]
enum PartOutput<'a> {
    Told(Option<&'a str>),
    Value(&'a ToolOutput),
}

/// The batch as a JSON array of parts, adjacent deltas joined; with `trace`, each settled call
/// is followed by its `trace-call` part.
pub fn batch_json(events: Vec<RunEvent>, trace: Option<&Traced>) -> String {
    let mut merged: Vec<RunEvent> = Vec::with_capacity(events.len());
    for event in events {
        match (merged.last_mut(), event) {
            (Some(RunEvent::TextDelta(a)), RunEvent::TextDelta(b)) => a.push_str(&b),
            (Some(RunEvent::ReasoningDelta(a)), RunEvent::ReasoningDelta(b)) => a.push_str(&b),
            (
                Some(RunEvent::ToolInputDelta { id: a_id, delta: a }),
                RunEvent::ToolInputDelta { id: b_id, delta: b },
            ) if *a_id == b_id => a.push_str(&b),
            (_, event) => merged.push(event),
        }
    }
    // A traced run nobody reads the parts of (no hooks, no stream) gets its trace parts alone.
    let stream_parts = trace.is_none_or(|t| t.stream_parts);
    let mut out = Vec::with_capacity(64 * merged.len());
    out.push(b'[');
    let next = |out: &mut Vec<u8>| {
        if out.len() > 1 {
            out.push(b',');
        }
    };
    for event in merged.iter_mut() {
        // JS holds the successful outputs; sending them back would only be parsed into copies.
        if let RunEvent::StepFinish { tool_calls, .. } = event {
            for call in tool_calls
                .iter_mut()
                .filter(|c| !c.is_error && c.output_held)
            {
                call.output = ToolOutput::None;
            }
        }
        match part_of(event) {
            // A traced run's spans need to know when an engine-run call began, hooks or not.
            Some(part) if stream_parts || matches!(part, Part::ToolStart { .. }) => {
                next(&mut out);
                serde_json::to_writer(&mut out, &part).expect("parts are strings, numbers and JSON")
            }
            Some(_) => {}
            None => {
                if let RunEvent::Request(request) = &*event {
                    next(&mut out);
                    trace_parts::write_request(&mut out, request);
                }
            }
        }
        if let (
            RunEvent::ToolResult {
                call, outcome, at, ..
            },
            Some(traced),
        ) = (&*event, trace)
        {
            next(&mut out);
            trace_parts::write_call(&mut out, call, *outcome, *at, traced);
        }
    }
    out.push(b']');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// The `StreamPart` of an event; none for a request, which only traces tell.
fn part_of(event: &RunEvent) -> Option<Part<'_>> {
    let part = match event {
        RunEvent::Request(_) => return None,
        RunEvent::StepStart { step, run_id } => Part::StartStep {
            step: *step,
            run_id: run_id.as_deref(),
        },
        RunEvent::TextDelta(text) => Part::TextDelta { text: text.clone() },
        RunEvent::ReasoningDelta(text) => Part::ReasoningDelta { text: text.clone() },
        RunEvent::ToolInputStart { id, name } => Part::ToolInputStart {
            tool_use_id: id.clone(),
            tool_name: name.clone(),
        },
        RunEvent::ToolInputDelta { id, delta } => Part::ToolInputDelta {
            tool_use_id: id.clone(),
            delta: delta.clone(),
        },
        RunEvent::ToolCall { id, name, input } => Part::ToolCall {
            tool_use_id: id.clone(),
            tool_name: name.clone(),
            input,
        },
        RunEvent::ToolStart { id, name, at } => Part::ToolStart {
            tool_use_id: id,
            tool_name: name,
            started_at: super::clock::ms(*at),
        },
        RunEvent::ToolResult {
            call,
            model_text,
            outcome,
            ..
        } => Part::ToolResult {
            tool_use_id: &call.tool_use_id,
            tool_name: &call.tool_name,
            output: if call.is_error {
                PartOutput::Told(model_text.as_deref())
            } else if call.output_held {
                PartOutput::Told(None)
            } else {
                PartOutput::Value(&call.output)
            },
            is_error: call.is_error,
            error: call.error.as_deref(),
            duration_ms: call.duration_ms,
            declined: *outcome == CallOutcome::Why(Why::Declined),
        },
        RunEvent::StepFinish {
            step,
            stop_reason,
            usage,
            tool_calls,
        } => Part::FinishStep {
            step: *step,
            stop_reason,
            usage: *usage,
            tool_calls,
        },
    };
    Some(part)
}

#[cfg(test)]
mod tests;
