//! Calls a JS tool from the engine: a weak, non-callee-handled `ThreadsafeFunction` called with
//! `call_async_catch`, whose Promise is awaited here. The JS wrapper (index.js) settles that
//! Promise with a [`ToolReply`] and never rejects; anything unexpected still becomes a failed
//! call, never a crash.

use std::sync::Arc;

use napi::bindgen_prelude::{FnArgs, Promise};
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi::Status;
use napi_derive::napi;

use crate::engine::tools::{ToolExecutor, ToolFuture, ToolInvocation, ToolOutcome};

/// What the JS wrapper of `execute` resolves with.
#[napi(object)]
pub struct ToolReply {
    /// `"text"` (a string result), `"json"` (any other result, as JSON), `"tool_error"` (a
    /// `ToolError`: content is its message) or `"error"` (anything else thrown: content is the
    /// developer's message).
    pub kind: String,
    pub content: String,
}

/// `(inputJson, toolUseId, runId) => Promise<ToolReply>`.
pub type ToolFn = ThreadsafeFunction<
    FnArgs<(String, String, u32)>,
    Promise<ToolReply>,
    FnArgs<(String, String, u32)>,
    Status,
    false,
    true,
>;

/// `(runId, toolUseId) => void`: aborts a running tool's `ctx.signal`.
pub type CancelFn = ThreadsafeFunction<
    FnArgs<(u32, String)>,
    UnknownReturnValue,
    FnArgs<(u32, String)>,
    Status,
    false,
    true,
>;

/// A registered JS tool bound to one run.
pub struct JsTool {
    pub execute: Arc<ToolFn>,
    pub cancel: Option<Arc<CancelFn>>,
    pub run_id: u32,
}

impl ToolExecutor for JsTool {
    fn execute(&self, call: ToolInvocation) -> ToolFuture {
        let execute = self.execute.clone();
        let guard = CancelOnDrop {
            cancel: self.cancel.clone(),
            run_id: self.run_id,
            tool_use_id: call.tool_use_id.clone(),
        };
        let args = FnArgs::from((call.input.get().to_owned(), call.tool_use_id, self.run_id));
        Box::pin(async move {
            let outcome = match execute.call_async_catch(args).await {
                Ok(promise) => match promise.await {
                    Ok(reply) => outcome_of(reply),
                    Err(e) => ToolOutcome::Failed(format!("its Promise rejected: {}", e.reason)),
                },
                Err(e) if e.status == Status::Closing => ToolOutcome::Failed(
                    "the JS thread that registered it is shutting down".to_owned(),
                ),
                Err(e) => ToolOutcome::Failed(format!("calling it failed: {}", e.reason)),
            };
            guard.disarm();
            outcome
        })
    }
}

fn outcome_of(reply: ToolReply) -> ToolOutcome {
    match reply.kind.as_str() {
        "text" => ToolOutcome::Output {
            content: reply.content,
            json: false,
        },
        "json" => ToolOutcome::Output {
            content: reply.content,
            json: true,
        },
        "tool_error" => ToolOutcome::ToolError(reply.content),
        "error" => ToolOutcome::Failed(reply.content),
        other => ToolOutcome::Failed(format!(
            "the tool bridge answered an unknown kind {other:?}"
        )),
    }
}

/// Dropped before the call settled (timeout, abort, run over): tell JS to abort `ctx.signal`.
struct CancelOnDrop {
    cancel: Option<Arc<CancelFn>>,
    run_id: u32,
    tool_use_id: String,
}

impl CancelOnDrop {
    /// The call settled: nothing to cancel.
    fn disarm(mut self) {
        self.cancel = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            let args = FnArgs::from((self.run_id, std::mem::take(&mut self.tool_use_id)));
            cancel.call(args, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}
