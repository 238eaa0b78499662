//! One tool round: every `tool_use` of a response is checked, run (concurrently or in order) and
//! answered, failures included, in `tool_use` order.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::Value;

use super::canonical::canonical_json;
use super::config::{OnToolError, RunConfig};
use super::error::{ErrorCode, RunError};
use super::feedback as fb;
use super::result::ToolCall;
use super::schema;
use super::tools::{Tool, ToolInvocation, ToolOutcome};

/// A `tool_use` block of the model's reply.
pub struct Requested {
    pub id: String,
    pub name: String,
    pub input: Box<RawValue>,
}

/// A settled call: the record for the developer and the `tool_result` for the model.
pub struct Settled {
    pub call: ToolCall,
    /// The `tool_result` text.
    pub content: String,
    /// The error a stop-mode run ends with, when the call failed.
    pub failure: Option<RunError>,
    /// Whether a failure counts towards `maxToolFailures` (a call refused as repeated does not).
    pub remember: bool,
}

/// How often each exact call (tool name + canonical input) has failed in this run.
#[derive(Default)]
pub struct FailureMemory {
    counts: HashMap<(String, String), u32>,
}

impl FailureMemory {
    fn count(&self, key: &(String, String)) -> u32 {
        self.counts.get(key).copied().unwrap_or(0)
    }
    fn record(&mut self, key: (String, String)) {
        *self.counts.entry(key).or_insert(0) += 1;
    }
}

/// A call that passed its checks and may run.
struct Ready<'t> {
    tool: &'t Tool,
    id: String,
    input: Arc<RawValue>,
}

/// Runs one round. In stop mode the first failure (in `tool_use` order) ends the run: calls
/// with bad input are caught before any tool runs, and in-order execution stops at a failure.
pub async fn run_round(
    requested: Vec<Requested>,
    tools: &[Tool],
    cfg: &RunConfig,
    memory: &mut FailureMemory,
) -> Result<Vec<Settled>, RunError> {
    let stop = cfg.on_tool_error == OnToolError::Stop;
    let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut slots: Vec<Option<Settled>> = Vec::with_capacity(requested.len());
    let mut keys: Vec<(String, String)> = Vec::with_capacity(requested.len());
    let mut ready: Vec<(usize, Ready)> = Vec::new();

    for (index, req) in requested.into_iter().enumerate() {
        let parsed: Option<Value> = serde_json::from_str(req.input.get()).ok();
        keys.push((
            req.name.clone(),
            parsed
                .as_ref()
                .map(canonical_json)
                .unwrap_or_else(|| req.input.get().to_owned()),
        ));
        match check(
            req,
            parsed,
            tools,
            &offered,
            cfg,
            memory.count(&keys[index]),
        ) {
            Ok(r) => {
                slots.push(None);
                ready.push((index, r));
            }
            Err(settled) => {
                if stop {
                    return Err(stop_error(settled, Vec::new()));
                }
                slots.push(Some(settled));
            }
        }
    }

    if cfg.parallel_tool_calls {
        let runs = ready
            .into_iter()
            .map(|(i, r)| async move { (i, execute(r, cfg.tool_timeout).await) });
        for (i, settled) in futures::future::join_all(runs).await {
            slots[i] = Some(settled);
        }
    } else {
        for (i, r) in ready {
            let settled = execute(r, cfg.tool_timeout).await;
            let failed = settled.failure.is_some();
            slots[i] = Some(settled);
            if failed && stop {
                break;
            }
        }
    }

    let mut settled: Vec<Settled> = Vec::with_capacity(slots.len());
    for (i, slot) in slots.into_iter().enumerate() {
        if let Some(s) = slot {
            if s.failure.is_some() && s.remember {
                memory.record(keys[i].clone());
            }
            settled.push(s);
        }
    }
    if stop {
        if let Some(pos) = settled.iter().position(|s| s.failure.is_some()) {
            let calls: Vec<ToolCall> = settled.iter().map(|s| s.call.clone()).collect();
            let failed = settled.swap_remove(pos);
            return Err(stop_error(failed, calls));
        }
    }
    Ok(settled)
}

fn stop_error(settled: Settled, calls: Vec<ToolCall>) -> RunError {
    let call = settled.call;
    let mut error = settled
        .failure
        .expect("only failures end a stop-mode round");
    error.tool_calls = if calls.is_empty() { vec![call] } else { calls };
    error
}

/// Finds the tool, validates the input and consults the failure memory.
fn check<'t>(
    req: Requested,
    parsed: Option<Value>,
    tools: &'t [Tool],
    offered: &[&str],
    cfg: &RunConfig,
    failures_so_far: u32,
) -> Result<Ready<'t>, Settled> {
    let Some(tool) = tools.iter().find(|t| t.name == req.name) else {
        let dev = fb::unknown_tool_for_developer(&req.name, offered);
        let model = fb::unknown_tool_for_model(&req.name, offered);
        return Err(failed(
            req.id,
            req.name,
            req.input,
            model,
            dev.clone(),
            ErrorCode::ToolValidationError,
            dev,
            Duration::ZERO,
        ));
    };
    let problems = match &parsed {
        Some(value) => schema::check(&tool.validator, value).err(),
        None => Some(vec!["(root): the input is not valid JSON".to_owned()]),
    };
    if let Some(problems) = problems {
        let dev = fb::invalid_input_for_developer(&req.name, &problems);
        let model = fb::invalid_input_for_model(&req.name, &problems);
        return Err(failed(
            req.id,
            req.name,
            req.input,
            model,
            dev.clone(),
            ErrorCode::ToolValidationError,
            dev,
            Duration::ZERO,
        ));
    }
    if cfg.on_tool_error == OnToolError::Continue && failures_so_far >= cfg.max_tool_failures {
        let dev = fb::repeated_for_developer(&req.name, failures_so_far);
        let model = fb::repeated_for_model(&req.name, failures_so_far);
        let mut s = failed(
            req.id,
            req.name,
            req.input,
            model,
            dev.clone(),
            ErrorCode::ToolExecutionError,
            dev,
            Duration::ZERO,
        );
        // Not run, so not a new failure: the memory keeps its count.
        s.remember = false;
        return Err(s);
    }
    Ok(Ready {
        tool,
        id: req.id,
        input: Arc::from(req.input),
    })
}

/// Runs a checked call, with the run's per-call timeout.
async fn execute(ready: Ready<'_>, timeout: Option<Duration>) -> Settled {
    let Ready { tool, id, input } = ready;
    let started = Instant::now();
    let future = tool.executor.execute(ToolInvocation {
        tool_use_id: id.clone(),
        input: input.clone(),
    });
    let outcome = match timeout {
        Some(limit) => tokio::time::timeout(limit, future).await.ok(),
        None => Some(future.await),
    };
    let elapsed = started.elapsed();
    let name = tool.name.clone();
    let input_box: Box<RawValue> =
        RawValue::from_string(input.get().to_owned()).expect("was valid JSON");
    match outcome {
        None => {
            let ms = timeout.unwrap_or_default().as_millis();
            let dev = fb::timeout_for_developer(&name, ms);
            let model = fb::timeout_for_model(&name, ms);
            failed(
                id,
                name,
                input_box,
                model,
                dev.clone(),
                ErrorCode::ToolExecutionError,
                dev,
                elapsed,
            )
        }
        Some(ToolOutcome::Output { content, json }) => {
            let output = if json {
                RawValue::from_string(content.clone()).ok()
            } else {
                RawValue::from_string(Value::String(content.clone()).to_string()).ok()
            };
            match output {
                Some(output) => Settled {
                    call: record(&id, &name, input_box, output, None, elapsed),
                    content,
                    failure: None,
                    remember: false,
                },
                None => {
                    let dev = format!("The tool {name} returned output that is not valid JSON.");
                    let model = fb::internal_error_for_model(&name);
                    failed(
                        id,
                        name,
                        input_box,
                        model,
                        dev.clone(),
                        ErrorCode::ToolExecutionError,
                        dev,
                        elapsed,
                    )
                }
            }
        }
        Some(ToolOutcome::ToolError(message)) => {
            let dev = format!("The tool {name} threw a ToolError: {message}");
            let stop = format!(
                "The tool {name} failed: {} {}",
                fb::sentence(&message),
                fb::STOP_ADVICE
            );
            // The API refuses an empty `is_error` result ("content cannot be empty if
            // `is_error` is true"), which would end the whole run: say something instead.
            let model = if message.trim().is_empty() {
                fb::internal_error_for_model(&name)
            } else {
                message
            };
            failed(
                id,
                name,
                input_box,
                model,
                dev,
                ErrorCode::ToolExecutionError,
                stop,
                elapsed,
            )
        }
        Some(ToolOutcome::Failed(message)) => {
            let dev = format!("The tool {name} failed: {message}");
            let stop = format!("{} {}", fb::sentence(&dev), fb::STOP_ADVICE);
            let model = fb::internal_error_for_model(&name);
            failed(
                id,
                name,
                input_box,
                model,
                dev,
                ErrorCode::ToolExecutionError,
                stop,
                elapsed,
            )
        }
    }
}

fn record(
    id: &str,
    name: &str,
    input: Box<RawValue>,
    output: Box<RawValue>,
    error: Option<String>,
    elapsed: Duration,
) -> ToolCall {
    ToolCall {
        tool_name: name.to_owned(),
        input,
        output,
        is_error: error.is_some(),
        error,
        duration_ms: elapsed.as_secs_f64() * 1000.0,
        tool_use_id: id.to_owned(),
    }
}

/// A failed call: `model` goes to the model, `dev` into the record, `stop_message` into the
/// error a stop-mode run ends with.
#[allow(clippy::too_many_arguments)]
fn failed(
    id: String,
    name: String,
    input: Box<RawValue>,
    model: String,
    dev: String,
    code: ErrorCode,
    stop_message: String,
    elapsed: Duration,
) -> Settled {
    let null = RawValue::from_string("null".to_owned()).expect("null is JSON");
    let failure = RunError::new(code, stop_message).with_tool(&name, &id);
    Settled {
        call: record(&id, &name, input, null, Some(dev), elapsed),
        content: model,
        failure: Some(failure),
        remember: true,
    }
}
