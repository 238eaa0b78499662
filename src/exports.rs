//! The napi exports: conversions between JS and the engine, nothing more.
//! The public API is index.js, a thin layer over these.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use futures::FutureExt;
use napi::bindgen_prelude::{Buffer, PromiseRaw};
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::binding::options::{parse_request, RunRequest};
use crate::binding::registry::Registry;
use crate::binding::tool_bridge::{CancelFn, JsTool, ToolFn};
use crate::engine::{self, ApiClient, ErrorCode, RunError, Tool};

/// One HTTP client, and so one keep-alive pool, per process.
fn client() -> &'static ApiClient {
    static CLIENT: OnceLock<ApiClient> = OnceLock::new();
    CLIENT.get_or_init(ApiClient::new)
}

/// Registers (or replaces) a tool. `definition_json` is the definition as JSON text; a bad one
/// throws an `InvalidArg` error whose message starts `registerTool:`.
#[napi(
    catch_unwind,
    ts_args_type = "definitionJson: string, execute: (inputJson: string, toolUseId: string, runId: number) => Promise<ToolReply>"
)]
pub fn register_tool(env: Env, definition_json: String, execute: ToolFn) -> Result<()> {
    let execute = Arc::new(execute);
    let bridge = Arc::new(JsTool {
        execute: execute.clone(),
        cancel: None,
        run_id: 0,
        shutdown: CancellationToken::new(),
    });
    let tool = Tool::new(&definition_json, bridge)
        .map_err(|why| Error::new(Status::InvalidArg, format!("registerTool: {why}")))?;
    Registry::of(&env)?.insert(tool, execute);
    Ok(())
}

/// Removes a tool; whether it was registered.
#[napi(catch_unwind)]
pub fn unregister_tool(env: Env, name: String) -> Result<bool> {
    Ok(Registry::of(&env)?.remove(&name))
}

/// The registered definitions, as a JSON array, in registration order.
#[napi(catch_unwind)]
pub fn list_tools(env: Env) -> Result<String> {
    let registry = Registry::of(&env)?;
    let defs: Vec<&str> = registry
        .entries
        .iter()
        .map(|e| e.tool.definition.get())
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

/// Lets JS abort a run it started.
#[napi]
pub struct RunControl {
    token: CancellationToken,
}

#[napi]
impl RunControl {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        RunControl {
            token: CancellationToken::new(),
        }
    }

    /// Ends the run with `aborted`, dropping its request and tools.
    #[napi]
    pub fn abort(&self) {
        self.token.cancel();
    }
}

/// What a run resolves with, as JSON text for `JSON.parse` in JS (one crossing, no object
/// conversion). `result` is `{ data, error }` with every successful tool call's `output` left
/// `null` (JS puts back the very value the tool returned) and `data.messages` empty: the history
/// comes apart in `messages`, UTF-8 JSON in a Buffer that takes over this memory (no copy, no
/// JS string of the whole history unless `data.messages` is read).
#[napi(object)]
pub struct RunReply {
    pub result: String,
    pub messages: Option<Buffer>,
}

/// Runs a conversation. `request_json` is `{ prompt, options, env }`; never rejects.
/// `run_id` is handed back to tool calls.
#[napi(catch_unwind)]
pub fn run_with_tools<'env>(
    env: &'env Env,
    request_json: String,
    run_id: u32,
    control: &RunControl,
) -> Result<PromiseRaw<'env, RunReply>> {
    crate::binding::logging::init_from_env();
    let token = control.token.clone();
    let registry = Registry::of(env);
    let shutdown = registry
        .as_ref()
        .map(|r| r.shutdown.clone())
        .unwrap_or_default();
    let prepared = parse_request(&request_json).and_then(|request| {
        let tools = registry
            .map_err(|e| RunError::new(ErrorCode::UnknownError, e.reason.clone()))?
            .select(request.tool_names.as_deref(), run_id)?;
        check_tool_choice(&request, &tools)?;
        Ok((request, tools))
    });
    let test_panic = request_json.contains("\"__panicForTest\":true");
    env.spawn_future(async move {
        let outcome = AssertUnwindSafe(async move {
            if test_panic {
                panic!("panic requested by a test");
            }
            let (request, tools) = prepared?;
            // A run whose thread is gone (a terminated worker) ends here, dropping its request
            // and tools, rather than going on talking to the API for nobody.
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => Err(RunError::new(
                    ErrorCode::Aborted,
                    "The run was stopped: the JS thread that started it is shutting down.",
                )),
                result = engine::run(client(), &request.config, &tools, request.messages, &token) => result,
            }
        })
        .catch_unwind()
        .await;
        let result = match outcome {
            Ok(result) => result,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_owned());
                let error = RunError::new(
                    ErrorCode::UnknownError,
                    format!("Internal error in anthropic-tool-calling (a Rust panic: {what}). Please report it."),
                );
                Err(error)
            }
        };
        reply_of(result).map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
    })
}

fn reply_of(
    result: std::result::Result<engine::RunOutput, RunError>,
) -> serde_json::Result<RunReply> {
    match result {
        Ok(mut data) => {
            let messages = serde_json::to_vec(&data.messages)?;
            data.messages = Vec::new();
            blank_outputs(&mut data.tool_calls);
            let result = serde_json::to_string(&Envelope {
                data: Some(&data),
                error: None,
            })?;
            Ok(RunReply {
                result,
                messages: Some(Buffer::from(messages)),
            })
        }
        Err(mut error) => {
            blank_outputs(&mut error.tool_calls);
            let result = serde_json::to_string(&Envelope {
                data: None,
                error: Some(&error),
            })?;
            Ok(RunReply {
                result,
                messages: None,
            })
        }
    }
}

/// JS holds every output its tools returned; sending them back as JSON would only be parsed
/// into copies of what it has.
fn blank_outputs(calls: &mut [engine::ToolCall]) {
    for call in calls.iter_mut().filter(|c| !c.is_error) {
        call.output = engine::result::ToolOutput::None;
    }
}

/// What `runWithTools` resolves with: `{ data, error }`, one of them `null`.
#[derive(Serialize)]
struct Envelope<'a> {
    data: Option<&'a engine::RunOutput>,
    error: Option<&'a RunError>,
}

fn check_tool_choice(request: &RunRequest, tools: &[Tool]) -> std::result::Result<(), RunError> {
    let Some(choice) = &request.config.tool_choice else {
        return Ok(());
    };
    let value: serde_json::Value = serde_json::from_str(choice.get()).unwrap_or_default();
    if let Some(name) = value.get("name").and_then(|n| n.as_str()) {
        if !tools.iter().any(|t| t.name == name) {
            return Err(RunError::invalid_request(format!(
                "Option toolChoice names the tool {name:?}, which is not offered in this run. Nothing was sent."
            )));
        }
    }
    Ok(())
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

/// The Tokio runtime the engine runs on: `ANTHROPIC_TOOL_CALLING_THREADS` worker threads if set,
/// else the napi-rs default (one per core).
#[napi_derive::module_init]
fn init_runtime() {
    let Some(threads) = std::env::var("ANTHROPIC_TOOL_CALLING_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
    else {
        return;
    };
    if let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        napi::bindgen_prelude::create_custom_tokio_runtime(rt);
    }
}
