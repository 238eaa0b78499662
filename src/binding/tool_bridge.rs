//! Calls a JS tool from the engine: a weak, non-callee-handled `ThreadsafeFunction` called with
//! `call_async_catch`, whose Promise is awaited here. The JS wrapper (index.js) settles that
//! Promise with a [`ToolReply`] and never rejects; anything unexpected still becomes a failed
//! call, never a crash.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::{FnArgs, Promise};
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi::Status;
use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::engine::tools::{ToolExecutor, ToolFuture, ToolInvocation, ToolOutcome};

/// What the JS wrapper of `execute` resolves with.
#[napi(object)]
pub struct ToolReply {
    /// `"text"` (a string result), `"json"` (any other result, as JSON), `"tool_error"` (a
    /// `ToolError`: content is its message), `"invalid_input"` (the tool's Standard Schema refused
    /// the input: content is one `field: reason` line per problem) or `"error"` (anything else
    /// thrown: content is the developer's message).
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
    /// The registering thread's shutdown token ([`super::registry::Registry::shutdown`]).
    pub shutdown: CancellationToken,
}

impl ToolExecutor for JsTool {
    fn json_is_trusted(&self) -> bool {
        // index.js makes every "json" reply with JSON.stringify.
        true
    }

    fn execute(&self, call: ToolInvocation) -> ToolFuture {
        let execute = self.execute.clone();
        let guard = CancelOnDrop {
            cancel: self.cancel.clone(),
            run_id: self.run_id,
            tool_use_id: call.tool_use_id.clone(),
        };
        let args = FnArgs::from((call.input.get().to_owned(), call.tool_use_id, self.run_id));
        let shutdown = self.shutdown.clone();
        Box::pin(async move {
            let outcome = match execute.call_async_catch(args).await {
                Ok(promise) => match promise.await {
                    Ok(reply) => outcome_of(reply),
                    Err(e) => {
                        unless_thread_gone(&shutdown, format!("its Promise rejected: {}", e.reason))
                            .await
                    }
                },
                // Only a thread shutting down closes a tool's function while a run holds it.
                Err(e) if e.status == Status::Closing => {
                    shutdown.cancel();
                    std::future::pending().await
                }
                Err(e) => {
                    unless_thread_gone(&shutdown, format!("calling it failed: {}", e.reason)).await
                }
            };
            guard.disarm();
            outcome
        })
    }
}

/// How long a failed call waits to learn whether its JS thread is going away.
const THREAD_GONE_GRACE: Duration = Duration::from_millis(250);

/// The JS wrapper never rejects, so a call fails here only when its Promise was dropped unsettled
/// (garbage-collected, or its thread is being torn down) or JS could not be entered (a worker
/// being terminated). A dying thread's cleanup hook cancels `shutdown` within moments: then the
/// call never settles, so that the round does not go on and send the API a made-up failure, and
/// `run_with_tools` ends the run. Otherwise it is the tool's failure.
async fn unless_thread_gone(shutdown: &CancellationToken, why: String) -> ToolOutcome {
    tokio::select! {
        _ = shutdown.cancelled() => std::future::pending().await,
        _ = tokio::time::sleep(THREAD_GONE_GRACE) => ToolOutcome::Failed(why),
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
        // content: the problems, one `field: reason` per line.
        "invalid_input" => {
            ToolOutcome::InvalidInput(reply.content.lines().map(str::to_owned).collect())
        }
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
