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
use super::result::{ToolCall, ToolOutput};
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
    /// Why it failed, when it did.
    why: Option<Why>,
}

impl Settled {
    /// Whether this failure counts towards `maxToolFailures` (a call refused as repeated was
    /// not run, so it adds nothing).
    fn counts_as_failure(&self) -> bool {
        matches!(self.why, Some(why) if why != Why::Repeated)
    }

    fn log(&self) {
        tracing::info!(
            tool = self.call.tool_name.as_str(),
            tool_use_id = self.call.tool_use_id.as_str(),
            outcome = self.why.map_or("ok", Why::label),
            duration_ms = format_args!("{:.1}", self.call.duration_ms),
            "tool call"
        );
    }
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
    // The failure memory only matters when failures go back to the model: a stop-mode run ends
    // at its first failure, so it needs no key per call.
    let mut keys: Vec<Option<(String, String)>> = Vec::with_capacity(requested.len());
    let mut ready: Vec<(usize, Ready)> = Vec::new();

    for (index, req) in requested.into_iter().enumerate() {
        let parsed: Option<Value> = serde_json::from_str(req.input.get()).ok();
        let key = (!stop).then(|| {
            let input = parsed
                .as_ref()
                .map(canonical_json)
                .unwrap_or_else(|| req.input.get().to_owned());
            (req.name.clone(), input)
        });
        let failures_so_far = key.as_ref().map_or(0, |k| memory.count(k));
        keys.push(key);
        match check(req, parsed, tools, &offered, cfg, failures_so_far) {
            Ok(r) => {
                slots.push(None);
                ready.push((index, r));
            }
            Err(settled) => {
                if stop {
                    settled.log();
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
            s.log();
            if s.counts_as_failure() {
                if let Some(key) = keys[i].take() {
                    memory.record(key);
                }
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

/// Why a call failed: decides its error code and its label in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    UnknownTool,
    InvalidInput,
    Repeated,
    Timeout,
    ToolError,
    Threw,
    BadOutput,
}

impl Why {
    fn code(self) -> ErrorCode {
        match self {
            Why::UnknownTool | Why::InvalidInput => ErrorCode::ToolValidationError,
            _ => ErrorCode::ToolExecutionError,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Why::UnknownTool => "unknown_tool",
            Why::InvalidInput => "invalid_input",
            Why::Repeated => "not_run_repeated",
            Why::Timeout => "timeout",
            Why::ToolError => "tool_error",
            Why::Threw => "threw",
            Why::BadOutput => "bad_output",
        }
    }
}

/// The words for one failure: what the model is told, what the developer reads in
/// `toolCalls[i].error`, and the message a stop-mode run ends with.
struct Words {
    model: String,
    dev: String,
    stop: String,
}

impl Words {
    /// The developer's words end a stop-mode run as they are.
    fn new(model: String, dev: String) -> Self {
        Words {
            stop: dev.clone(),
            model,
            dev,
        }
    }
}

/// The call being answered.
struct Call {
    id: String,
    name: String,
    input: Box<RawValue>,
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
    let call = Call {
        id: req.id,
        name: req.name,
        input: req.input,
    };
    let name = call.name.as_str();
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        let words = Words::new(
            fb::unknown_tool_for_model(name, offered),
            fb::unknown_tool_for_developer(name, offered),
        );
        return Err(failed(call, Why::UnknownTool, words, Duration::ZERO));
    };
    let problems = match &parsed {
        Some(value) => schema::check(&tool.validator, value).err(),
        None => Some(vec!["(root): the input is not valid JSON".to_owned()]),
    };
    if let Some(problems) = problems {
        let words = Words::new(
            fb::invalid_input_for_model(name, &problems),
            fb::invalid_input_for_developer(name, &problems),
        );
        return Err(failed(call, Why::InvalidInput, words, Duration::ZERO));
    }
    if cfg.on_tool_error == OnToolError::Continue && failures_so_far >= cfg.max_tool_failures {
        let words = Words::new(
            fb::repeated_for_model(name, failures_so_far),
            fb::repeated_for_developer(name, failures_so_far),
        );
        return Err(failed(call, Why::Repeated, words, Duration::ZERO));
    }
    Ok(Ready {
        tool,
        id: call.id,
        input: Arc::from(call.input),
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
    let name = tool.name.as_str();
    let call = Call {
        id,
        name: name.to_owned(),
        input: serde_json::value::to_raw_value(&*input).expect("raw JSON always serialises"),
    };
    let (why, words) = match outcome {
        Some(ToolOutcome::Output { content, json }) => {
            let valid = !json
                || tool.executor.json_is_trusted()
                || serde_json::from_str::<serde::de::IgnoredAny>(&content).is_ok();
            if valid {
                let output = if json {
                    ToolOutput::Json(content.clone())
                } else {
                    ToolOutput::Text(content.clone())
                };
                return Settled {
                    call: record(call, output, None, elapsed),
                    content,
                    failure: None,
                    why: None,
                };
            }
            let dev = format!("The tool {name} returned output that is not valid JSON.");
            (
                Why::BadOutput,
                Words::new(fb::internal_error_for_model(name), dev),
            )
        }
        None => {
            let ms = timeout.unwrap_or_default().as_millis();
            let words = Words::new(
                fb::timeout_for_model(name, ms),
                fb::timeout_for_developer(name, ms),
            );
            (Why::Timeout, words)
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
                fb::internal_error_for_model(name)
            } else {
                message
            };
            (Why::ToolError, Words { model, dev, stop })
        }
        Some(ToolOutcome::InvalidInput(problems)) => {
            let words = Words::new(
                fb::invalid_input_for_model(name, &problems),
                fb::invalid_input_for_developer(name, &problems),
            );
            (Why::InvalidInput, words)
        }
        Some(ToolOutcome::Failed(message)) => {
            let dev = format!("The tool {name} failed: {message}");
            let stop = format!("{} {}", fb::sentence(&dev), fb::STOP_ADVICE);
            let model = fb::internal_error_for_model(name);
            (Why::Threw, Words { model, dev, stop })
        }
    };
    failed(call, why, words, elapsed)
}

fn record(call: Call, output: ToolOutput, error: Option<String>, elapsed: Duration) -> ToolCall {
    ToolCall {
        tool_name: call.name,
        input: call.input,
        output,
        is_error: error.is_some(),
        error,
        duration_ms: elapsed.as_secs_f64() * 1000.0,
        tool_use_id: call.id,
    }
}

/// A failed call: its record (output `null`), the `is_error` text and the stop-mode error.
fn failed(call: Call, why: Why, words: Words, elapsed: Duration) -> Settled {
    let failure = RunError::new(why.code(), words.stop).with_tool(&call.name, &call.id);
    Settled {
        call: record(call, ToolOutput::None, Some(words.dev), elapsed),
        content: words.model,
        failure: Some(failure),
        why: Some(why),
    }
}
