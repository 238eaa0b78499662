//! Settling a round's calls: each settled call's record joins the log at once (so an abort now
//! still reports it), its failure the failure memory, the observer hears of it, and what remains
//! is the `tool_result` that answers it. Also the calls that are answered without a round: those
//! stopped while running, and those past the tool-round limit.

use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::report::calls::{ToolCall, ToolOutput};
use crate::engine::run::call_counts::{CallKey, CallMemory};
use crate::engine::run::call_outcome::{log_call, record, Settled};
use crate::engine::run::call_records::CallLog;
use crate::engine::run::check_call::{Checked, Ready};
use crate::engine::run::feedback as fb;
use crate::engine::run::model_reply::Requested;
use crate::engine::trace::events::{CallOutcome, EventSink, RunEvent};
use crate::engine::wire::protocol::{self, RawMessage, ResultContent, ToolResultBlock};

/// The `tool_result` that answers one `tool_use`.
pub struct Answer {
    /// The call it answers.
    pub tool_use_id: String,
    /// Text, or a JSON array of content blocks when `blocks`.
    pub content: String,
    /// `content` is a JSON array of content blocks.
    pub blocks: bool,
    /// The call failed (or was not run).
    pub is_error: bool,
}

impl Answer {
    /// The `tool_result` block, serialised once.
    pub fn block(&self) -> Box<RawValue> {
        let blocks = if self.blocks {
            RawValue::from_string(self.content.clone()).ok()
        } else {
            None
        };
        let block = ToolResultBlock {
            kind: "tool_result",
            tool_use_id: &self.tool_use_id,
            content: match &blocks {
                Some(raw) => ResultContent::Blocks(raw),
                None => ResultContent::Text(&self.content),
            },
            is_error: self.is_error,
        };
        serde_json::value::to_raw_value(&block)
            .expect("a tool_result of strings and JSON serialises")
    }
}

/// The user message that answers a round: its `tool_result` blocks, in the order given.
pub fn results_message(answers: &[Answer]) -> RawMessage {
    let blocks: Vec<Box<RawValue>> = answers.iter().map(Answer::block).collect();
    protocol::raw_message("user", &blocks)
}

/// A round's answers as its calls settle, one slot per call in `tool_use` order.
pub struct Answers<'r> {
    slots: Vec<Option<Answer>>,
    /// Each call's key in the call memory (continue mode, `maxIdenticalCalls`), taken when it
    /// fails.
    keys: Vec<Option<CallKey>>,
    /// Which calls were dispatched (counted as standing in the memory).
    dispatched: Vec<bool>,
    memory: &'r mut CallMemory,
    log: &'r CallLog,
    events: Option<&'r dyn EventSink>,
}

impl<'r> Answers<'r> {
    /// The answers of a round of `calls` calls.
    pub fn new(
        calls: usize,
        memory: &'r mut CallMemory,
        log: &'r CallLog,
        events: Option<&'r dyn EventSink>,
    ) -> Self {
        let mut slots = Vec::with_capacity(calls);
        slots.resize_with(calls, || None);
        let mut keys = Vec::with_capacity(calls);
        keys.resize_with(calls, || None);
        Answers {
            slots,
            keys,
            dispatched: vec![false; calls],
            memory,
            log,
            events,
        }
    }

    /// The run's call memory, for checking the next call.
    pub fn memory(&self) -> &CallMemory {
        self.memory
    }

    /// The count call `index` would be refused at (`maxIdenticalCalls`), if its exact call
    /// already stands `limit` times; nothing is counted.
    pub fn would_refuse(&self, index: usize, limit: u32) -> Option<u32> {
        let key = self.keys[index].as_ref()?;
        let standing = self.memory.standing(key);
        (standing >= limit).then_some(standing)
    }

    /// Call `index` is about to run: counted among the calls that stand (succeeded or
    /// running), unless the same call already stands `limit` times, which is returned.
    pub fn dispatch(&mut self, index: usize, id: &str, limit: u32) -> Result<(), u32> {
        let Some(key) = &self.keys[index] else {
            return Ok(());
        };
        self.memory.dispatch(key, id, limit)?;
        self.dispatched[index] = true;
        Ok(())
    }

    /// The run's call log.
    pub fn log(&self) -> &'r CallLog {
        self.log
    }

    /// The run's observer.
    pub fn events(&self) -> Option<&'r dyn EventSink> {
        self.events
    }

    /// Call `index` was checked: its key is kept for when it fails.
    pub fn checked<'t>(
        &mut self,
        index: usize,
        checked: Checked<'t>,
    ) -> Result<Ready<'t>, Settled> {
        self.keys[index] = checked.key;
        checked.result
    }

    /// Call `index` settled: it is logged, told, recorded, and its answer kept.
    pub fn settle(&mut self, index: usize, settled: Settled) {
        settled.log();
        observe(&settled, self.events);
        if settled.counts_as_failure() {
            if let Some(key) = self.keys[index].take() {
                if self.dispatched[index] {
                    self.memory
                        .dispatched_failed(&key, &settled.call.tool_use_id);
                }
                self.memory.record_failure(key);
            }
        }
        let answer = Answer {
            tool_use_id: settled.call.tool_use_id.clone(),
            content: settled.content,
            blocks: settled.blocks,
            is_error: settled.call.is_error,
        };
        self.log.settled(index, settled.call);
        self.slots[index] = Some(answer);
    }

    /// A stop-mode run ends with the failure of call `index`; its record joins the log.
    pub fn stop_here(&self, index: usize, settled: Settled) -> RunError {
        settled.log();
        observe(&settled, self.events);
        let failure = settled
            .failure
            .expect("only failures end a stop-mode round");
        self.log.settled(index, settled.call);
        failure
    }

    /// The round is over: its answers, in `tool_use` order.
    pub fn end(self) -> Vec<Answer> {
        self.log.end_round();
        self.slots.into_iter().flatten().collect()
    }
}

/// Tells an observer a call settled.
fn observe(settled: &Settled, events: Option<&dyn EventSink>) {
    if let Some(sink) = events {
        sink.emit(RunEvent::ToolResult {
            call: settled.call.clone(),
            model_text: settled.call.is_error.then(|| settled.content.clone()),
            outcome: settled.outcome(),
            at: Instant::now(),
        });
    }
}

/// Calls that started and were stopped before they finished are told to the observer like any
/// settled call, so that what it shows (a UI, the next post of a chat) knows they ran.
pub fn tell_interrupted(calls: Vec<ToolCall>, events: Option<&dyn EventSink>) {
    let Some(sink) = events else {
        return;
    };
    for call in calls {
        log_call(&call, "interrupted");
        let model_text = fb::interrupted_for_model(&call.tool_name, false);
        sink.emit(RunEvent::ToolResult {
            call,
            model_text: Some(model_text),
            outcome: CallOutcome::Interrupted,
            at: Instant::now(),
        });
    }
}

/// `onMaxIterations: "answer"`: the calls past the limit are not run; each is answered with an
/// `is_error` result saying so, and recorded as failed.
pub fn not_run_at_limit(
    requested: Vec<Requested>,
    rounds: u32,
    log: &CallLog,
    events: Option<&dyn EventSink>,
) -> Vec<Answer> {
    log.begin_round(requested.len());
    let answers = requested
        .into_iter()
        .enumerate()
        .map(|(i, req)| {
            let dev = fb::limit_for_developer(&req.name, rounds);
            let content = fb::limit_for_model(&req.name);
            let tool_use_id = req.id.clone();
            let call = record(req.into(), ToolOutput::None, Some(dev), Duration::ZERO);
            if let Some(sink) = events {
                sink.emit(RunEvent::ToolResult {
                    call: call.clone(),
                    model_text: Some(content.clone()),
                    outcome: CallOutcome::PastLimit,
                    at: Instant::now(),
                });
            }
            log.settled(i, call);
            Answer {
                tool_use_id,
                content,
                blocks: false,
                is_error: true,
            }
        })
        .collect();
    log.end_round();
    answers
}
