//! The napi exports: conversions between JS values and the binding, nothing more.
//! The public API is index.js, with the JS layer in lib/ over these.

use std::sync::Arc;

use napi::bindgen_prelude::Null;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use crate::binding::call_gate::{ReplyKind, RunShared, ToolReply};
use crate::binding::js_failure::{self, JsProblem};
use crate::binding::node::js_text::JsText;
use crate::binding::node::registry::{Approval, Registry};
pub use crate::binding::node::run_channel::RunChannel;
use crate::binding::node::tool_bridge::{ApprovalFn, CancelFn, ToolFn};
use crate::binding::options::list::{JsKind, JS_ONLY};
use crate::engine::{self, ToolSpec};

/// The model used when neither the `model` option nor `ANTHROPIC_MODEL` names one.
#[napi]
pub const DEFAULT_MODEL: &str = engine::run::config::DEFAULT_MODEL;
/// `max_tokens` of each request unless `maxTokens` says otherwise.
#[napi]
pub const DEFAULT_MAX_TOKENS: u32 = engine::run::config::DEFAULT_MAX_TOKENS;
/// Tool rounds allowed unless `maxToolIterations` says otherwise.
#[napi]
pub const DEFAULT_MAX_TOOL_ITERATIONS: u32 = engine::run::config::DEFAULT_MAX_TOOL_ITERATIONS;

/// Builds what the first tool definition needs once per process on a thread of its own (see
/// `engine::tools::schema::warm_up`); index.js calls it as it loads.
#[napi(catch_unwind)]
pub fn warm_up() {
    engine::tools::schema::warm_up();
}

/// Registers (or replaces) a tool. `definition_json` is the definition as JSON text; a bad one
/// throws an `InvalidArg` error whose message starts `registerTool:`. `always_approve`: every
/// call needs a person's yes first; `needs_approval`: ask this function per call.
#[napi(
    catch_unwind,
    ts_args_type = "definitionJson: string, execute: (inputJson: string, toolUseId: string, runId: number, attempt: number, idempotencyKey: string) => void, alwaysApprove?: boolean, needsApproval?: (inputJson: string, toolUseId: string, runId: number, toolName: string) => Promise<boolean>, reportInterrupted?: boolean"
)]
pub fn register_tool(
    env: Env,
    definition_json: String,
    execute: ToolFn,
    always_approve: Option<bool>,
    needs_approval: Option<ApprovalFn>,
    report_interrupted: Option<bool>,
) -> Result<()> {
    let spec = ToolSpec::new(&definition_json)
        .map_err(|why| Error::new(Status::InvalidArg, format!("registerTool: {why}")))?;
    let approval = match (always_approve, needs_approval) {
        (_, Some(ask)) => Approval::Ask(Arc::new(ask)),
        (Some(true), None) => Approval::Always,
        _ => Approval::Never,
    };
    Registry::of(&env)?
        .insert(
            spec,
            Arc::new(execute),
            approval,
            report_interrupted.unwrap_or(false),
        )
        .map_err(|why| Error::new(Status::InvalidArg, format!("registerTool: {why}")))
}

/// Removes a tool; whether it was registered.
#[napi(catch_unwind)]
pub fn unregister_tool(env: Env, name: String) -> Result<bool> {
    Ok(Registry::of(&env)?.remove(&name))
}

/// The registered definitions, as a JSON array: the JS tools in registration order, then each
/// MCP server's.
#[napi(catch_unwind)]
pub fn list_tools(env: Env) -> Result<String> {
    let registry = Registry::of(&env)?;
    let mcp = registry.mcp.tools();
    let defs: Vec<&str> = registry
        .entries
        .iter()
        .map(|e| e.spec.definition.get())
        .chain(mcp.iter().map(|(t, _)| t.definition.get()))
        .collect();
    Ok(format!("[{}]", defs.join(",")))
}

/// Sets the function that aborts a running tool's `ctx.signal`: `(runId, toolUseId) => void`.
#[napi(
    catch_unwind,
    ts_args_type = "cancel: (runId: number, toolUseId: string) => void"
)]
pub fn set_cancel_hook(env: Env, cancel: CancelFn) -> Result<()> {
    Registry::of(&env)?.cancel = Some(Arc::new(cancel));
    Ok(())
}

/// One run's handle in JS: aborts it, answers at each tool call's dispatch whether the call may
/// start, and takes each call's reply.
#[napi]
pub struct RunControl {
    pub(crate) shared: Arc<RunShared>,
}

#[napi]
impl RunControl {
    /// A handle for one run, before it starts.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        RunControl {
            shared: Arc::new(RunShared::default()),
        }
    }

    /// Ends the run with `aborted`, dropping its request and tools.
    #[napi]
    pub fn abort(&self) {
        self.shared.abort.cancel();
    }

    /// Called by the tool wrapper at dispatch: whether this call may start (not when it was
    /// cancelled, timed out, or its run ended or was aborted first).
    #[napi]
    pub fn begin(&self, tool_use_id: String) -> bool {
        self.shared.begin(&tool_use_id)
    }

    /// Called by the tool wrapper when a call it began has finished but its reply must wait for
    /// a later turn of the event loop: the call finished now, whatever its timeout says later.
    #[napi]
    pub fn finished(&self, tool_use_id: String) {
        self.shared.finished(&tool_use_id);
    }

    /// Called by the tool wrapper, once per call it was sent, when the call has settled: hands
    /// the engine its reply (nothing happens if the engine no longer waits for it).
    #[napi(ts_args_type = "toolUseId: string, kind: ReplyKind, content: string")]
    pub fn settle(&self, tool_use_id: String, kind: ReplyKind, content: JsText) {
        self.shared.settle(
            &tool_use_id,
            ToolReply {
                kind,
                content: content.0,
            },
        );
    }
}

/// The engine's clock now, in the milliseconds trace parts are timed in (see `clock.rs`): JS
/// reads it once per thread to tie the two clocks.
#[napi]
pub fn trace_clock_ms() -> f64 {
    crate::binding::clock::now_ms()
}

/// An option the JS layer keeps rather than sending it to Rust as JSON, and what its value must be.
#[napi(object, object_from_js = false)]
pub struct JsOnlyOption {
    /// The option's name.
    pub name: String,
    /// What its value must be: lib/options.js checks it before the run starts.
    pub kind: JsKind,
}

/// The result text of a call the person declined (`run/feedback.rs`), for `fromUIMessages`,
/// which rebuilds that result from what `useChat` posts.
#[napi]
pub fn declined_for_model(reason: Option<String>) -> String {
    engine::run::feedback::declined_for_model(reason.as_deref())
}

/// The options the JS layer keeps, in the order it checks them (the list of `options/list.rs`).
#[napi]
pub fn js_only_options() -> Vec<JsOnlyOption> {
    JS_ONLY
        .iter()
        .map(|o| JsOnlyOption {
            name: o.name.to_owned(),
            kind: o.kind,
        })
        .collect()
}

/// What a run resolves with when it fails before it starts: `{ data: null, error }`.
#[napi(object, object_from_js = false)]
pub struct EarlyFailure {
    /// Always `null`.
    pub data: Null,
    /// The failure.
    pub error: EarlyError,
}

/// The `error` of an `EarlyFailure`.
#[napi(object, object_from_js = false)]
pub struct EarlyError {
    /// The error code, as every failed run has one.
    pub code: String,
    /// What went wrong, and what to do.
    pub message: String,
}

/// The failure of a check the JS layer makes itself before a run starts. `detail` is what JS can
/// tell about it (the value described, or the message thrown); `option` names the option of a
/// `bad_option`.
#[napi(catch_unwind)]
pub fn js_failure(problem: JsProblem, detail: String, option: Option<String>) -> EarlyFailure {
    let error = js_failure::js_failure(problem, &detail, option.as_deref());
    EarlyFailure {
        data: Null,
        error: EarlyError {
            code: error.code.as_str().to_owned(),
            message: error.message,
        },
    }
}

/// `"release"` or `"debug"`: benchmarks refuse to measure a debug build.
#[napi]
pub fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// The engine's Tokio worker threads, and the cores this process may use as Rust counts them
/// (`[workers, cores]`): for diagnostics and the test that the default is one fewer than the
/// cores.
#[napi]
pub async fn engine_threads() -> Vec<u32> {
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    vec![workers as u32, crate::binding::runtime::cores() as u32]
}

/// The Tokio runtime the engine runs on: `ANTHROPIC_TOOL_CALLING_THREADS` worker threads if set,
/// else one fewer than the cores (`binding::runtime`). napi-rs' own default, one per core, is
/// kept only if this runtime cannot be built.
#[napi_derive::module_init]
fn init_runtime() {
    let set = std::env::var("ANTHROPIC_TOOL_CALLING_THREADS").ok();
    let threads =
        crate::binding::runtime::worker_threads(set.as_deref(), crate::binding::runtime::cores());
    if let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        napi::bindgen_prelude::create_custom_tokio_runtime(rt);
    }
}
