//! Calls a JS tool from the engine: a weak, non-callee-handled `ThreadsafeFunction` called
//! without waiting for a return value; the JS layer (lib/tool-bridge.js) hands the call's [`ToolReply`]
//! back with `RunControl.settle`, a plain synchronous call, and the engine awaits it on a
//! channel. No Promise crosses per call (each one costs the JS thread two functions made, a
//! `then` and a settled job), and the wrapper always settles; anything unexpected still becomes
//! a failed call, never a crash.
//!
//! Cancellation is part of the protocol: each call carries its run and `tool_use` ids, the JS
//! wrapper asks the run's [`RunShared`] at dispatch whether it may start, and a call the engine
//! gave up on before that never starts (see `call_gate.rs`).

use std::sync::Arc;

use napi::bindgen_prelude::{FnArgs, Promise};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::Status;
use tokio_util::sync::CancellationToken;

use super::callback::JsCallback;

use crate::binding::call_gate::{GiveUp, RunShared};
pub use crate::binding::call_gate::{ReplyKind, ToolReply};
use std::future::Future;
use std::pin::Pin;

use crate::engine::run::feedback as fb;
use crate::engine::tools::tool::ApprovalPolicy;
use crate::engine::tools::tool::{TimeLeft, ToolExecutor, ToolFuture, ToolInvocation, ToolOutcome};

/// `(inputJson, toolUseId, runId, attempt, idempotencyKey) => void`; the wrapper settles the
/// call through its run's `RunControl.settle(toolUseId, kind, content)`. `idempotencyKey` is
/// `""` outside a durable run (the key is then the `tool_use` id).
pub type ToolFn = JsCallback<(String, String, u32, u32, String)>;

/// `(runId, toolUseId) => void`: aborts a running tool's `ctx.signal`.
pub type CancelFn = JsCallback<(u32, String)>;

/// `(inputJson, toolUseId, runId, toolName) => Promise<boolean>`: the tool's (or its MCP
/// server's) `needsApproval` function.
pub type ApprovalFn = JsCallback<(String, String, u32, String), Promise<bool>>;

/// A JS `needsApproval` function bound to one run. Anything that goes wrong asking it counts
/// as "needs approval": a risky call never slips through because a check failed.
pub struct JsApproval {
    /// The tool's `needsApproval`, wrapped by lib/tool-bridge.js.
    pub ask: Arc<ApprovalFn>,
    /// The run it is asked for.
    pub run_id: u32,
    /// The tool's name (an MCP server's one function is asked about each of its tools).
    pub tool: String,
}

impl ApprovalPolicy for JsApproval {
    fn needs_approval(&self, call: ToolInvocation) -> Pin<Box<dyn Future<Output = bool> + Send>> {
        let ask = self.ask.clone();
        let args = FnArgs::from((
            call.input.get().to_owned(),
            call.tool_use_id,
            self.run_id,
            self.tool.clone(),
        ));
        Box::pin(async move {
            match ask.call_async_catch(args).await {
                Ok(promise) => promise.await.unwrap_or(true),
                Err(_) => true,
            }
        })
    }
}

/// A registered JS tool bound to one run.
pub struct JsTool {
    /// The JS wrapper that runs the tool's `execute`.
    pub execute: Arc<ToolFn>,
    /// Aborts a running call's `ctx.signal`; also asks whether the JS thread is alive.
    pub cancel: Option<Arc<CancelFn>>,
    /// The run the tool is bound to, handed back to JS with each call.
    pub run_id: u32,
    /// What the run shares with the JS thread: whether each call may start, and its reply.
    pub run: Arc<RunShared>,
    /// The registering thread's shutdown token ([`super::registry::Registry::shutdown`]).
    pub shutdown: CancellationToken,
}

impl ToolExecutor for JsTool {
    fn json_is_trusted(&self) -> bool {
        // lib/tool-bridge.js makes every "json" reply with JSON.stringify.
        true
    }

    fn runs_in_caller(&self) -> bool {
        // lib/tool-bridge.js calls onToolCall before execute and keeps each value its tool
        // returned (`run.outputs`).
        true
    }

    fn time_left(&self, tool_use_id: &str, limit: std::time::Duration) -> TimeLeft {
        self.run.time_left(tool_use_id, limit)
    }

    fn execute(&self, call: ToolInvocation) -> ToolFuture {
        let execute = self.execute.clone();
        let guard = GiveUpOnDrop {
            cancel: self.cancel.clone(),
            run: self.run.clone(),
            run_id: self.run_id,
            tool_use_id: Some(call.tool_use_id.clone()),
        };
        let run = self.run.clone();
        let tool_use_id = call.tool_use_id.clone();
        // Outside a durable run the key is the `tool_use` id, which JS already has.
        let key = if call.idempotency_key == call.tool_use_id {
            String::new()
        } else {
            call.idempotency_key
        };
        let args = FnArgs::from((
            call.input.get().to_owned(),
            call.tool_use_id,
            self.run_id,
            call.attempt,
            key,
        ));
        let shutdown = self.shutdown.clone();
        let ping = self.cancel.clone();
        Box::pin(async move {
            // Expected before it is sent, so that no reply can come before its channel.
            let reply = run.expect(&tool_use_id);
            let outcome = match execute.call(args, ThreadsafeFunctionCallMode::NonBlocking) {
                Status::Ok => match reply.await {
                    Ok(reply) => outcome_of(reply),
                    // Only the end of the run drops a channel whose call is still awaited.
                    Err(_) => {
                        let why = fb::REPLY_NEVER_CAME.to_owned();
                        unless_thread_gone(&shutdown, ping.as_deref(), why).await
                    }
                },
                // Only a thread shutting down closes a tool's function while a run holds it.
                Status::Closing => {
                    shutdown.cancel();
                    std::future::pending().await
                }
                status => {
                    let why = fb::calling_failed(status);
                    unless_thread_gone(&shutdown, ping.as_deref(), why).await
                }
            };
            guard.settled();
            outcome
        })
    }
}

/// The JS layer always settles, and lib/tool-bridge.js holds each call's Promise until it settles, so a
/// call fails here only when its thread is being torn down (a worker terminated) or JS could not
/// be entered. To tell which, ask the thread: a call through its cancel hook (a no-op for an
/// unknown call) comes back only from a live thread. A dying thread's call never settles, so the
/// round does not go on and send the API a made-up failure; the thread's cleanup hook cancels
/// `shutdown` and the run ends (`run.rs`). A live thread's answer makes it the tool's
/// failure.
async fn unless_thread_gone(
    shutdown: &CancellationToken,
    ping: Option<&CancelFn>,
    why: String,
) -> ToolOutcome {
    if let Some(ping) = ping {
        let alive = async {
            ping.call_async(FnArgs::from((0, String::new())))
                .await
                .is_ok()
        };
        tokio::select! {
            biased;
            _ = shutdown.cancelled() => std::future::pending::<()>().await,
            true = alive => {}
            else => std::future::pending::<()>().await,
        }
    }
    if shutdown.is_cancelled() {
        return std::future::pending().await;
    }
    ToolOutcome::Failed(why)
}

fn outcome_of(mut reply: ToolReply) -> ToolOutcome {
    // Read on the JS thread into a buffer sized for the worst case (`js_text.rs`): the spare
    // capacity goes back here, on the engine's thread.
    reply.content.shrink_to_fit();
    match reply.kind {
        ReplyKind::Text => ToolOutcome::Output {
            content: reply.content,
            json: false,
        },
        ReplyKind::Json => ToolOutcome::Output {
            content: reply.content,
            json: true,
        },
        ReplyKind::Blocks => ToolOutcome::Blocks(reply.content),
        ReplyKind::InvalidInput => {
            ToolOutcome::InvalidInput(reply.content.lines().map(str::to_owned).collect())
        }
        ReplyKind::ToolError => ToolOutcome::ToolError(reply.content),
        ReplyKind::Error => ToolOutcome::Failed(reply.content),
        ReplyKind::UnserializableValue => {
            ToolOutcome::Failed(fb::unserializable_value(&reply.content))
        }
        ReplyKind::UnserializableBlocks => {
            ToolOutcome::Failed(fb::unserializable_blocks(&reply.content))
        }
        ReplyKind::WrapperFailed => ToolOutcome::Failed(fb::wrapper_failed(&reply.content)),
        ReplyKind::WrapperUndescribed => {
            ToolOutcome::Failed(fb::WRAPPER_FAILED_UNDESCRIBED.to_owned())
        }
        ReplyKind::CancelledInCheck => ToolOutcome::Failed(fb::CANCELLED_IN_CHECK.to_owned()),
        // Only a call the engine gave up on is refused at dispatch, and then nobody awaits this.
        ReplyKind::NotStarted => ToolOutcome::Failed(fb::NOT_STARTED.to_owned()),
    }
}

/// Dropped before the call settled (timeout, abort, a sibling failed, the run ended): a call not
/// yet started never starts; a running one has its `ctx.signal` aborted.
struct GiveUpOnDrop {
    cancel: Option<Arc<CancelFn>>,
    run: Arc<RunShared>,
    run_id: u32,
    tool_use_id: Option<String>,
}

impl GiveUpOnDrop {
    /// The call settled: nothing to cancel.
    fn settled(mut self) {
        if let Some(id) = self.tool_use_id.take() {
            self.run.settled(&id);
        }
    }
}

impl Drop for GiveUpOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.tool_use_id.take() else {
            return;
        };
        if self.run.give_up(&id) == GiveUp::AbortRunning {
            if let Some(cancel) = &self.cancel {
                cancel.call(
                    FnArgs::from((self.run_id, id)),
                    ThreadsafeFunctionCallMode::NonBlocking,
                );
            }
        }
    }
}
