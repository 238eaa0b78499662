//! One tool round: every `tool_use` of a response is checked, run (concurrently or in order) and
//! answered, failures included, in `tool_use` order.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::Value;

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use super::approval::{self, Bound, Decision, PendingApproval};
use super::call_log::CallLog;
use super::canonical::canonical_json;
use super::config::{OnToolError, RunConfig};
use super::error::{ErrorCode, RunError};
use super::events::{EventSink, RunEvent};
use super::feedback as fb;
use super::protocol::{self, RawMessage, ResultContent, ToolResultBlock};
use super::result::{ToolCall, ToolOutput};
use super::schema;
use super::tool::{TimeLeft, Tool, ToolExecutor, ToolFuture, ToolInvocation, ToolOutcome};

/// A `tool_use` block of the model's reply.
#[derive(Clone)]
pub struct Requested {
    pub id: String,
    pub name: String,
    pub input: Box<RawValue>,
}

/// A settled call: the record for the developer and the `tool_result` for the model.
pub struct Settled {
    pub call: ToolCall,
    /// The `tool_result` text, or its content blocks as a JSON array when `blocks`.
    pub content: String,
    pub blocks: bool,
    /// The error a stop-mode run ends with, when the call failed.
    pub failure: Option<RunError>,
    /// Why it failed, when it did.
    why: Option<Why>,
}

impl Settled {
    /// Whether this failure counts towards `maxToolFailures` (a call refused as repeated was
    /// not run, so it adds nothing).
    fn counts_as_failure(&self) -> bool {
        matches!(self.why, Some(why) if !matches!(why, Why::Repeated | Why::Declined | Why::NotRunWaiting))
    }

    fn log(&self) {
        log_call(&self.call, self.why.map_or("ok", Why::label));
    }
}

/// The log line of a settled call.
fn log_call(call: &ToolCall, outcome: &str) {
    tracing::info!(
        tool = call.tool_name.as_str(),
        tool_use_id = call.tool_use_id.as_str(),
        outcome,
        duration_ms = format_args!("{:.1}", call.duration_ms),
        "tool call"
    );
}

/// The `tool_result` that answers one `tool_use`.
pub struct Answer {
    pub tool_use_id: String,
    /// Text, or a JSON array of content blocks when `blocks`.
    pub content: String,
    pub blocks: bool,
    pub is_error: bool,
}

/// How a round ended: every call answered, or some waiting for a person's yes.
pub enum RoundOutcome {
    Done(Vec<Answer>),
    /// The calls that ran have their answers; `pending` wait for approval. With
    /// `parallelToolCalls: false` the calls after the first pending one are not run and are
    /// answered so (not held: every unanswered call of a paused turn is a pending approval).
    Paused {
        answers: Vec<Answer>,
        pending: Vec<PendingApproval>,
    },
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

/// Runs one round; the calls are recorded in `log` as they start and settle. In stop mode the
/// first failure ends the run at once: calls with bad input are caught before any tool runs, and
/// the first call to fail (in time) stops the others, whose futures are dropped (their
/// `ctx.signal` aborts) and which are reported as failed.
pub async fn run_round(
    requested: Vec<Requested>,
    tools: &[Tool],
    cfg: &RunConfig,
    memory: &mut FailureMemory,
    log: &CallLog,
    events: Option<&dyn EventSink>,
    resumed: Option<&[Decision]>,
) -> Result<RoundOutcome, RunError> {
    let stop = cfg.on_tool_error == OnToolError::Stop;
    let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    log.begin_round(requested.len());
    if let Some(sink) = events {
        for req in &requested {
            sink.emit(RunEvent::ToolCall {
                id: req.id.clone(),
                name: req.name.clone(),
                input: Arc::from(req.input.clone()),
            });
        }
    }
    let mut slots: Vec<Option<Answer>> = Vec::with_capacity(requested.len());
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
                    return Err(stop_here(index, settled, log, events));
                }
                slots.push(Some(settle(index, settled, &mut keys, memory, log, events)));
            }
        }
    }

    // Approval. A resumed round's calls each have their verified decision, by position: a yes
    // runs, a no is answered with the denial, and nothing else is asked. In a round the model
    // asked for, a call whose tool asks for approval waits; in order, the calls after the first
    // one that waits are not run: they are answered once the round's other calls are done.
    let mut pending: Vec<PendingApproval> = Vec::new();
    let mut allowed: Vec<(usize, Ready)> = Vec::with_capacity(ready.len());
    let mut not_run: Vec<(usize, Ready)> = Vec::new();
    for (i, r) in ready {
        if !cfg.parallel_tool_calls && !pending.is_empty() {
            not_run.push((i, r));
            continue;
        }
        if let Some(decided) = resumed {
            let decision = &decided[i];
            if decision.approved {
                allowed.push((i, r));
            } else {
                let declined = declined(r, decision.reason.as_deref());
                slots[i] = Some(settle(i, declined, &mut keys, memory, log, events));
            }
            continue;
        }
        if let Some(policy) = &r.tool.approval {
            let asked = ToolInvocation {
                tool_use_id: r.id.clone(),
                input: r.input.clone(),
            };
            if policy.needs_approval(asked).await {
                let Some(signer) = cfg.signer.as_ref() else {
                    return Err(fb::no_approval_secret());
                };
                let bound = Bound {
                    scope: &cfg.approval_scope,
                    name: &r.tool.name,
                    tool_use_id: &r.id,
                    input: &r.input,
                };
                pending.push(PendingApproval {
                    approval_id: signer.issue(&bound),
                    tool_use_id: r.id.clone(),
                    tool_name: r.tool.name.clone(),
                    input: RawValue::from_string(r.input.get().to_owned())
                        .expect("a checked input is JSON"),
                });
                continue;
            }
        }
        allowed.push((i, r));
    }
    let timeout = cfg.tool_timeout;
    if cfg.parallel_tool_calls {
        let mut running: FuturesUnordered<_> = allowed
            .into_iter()
            .map(|(i, r)| async move { (i, execute(r, timeout, log, i).await) })
            .collect();
        while let Some((i, settled)) = running.next().await {
            if stop && settled.failure.is_some() {
                // Calls that finished by now keep their results; dropping the others cancels
                // them (their executors abort `ctx.signal`).
                while let Some(Some((j, done))) = running.next().now_or_never() {
                    settle(j, done, &mut keys, memory, log, events);
                }
                drop(running);
                let why = fb::interrupted_by(&settled.call.tool_name);
                let failure = stop_here(i, settled, log, events);
                tell_interrupted(log.interrupt(&why), events);
                return Err(failure);
            }
            slots[i] = Some(settle(i, settled, &mut keys, memory, log, events));
        }
    } else {
        for (i, r) in allowed {
            let settled = execute(r, timeout, log, i).await;
            if stop && settled.failure.is_some() {
                return Err(stop_here(i, settled, log, events));
            }
            slots[i] = Some(settle(i, settled, &mut keys, memory, log, events));
        }
    }
    if let Some(waiting) = pending.first() {
        for (i, r) in not_run {
            let settled = not_run_waiting(r, &waiting.tool_name);
            slots[i] = Some(settle(i, settled, &mut keys, memory, log, events));
        }
    }
    log.end_round();
    let answers = slots.into_iter().flatten().collect();
    if pending.is_empty() {
        Ok(RoundOutcome::Done(answers))
    } else {
        Ok(RoundOutcome::Paused { answers, pending })
    }
}

/// In order, a call after one that waits for approval: not run, and told so. Not a failure.
fn not_run_waiting(ready: Ready, waiting: &str) -> Settled {
    let name = ready.tool.name.as_str();
    let dev = fb::not_run_waiting_for_developer(name, waiting);
    let model = fb::not_run_waiting_for_model(name, waiting);
    not_run(ready, Why::NotRunWaiting, dev, model)
}

/// A checked call answered without running it, which is an answer, not a failure.
fn not_run(ready: Ready, why: Why, dev: String, model: String) -> Settled {
    let call = Call {
        id: ready.id,
        name: ready.tool.name.clone(),
        input: RawValue::from_string(ready.input.get().to_owned())
            .expect("a checked input is JSON"),
    };
    Settled {
        call: record(call, ToolOutput::None, Some(dev), Duration::ZERO),
        content: model,
        blocks: false,
        failure: None,
        why: Some(why),
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
        let model_text = fb::interrupted_for_model(&call.tool_name);
        sink.emit(RunEvent::ToolResult {
            call,
            model_text: Some(model_text),
            declined: false,
        });
    }
}

/// A call the person declined: answered with the denial, which is an answer, not a failure.
fn declined(ready: Ready, reason: Option<&str>) -> Settled {
    let dev = match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("Declined by the user: {reason}"),
        None => "Declined by the user.".to_owned(),
    };
    not_run(
        ready,
        Why::Declined,
        dev,
        approval::declined_for_model(reason),
    )
}

/// A call settled: its record joins the log at once (so an abort now still reports it), its
/// failure the memory; what remains is the `tool_result` for the model.
fn settle(
    index: usize,
    settled: Settled,
    keys: &mut [Option<(String, String)>],
    memory: &mut FailureMemory,
    log: &CallLog,
    events: Option<&dyn EventSink>,
) -> Answer {
    settled.log();
    observe(&settled, events);
    if settled.counts_as_failure() {
        if let Some(key) = keys[index].take() {
            memory.record(key);
        }
    }
    let answer = Answer {
        tool_use_id: settled.call.tool_use_id.clone(),
        content: settled.content,
        blocks: settled.blocks,
        is_error: settled.call.is_error,
    };
    log.settled(index, settled.call);
    answer
}

/// Tells an observer a call settled.
fn observe(settled: &Settled, events: Option<&dyn EventSink>) {
    if let Some(sink) = events {
        sink.emit(RunEvent::ToolResult {
            call: settled.call.clone(),
            model_text: settled.call.is_error.then(|| settled.content.clone()),
            declined: settled.why == Some(Why::Declined),
        });
    }
}

/// A stop-mode run ends with this call's failure; its record joins the log.
fn stop_here(
    index: usize,
    settled: Settled,
    log: &CallLog,
    events: Option<&dyn EventSink>,
) -> RunError {
    settled.log();
    observe(&settled, events);
    let failure = settled
        .failure
        .expect("only failures end a stop-mode round");
    log.settled(index, settled.call);
    failure
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
    /// The person declined it (an answer, not a failure).
    Declined,
    /// In order, an earlier call of the turn waits for approval (not run; not a failure).
    NotRunWaiting,
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
            Why::Declined => "declined",
            Why::NotRunWaiting => "not_run_waiting",
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
async fn execute(
    ready: Ready<'_>,
    timeout: Option<Duration>,
    log: &CallLog,
    index: usize,
) -> Settled {
    let Ready { tool, id, input } = ready;
    log.started(index, &tool.name, &id, &input);
    let started = Instant::now();
    let future = tool.executor.execute(ToolInvocation {
        tool_use_id: id.clone(),
        input: input.clone(),
    });
    let outcome = match timeout {
        Some(limit) => within(limit, future, &*tool.executor, &id).await,
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
                    blocks: false,
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
        Some(ToolOutcome::Blocks(content)) => {
            if serde_json::from_str::<Vec<&RawValue>>(&content).is_ok() {
                return Settled {
                    call: record(call, ToolOutput::Json(content.clone()), None, elapsed),
                    content,
                    blocks: true,
                    failure: None,
                    why: None,
                };
            }
            let dev = format!("The tool {name} returned content blocks that are not a JSON array.");
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

/// The call's outcome, or `None` if it did not finish within `limit` — by the clock of the
/// executor's own thread when it has one ([`ToolExecutor::time_left`]).
async fn within(
    limit: Duration,
    future: ToolFuture,
    executor: &dyn ToolExecutor,
    id: &str,
) -> Option<ToolOutcome> {
    tokio::pin!(future);
    let mut deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Ok(outcome) = tokio::time::timeout_at(deadline, &mut future).await {
            return Some(outcome);
        }
        match executor.time_left(id, limit) {
            TimeLeft::None => return None,
            TimeLeft::Finished => return Some(future.await),
            TimeLeft::Until(until) => {
                let until = tokio::time::Instant::from_std(until);
                if until <= deadline {
                    return None;
                }
                deadline = until;
            }
        }
    }
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
        interrupted: false,
    }
}

/// A failed call: its record (output `null`), the `is_error` text and the stop-mode error.
fn failed(call: Call, why: Why, words: Words, elapsed: Duration) -> Settled {
    let failure = RunError::new(why.code(), words.stop).with_tool(&call.name, &call.id);
    Settled {
        call: record(call, ToolOutput::None, Some(words.dev), elapsed),
        content: words.model,
        blocks: false,
        failure: Some(failure),
        why: Some(why),
    }
}
