//! What a run and its tool calls share with the JS thread, so that cancellation is exact: a
//! call that was cancelled (timeout, abort, a stop-mode sibling failed) or whose run ended before
//! JS dispatched it is never started. JS asks [`RunShared::begin`] at dispatch; the engine's
//! side marks a call cancelled when it drops the call's future. One lock orders the two.
//!
//! A call's reply comes back the same way: the engine [`RunShared::expect`]s it before the call
//! goes to JS, and JS hands it over with [`RunShared::settle`], a plain synchronous call (no
//! Promise crosses for it).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::engine::tools::tool::TimeLeft;
use crate::engine::ToolCall;

/// How a tool call ended, as the JS wrapper reports it.
#[cfg_attr(feature = "node", napi_derive::napi(string_enum = "snake_case"))]
#[derive(Debug, PartialEq, Eq)]
pub enum ReplyKind {
    /// A string result (`content` is the string).
    Text,
    /// Any other result, as JSON text.
    Json,
    /// `toolResult(blocks)`: `content` is the blocks as a JSON array.
    Blocks,
    /// The tool's Standard Schema refused the input: `content` is one `field: reason` line per
    /// problem.
    InvalidInput,
    /// A `ToolError`: `content` is its message, for the model.
    ToolError,
    /// Anything else thrown: `content` is what was thrown, described for the developer.
    Error,
    /// The value `execute` returned has no JSON form: `content` is the JS error's message.
    UnserializableValue,
    /// The blocks of the `toolResult` `execute` returned have no JSON form: `content` is the
    /// JS error's message.
    UnserializableBlocks,
    /// The wrapper around the tool threw (reading its output, say): `content` is what was
    /// thrown, described.
    WrapperFailed,
    /// The wrapper threw, and describing what it threw threw too (`content` is empty).
    WrapperUndescribed,
    /// The engine gave up on the call while its Standard Schema checked the input: `execute`
    /// never started (`content` is empty).
    CancelledInCheck,
    /// The call was cancelled, or its run ended, before it could start: it was not run.
    NotStarted,
}

/// What the JS wrapper of `execute` settles a call with (`RunControl.settle`).
#[derive(Debug)]
pub struct ToolReply {
    /// How the call ended.
    pub kind: ReplyKind,
    /// What it ended with; `kind` says how to read it.
    pub content: String,
}

/// Where one call stands, as far as starting it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallState {
    /// JS began the call at this moment, and finished it at the second one (its reply waiting
    /// for its turn on the JS thread).
    Started(Instant, Option<Instant>),
    /// The engine gave up on it before JS began it: never start it.
    Cancelled,
}

/// The shared state of one run.
#[derive(Default)]
pub struct RunShared {
    /// Cancelled by the run's AbortSignal.
    pub abort: CancellationToken,
    calls: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    ended: bool,
    states: HashMap<String, CallState>,
    /// Every call JS began, for the run's report: an interrupted call that never began is left
    /// out of it (it had no effect).
    begun: HashSet<String>,
    /// Where each call's reply goes, from the moment the engine sends the call to JS.
    replies: HashMap<String, oneshot::Sender<ToolReply>>,
}

/// What the engine's side should do when it gives up on a call.
#[derive(Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// JS is running it: abort its `ctx.signal`.
    AbortRunning,
    /// JS has not started it, and now never will.
    NeverStarts,
}

impl RunShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// JS, at dispatch: may this call start? No if the run was aborted or has ended, or the
    /// engine gave up on the call already.
    pub fn begin(&self, tool_use_id: &str) -> bool {
        let mut calls = self.lock();
        if calls.ended || self.abort.is_cancelled() {
            return false;
        }
        match calls.states.get(tool_use_id) {
            Some(CallState::Cancelled) => {
                calls.states.remove(tool_use_id);
                false
            }
            Some(CallState::Started(..)) => false,
            None => {
                calls.states.insert(
                    tool_use_id.to_owned(),
                    CallState::Started(Instant::now(), None),
                );
                calls.begun.insert(tool_use_id.to_owned());
                true
            }
        }
    }

    /// JS: a call it began has finished, and its reply waits for its turn on the JS thread. The
    /// moment is taken here, under the lock [`RunShared::time_left`] takes, so that the two agree
    /// on which came first.
    pub fn finished(&self, tool_use_id: &str) {
        let mut calls = self.lock();
        if let Some(CallState::Started(_, done @ None)) = calls.states.get_mut(tool_use_id) {
            *done = Some(Instant::now());
        }
    }

    /// The engine, when its timer for a call has run for `limit`: a call JS began later than
    /// that has time until `began + limit`; one JS finished within its `limit` is waited for.
    pub fn time_left(&self, tool_use_id: &str, limit: Duration) -> TimeLeft {
        let calls = self.lock();
        match calls.states.get(tool_use_id) {
            Some(CallState::Started(began, Some(done))) if done.duration_since(*began) <= limit => {
                TimeLeft::Finished
            }
            Some(CallState::Started(began, None)) if began.elapsed() < limit => {
                TimeLeft::Until(*began + limit)
            }
            _ => TimeLeft::None,
        }
    }

    /// The engine, before it sends a call to JS: where the call's reply will come.
    pub fn expect(&self, tool_use_id: &str) -> oneshot::Receiver<ToolReply> {
        let (tx, rx) = oneshot::channel();
        let mut calls = self.lock();
        if !calls.ended {
            calls.replies.insert(tool_use_id.to_owned(), tx);
        }
        rx
    }

    /// JS: a call it was sent has settled. A reply nobody waits for any more is dropped.
    pub fn settle(&self, tool_use_id: &str, reply: ToolReply) {
        let tx = self.lock().replies.remove(tool_use_id);
        if let Some(tx) = tx {
            let _ = tx.send(reply);
        }
    }

    /// The engine no longer wants this call's result.
    pub fn give_up(&self, tool_use_id: &str) -> GiveUp {
        let mut calls = self.lock();
        calls.replies.remove(tool_use_id);
        match calls.states.remove(tool_use_id) {
            Some(CallState::Started(..)) => GiveUp::AbortRunning,
            _ => {
                if !calls.ended {
                    calls
                        .states
                        .insert(tool_use_id.to_owned(), CallState::Cancelled);
                }
                GiveUp::NeverStarts
            }
        }
    }

    /// The call settled: nothing more to track.
    pub fn settled(&self, tool_use_id: &str) {
        let mut calls = self.lock();
        calls.states.remove(tool_use_id);
        calls.replies.remove(tool_use_id);
    }

    /// Whether JS began this call.
    pub fn began(&self, tool_use_id: &str) -> bool {
        self.lock().begun.contains(tool_use_id)
    }

    /// Whether a call the run reports may have had an effect: every call but one interrupted
    /// before JS began it. Only those are reported, in the result and as they happen.
    pub fn had_effect(&self, call: &ToolCall) -> bool {
        !call.interrupted || self.began(&call.tool_use_id)
    }

    /// The run is over: no call of it starts any more.
    pub fn end(&self) {
        let mut calls = self.lock();
        calls.ended = true;
        calls.states.clear();
        calls.replies.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_given_up_before_dispatch_never_starts() {
        let run = RunShared::default();
        assert_eq!(run.give_up("a"), GiveUp::NeverStarts);
        assert!(!run.begin("a"));
    }

    #[test]
    fn a_started_call_given_up_is_aborted_and_not_started_twice() {
        let run = RunShared::default();
        assert!(run.begin("a"));
        assert!(!run.begin("a"));
        assert_eq!(run.give_up("a"), GiveUp::AbortRunning);
    }

    #[test]
    fn nothing_starts_after_an_abort_or_the_end_of_the_run() {
        let run = RunShared::default();
        run.abort.cancel();
        assert!(!run.begin("a"));
        let run = RunShared::default();
        assert!(run.begin("a"));
        run.settled("a");
        run.end();
        assert!(!run.begin("b"));
        assert!(run.began("a") && !run.began("b"));
    }

    fn reply(content: &str) -> ToolReply {
        ToolReply {
            kind: ReplyKind::Text,
            content: content.to_owned(),
        }
    }

    #[test]
    fn a_reply_reaches_the_call_that_expects_it_and_no_other() {
        let run = RunShared::default();
        let mut a = run.expect("a");
        let mut b = run.expect("b");
        run.settle("a", reply("done"));
        assert_eq!(
            a.try_recv().map(|r| r.content).ok().as_deref(),
            Some("done")
        );
        assert!(b.try_recv().is_err());
        // Given up on, or after the end of the run: the reply goes nowhere.
        run.give_up("b");
        run.settle("b", reply("late"));
        assert!(b.try_recv().is_err());
        let mut c = run.expect("c");
        run.end();
        run.settle("c", reply("after the end"));
        assert!(c.try_recv().is_err());
    }
}
