//! The record of every tool call of a run, kept outside the cancellable part of the loop: a run
//! ended by its signal, or stopped by a failure while other calls were running, still reports
//! every call that started — a started call may have had side effects, so none is hidden.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::value::RawValue;

use crate::engine::report::calls::{ToolCall, ToolOutput};

/// The calls of a run: those of finished rounds, and the current round's, in `tool_use` order.
#[derive(Default)]
pub struct CallLog {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    done: Vec<ToolCall>,
    /// Where the last ended round's calls start in `done`.
    last_round: usize,
    round: Vec<Slot>,
}

enum Slot {
    /// Checked, not started (yet, or ever).
    Waiting,
    Running {
        name: String,
        id: String,
        input: Arc<RawValue>,
        started: Instant,
        /// Its executor runs where the run was started ([`ToolExecutor::runs_in_caller`]).
        in_caller: bool,
    },
    Settled(ToolCall),
}

impl CallLog {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while the lock was held left nothing half-written worth refusing.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new round of `calls` calls.
    pub fn begin_round(&self, calls: usize) {
        let mut inner = self.lock();
        inner.round.clear();
        inner.round.resize_with(calls, || Slot::Waiting);
    }

    /// Call `index` of the round was handed to its tool; `in_caller`: its executor runs where
    /// the run was started, which alone knows whether the call really began.
    pub fn started(
        &self,
        index: usize,
        name: &str,
        id: &str,
        input: &Arc<RawValue>,
        in_caller: bool,
    ) {
        if let Some(slot) = self.lock().round.get_mut(index) {
            *slot = Slot::Running {
                name: name.to_owned(),
                id: id.to_owned(),
                input: input.clone(),
                started: Instant::now(),
                in_caller,
            };
        }
    }

    /// Call `index` of the round settled (or failed its checks).
    pub fn settled(&self, index: usize, call: ToolCall) {
        if let Some(slot) = self.lock().round.get_mut(index) {
            *slot = Slot::Settled(call);
        }
    }

    /// The calls still running are reported as failed with `why`: they were stopped. Returns
    /// them (copies, for observers).
    pub fn interrupt(&self, why: &str) -> Vec<ToolCall> {
        let mut interrupted = Vec::new();
        let mut inner = self.lock();
        for slot in inner.round.iter_mut() {
            if let Slot::Running {
                name,
                id,
                input,
                started,
                in_caller,
            } = slot
            {
                let input = RawValue::from_string(input.get().to_owned())
                    .expect("the input was valid JSON when the call started");
                let call = ToolCall {
                    tool_name: std::mem::take(name),
                    input,
                    output: ToolOutput::None,
                    is_error: true,
                    error: Some(why.to_owned()),
                    duration_ms: started.elapsed().as_secs_f64() * 1000.0,
                    tool_use_id: std::mem::take(id),
                    // One the engine handed to its own executor (an MCP server's) began: it
                    // is reported like any stopped call.
                    interrupted: *in_caller,
                    output_held: false,
                };
                interrupted.push(call.clone());
                *slot = Slot::Settled(call);
            }
        }
        interrupted
    }

    /// The round's settled calls join the run's, in `tool_use` order; calls that never started
    /// are left out.
    pub fn end_round(&self) {
        let mut inner = self.lock();
        let round = std::mem::take(&mut inner.round);
        inner.last_round = inner.done.len();
        for slot in round {
            if let Slot::Settled(call) = slot {
                inner.done.push(call);
            }
        }
    }

    /// The calls of the last round that ended (copies, for observers).
    pub fn last_round(&self) -> Vec<ToolCall> {
        let inner = self.lock();
        inner.done[inner.last_round.min(inner.done.len())..].to_vec()
    }

    /// Every call of the run so far; the ones still running are reported failed with `why`.
    pub fn take(&self, why: &str) -> Vec<ToolCall> {
        self.interrupt(why);
        self.end_round();
        std::mem::take(&mut self.lock().done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            tool_name: "t".into(),
            input: RawValue::from_string("{}".into()).unwrap(),
            output: ToolOutput::Text("ok".into()),
            is_error: false,
            error: None,
            duration_ms: 1.0,
            tool_use_id: id.into(),
            interrupted: false,
            output_held: false,
        }
    }

    #[test]
    fn reports_finished_and_interrupted_calls_in_order_and_leaves_out_unstarted_ones() {
        let log = CallLog::default();
        log.begin_round(1);
        log.settled(0, call("a"));
        log.end_round();
        log.begin_round(3);
        let input: Arc<RawValue> = Arc::from(RawValue::from_string(r#"{"x":1}"#.into()).unwrap());
        log.started(0, "slow", "b", &input, true);
        log.settled(1, call("c"));
        // slot 2 never started
        let calls = log.take("aborted");
        let ids: Vec<&str> = calls.iter().map(|c| c.tool_use_id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert!(calls[1].is_error);
        assert_eq!(calls[1].error.as_deref(), Some("aborted"));
        assert_eq!(calls[1].input.get(), r#"{"x":1}"#);
        assert_eq!(calls[1].tool_name, "slow");
        assert!(!calls[2].is_error);
        assert!(log.take("x").is_empty());
    }
}
