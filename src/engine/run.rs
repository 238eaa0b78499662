//! The loop: request → tool calls → results → request … until an answer or a limit. What each
//! `stop_reason` does is the `match` in [`run_loop`] (the rules are in `stop.rs`).

use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::api::ApiClient;
use super::call_log::CallLog;
use super::config::{OnMaxIterations, RunConfig};
use super::error::{ErrorCode, RunError};
use super::events::{EventSink, RunEvent};
use super::feedback as fb;
use super::protocol::{self, Container, ContentBlock, RawMessage};
use super::request::{self, Turn};
use super::result::{RunOutput, ToolCall, ToolOutput, Usage};
use super::resume;
use super::round::{
    results_message, run_round, tell_interrupted, Answer, FailureMemory, Requested, RoundOutcome,
};
use super::stop::StopReason;
use super::stream::StreamEvent;
use super::tool::Tool;
use super::trust;

/// Runs a conversation to its answer. `messages` is the history so far (the last one from the
/// user); `tools` are the tools offered. Cancelling `cancel` ends the run at once with `aborted`,
/// dropping the request in flight and every running tool.
pub async fn run(
    client: &ApiClient,
    cfg: &RunConfig,
    tools: &[Tool],
    messages: Vec<RawMessage>,
    cancel: &CancellationToken,
) -> Result<RunOutput, RunError> {
    run_observed(client, cfg, tools, messages, cancel, None).await
}

/// [`run`], telling `events` what happens as it happens (steps, the reply's deltas when
/// `cfg.stream`, tool calls and results).
pub async fn run_observed(
    client: &ApiClient,
    cfg: &RunConfig,
    tools: &[Tool],
    messages: Vec<RawMessage>,
    cancel: &CancellationToken,
    events: Option<&dyn EventSink>,
) -> Result<RunOutput, RunError> {
    if cancel.is_cancelled() {
        return Err(aborted());
    }
    // The calls live out here, so that a run ended by its signal still reports them.
    let log = CallLog::default();
    let finished = {
        let work = run_loop(client, cfg, tools, messages, &log, events);
        tokio::pin!(work);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            result = &mut work => Some(result),
        }
    };
    // Calls still running were stopped (abort, the run ended by an error): their results are
    // told like any other, before the end, so that nothing shown hides a call that ran.
    let interrupted = log.interrupt(fb::ABORTED_CALL);
    tell_interrupted(interrupted, events);
    match finished {
        Some(Ok(mut output)) => {
            output.tool_calls = log.take(fb::ABORTED_CALL);
            Ok(output)
        }
        Some(Err(mut error)) => {
            error.tool_calls = log.take(fb::ABORTED_CALL);
            Err(error)
        }
        None => {
            let mut error = aborted();
            error.tool_calls = log.take(fb::ABORTED_CALL);
            Err(error)
        }
    }
}

fn aborted() -> RunError {
    RunError::new(
        ErrorCode::Aborted,
        "The run was aborted by its AbortSignal.",
    )
}

/// One reply, read: its blocks' text and thinking, and its client tool calls.
struct Reply {
    text: String,
    thinking: Vec<String>,
    requested: Vec<Requested>,
}

async fn run_loop(
    client: &ApiClient,
    cfg: &RunConfig,
    tools: &[Tool],
    mut messages: Vec<RawMessage>,
    log: &CallLog,
    events: Option<&dyn EventSink>,
) -> Result<RunOutput, RunError> {
    let definitions: Vec<&RawValue> = tools.iter().map(|t| &*t.definition).collect();
    let none_choice =
        RawValue::from_string(r#"{"type":"none"}"#.to_owned()).expect("a JSON object");
    let mut usage = Usage::default();
    let mut memory = FailureMemory::default();
    let mut reasoning: Vec<String> = Vec::new();
    let mut rounds = 0u32;
    let mut first = true;
    let mut container: Option<Container> = None;
    // The content of a paused server-tool turn, sent back as the last message.
    let mut paused: Option<Box<RawValue>> = None;
    // Set once the tool-round limit was answered (`onMaxIterations: "answer"`).
    let mut limit_reached = false;
    let mut step = 0u32;
    let mut thought_before = false;
    if cfg.signer.is_none() && tools.iter().any(|t| t.approval.is_some()) {
        return Err(fb::no_approval_secret());
    }
    // The history is untrusted: one id, one call, so that no decision or reply can cover two.
    let mut call_ids = trust::call_ids(&messages)?;
    // A run paused for approval resumes here: its waiting calls run (or are declined) and their
    // results join the history before the first request.
    match resume::waiting(&messages)? {
        Some(waiting) => {
            let decided = resume::decisions(
                &waiting,
                &cfg.approvals,
                cfg.signer.as_ref(),
                &cfg.approval_scope,
            )?;
            rounds += 1;
            let requested = waiting.calls.clone();
            let resumed = Some(decided.as_slice());
            match run_round(requested, tools, cfg, &mut memory, log, events, resumed).await? {
                RoundOutcome::Done(answers) => waiting.answer(&mut messages, &answers),
                // Every call of a resumed round has its decision: none can wait again.
                RoundOutcome::Paused { .. } => {
                    return Err(RunError::new(
                        ErrorCode::UnknownError,
                        "Internal error in anthropic-tool-calling: a resumed call waited for approval again. Please report it.",
                    ))
                }
            }
        }
        None if !cfg.approvals.is_empty() => {
            return Err(RunError::invalid_request(
                "Option approvals was given, but the prompt's history has no tool call waiting for approval: resume with data.messages of the run that stopped with approval_required. Nothing was sent.",
            ))
        }
        None => {}
    }
    loop {
        let tool_choice = if limit_reached {
            Some(&*none_choice)
        } else {
            cfg.tool_choice.as_ref().map(|c| {
                if first || !c.forcing {
                    &*c.raw
                } else {
                    &*c.after_first
                }
            })
        };
        let turn = Turn {
            tool_choice,
            container: container
                .as_ref()
                .map(|c| c.id.as_str())
                .or(cfg.container.as_deref()),
            stream: cfg.stream,
        };
        let body = request::body(cfg, &definitions, &messages, &turn);
        first = false;
        if let Some(sink) = events {
            sink.emit(RunEvent::StepStart { step });
        }
        let response = match events {
            Some(sink) if cfg.stream => {
                let mut forward = Deltas::new(sink, &mut thought_before);
                client
                    .create_message_streamed(&cfg.api, body, &mut |e| forward.on(e))
                    .await?
            }
            _ => client.create_message(&cfg.api, body).await?,
        };
        usage.add(&response.usage);
        let step_usage = {
            let mut u = Usage::default();
            u.add(&response.usage);
            u
        };
        let finish_step = |tool_calls: Vec<ToolCall>| {
            if let Some(sink) = events {
                sink.emit(RunEvent::StepFinish {
                    step,
                    stop_reason: response.stop_reason.clone().unwrap_or_default(),
                    usage: step_usage,
                    tool_calls,
                });
            }
        };
        if response.container.is_some() {
            container = response.container.clone();
        }
        let wire_reason = response.stop_reason.clone().unwrap_or_default();
        // A paused turn and its continuation are one assistant message.
        let content = match paused.take() {
            Some(before) => {
                messages.pop();
                protocol::join_content(&before, &response.content)
            }
            None => response.content,
        };
        let reply = read_reply(&content)?;
        reasoning.extend(reply.thinking.iter().cloned());

        let answer = |messages: Vec<RawMessage>, reasoning: Vec<String>| RunOutput {
            text: reply.text.clone(),
            reasoning: reasoning.join("\n\n"),
            tool_calls: Vec::new(),
            stop_reason: wire_reason.clone(),
            usage,
            messages,
            limit_reached,
            container: container.clone(),
            pending_approvals: Vec::new(),
        };
        match StopReason::of(response.stop_reason.as_deref()) {
            StopReason::PauseTurn => {
                if rounds >= cfg.max_tool_iterations {
                    return Err(RunError::new(
                        ErrorCode::MaxIterationsExceeded,
                        format!(
                            "The model's server-tool turn was paused (pause_turn) after {rounds} round(s), the limit set by maxToolIterations; \
                             it was not continued. Raise maxToolIterations to let long server-tool turns finish."
                        ),
                    ));
                }
                rounds += 1;
                finish_step(Vec::new());
                step += 1;
                messages.push(protocol::assistant_message(&content));
                paused = Some(content);
                continue;
            }
            StopReason::Refusal => {
                finish_step(Vec::new());
                return Ok(answer(messages, reasoning));
            }
            StopReason::Truncated if !reply.requested.is_empty() => {
                let names: Vec<&str> = reply.requested.iter().map(|r| r.name.as_str()).collect();
                return Err(RunError::new(
                    ErrorCode::OutputTruncated,
                    format!(
                        "The model's reply asking for {} was cut ({wire_reason}), so its input may be incomplete; nothing was run. \
                         Raise maxTokens (now {}), or shorten the history.",
                        names.join(", "),
                        cfg.max_tokens
                    ),
                ));
            }
            StopReason::ToolUse if !reply.requested.is_empty() => {}
            StopReason::ToolUse | StopReason::Truncated | StopReason::Answer => {
                // An empty reply is an answer with no text, and stays out of the history: the
                // API refuses an empty message anywhere but last.
                if !protocol::is_empty_content(&content) {
                    messages.push(protocol::assistant_message(&content));
                }
                finish_step(Vec::new());
                return Ok(answer(messages, reasoning));
            }
        }

        trust::add_reply_ids(&mut call_ids, &reply.requested)?;
        messages.push(protocol::assistant_message(&content));
        let answers = if rounds >= cfg.max_tool_iterations {
            if limit_reached || cfg.on_max_iterations == OnMaxIterations::Error {
                let names: Vec<&str> = reply.requested.iter().map(|r| r.name.as_str()).collect();
                return Err(RunError::new(
                    ErrorCode::MaxIterationsExceeded,
                    format!(
                        "The model asked for tools ({}) after {rounds} tool round(s), the limit set by maxToolIterations; \
                         they were not run. Raise maxToolIterations, or make the tools' answers more complete.",
                        names.join(", ")
                    ),
                ));
            }
            limit_reached = true;
            not_run_at_limit(reply.requested, rounds, log, events)
        } else {
            rounds += 1;
            match run_round(reply.requested, tools, cfg, &mut memory, log, events, None).await? {
                RoundOutcome::Done(answers) => answers,
                RoundOutcome::Paused { answers, pending } => {
                    // Nothing goes to the model until the person decides: the history ends with
                    // the tool_use turn and the results of the calls that did run.
                    if !answers.is_empty() {
                        messages.push(results_message(&answers));
                    }
                    if events.is_some() {
                        finish_step(log.last_round());
                    }
                    let mut output = answer(messages, reasoning);
                    output.stop_reason = "approval_required".to_owned();
                    output.pending_approvals = pending;
                    return Ok(output);
                }
            }
        };
        if events.is_some() {
            finish_step(log.last_round());
        }
        step += 1;
        messages.push(results_message(&answers));
    }
}

/// `onMaxIterations: "answer"`: the calls past the limit are not run; each is answered with an
/// `is_error` result saying so, and recorded as failed.
fn not_run_at_limit(
    requested: Vec<Requested>,
    rounds: u32,
    log: &CallLog,
    events: Option<&dyn EventSink>,
) -> Vec<Answer> {
    log.begin_round(requested.len());
    let answers = requested
        .into_iter()
        .enumerate()
        .map(|(i, req)| {
            let call = ToolCall {
                tool_name: req.name.clone(),
                input: req.input,
                output: ToolOutput::None,
                is_error: true,
                error: Some(fb::limit_for_developer(&req.name, rounds)),
                duration_ms: 0.0,
                tool_use_id: req.id.clone(),
                interrupted: false,
            };
            let content = fb::limit_for_model(&req.name);
            if let Some(sink) = events {
                sink.emit(RunEvent::ToolResult {
                    call: call.clone(),
                    model_text: Some(content.clone()),
                    declined: false,
                });
            }
            log.settled(i, call);
            Answer {
                tool_use_id: req.id,
                content,
                blocks: false,
                is_error: true,
            }
        })
        .collect();
    log.end_round();
    answers
}

/// Hands a streamed reply's deltas on as run events: text, thinking, and client tool calls'
/// inputs (a server tool's input is Anthropic's business). Thinking blocks are joined by a
/// blank line, as `data.reasoning` joins them, so the deltas add up to it.
struct Deltas<'s> {
    sink: &'s dyn EventSink,
    server_ids: Vec<String>,
    /// Some thinking was shown earlier in the run.
    thought_before: &'s mut bool,
    /// The thinking block being shown.
    thinking_block: Option<usize>,
}

impl<'s> Deltas<'s> {
    fn new(sink: &'s dyn EventSink, thought_before: &'s mut bool) -> Self {
        Deltas {
            sink,
            server_ids: Vec::new(),
            thought_before,
            thinking_block: None,
        }
    }

    fn on(&mut self, event: StreamEvent) {
        let run_event = match event {
            StreamEvent::TextDelta { text, .. } => RunEvent::TextDelta(text),
            StreamEvent::ReasoningDelta { index, text } => {
                if text.is_empty() {
                    return;
                }
                if self.thinking_block != Some(index) {
                    if *self.thought_before {
                        self.sink.emit(RunEvent::ReasoningDelta("\n\n".to_owned()));
                    }
                    self.thinking_block = Some(index);
                    *self.thought_before = true;
                }
                RunEvent::ReasoningDelta(text)
            }
            StreamEvent::ToolInputStart {
                id, server: true, ..
            } => {
                self.server_ids.push(id);
                return;
            }
            StreamEvent::ToolInputStart { id, name, .. } => RunEvent::ToolInputStart { id, name },
            StreamEvent::ToolInputDelta {
                id, partial_json, ..
            } => {
                if partial_json.is_empty() || self.server_ids.contains(&id) {
                    return;
                }
                RunEvent::ToolInputDelta {
                    id,
                    delta: partial_json,
                }
            }
            StreamEvent::BlockStop { .. } => return,
        };
        self.sink.emit(run_event);
    }
}

fn read_reply(content: &RawValue) -> Result<Reply, RunError> {
    let (blocks, requested) = read_content(content)?;
    let mut text = String::new();
    let mut thinking = Vec::new();
    for block in blocks {
        match block.kind.as_ref() {
            "text" => text.push_str(block.text.as_deref().unwrap_or_default()),
            "thinking" => {
                if let Some(t) = block.thinking.filter(|t| !t.is_empty()) {
                    thinking.push(t);
                }
            }
            _ => {}
        }
    }
    Ok(Reply {
        text,
        thinking,
        requested,
    })
}

/// Reads a reply's content: its blocks, and the `tool_use` calls among them.
pub(crate) fn read_content(
    content: &RawValue,
) -> Result<(Vec<ContentBlock<'_>>, Vec<Requested>), RunError> {
    let blocks: Vec<ContentBlock> = serde_json::from_str(content.get()).map_err(|e| {
        RunError::new(
            ErrorCode::UnknownError,
            // Where, not what: serde's message can quote the reply's text, which is the API's.
            format!(
                "The model's reply has content blocks that cannot be read ({:?} error at line {}, column {}).",
                e.classify(),
                e.line(),
                e.column()
            ),
        )
    })?;
    let requested = tool_uses(&blocks)?;
    Ok((blocks, requested))
}

/// The client `tool_use` blocks of a reply, checked: each needs an id, a name and an input.
/// (`server_tool_use` blocks are Anthropic's to run and get no result from us.)
fn tool_uses(blocks: &[ContentBlock]) -> Result<Vec<Requested>, RunError> {
    let mut out = Vec::new();
    for (i, block) in blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.kind == "tool_use")
    {
        let (Some(id), Some(name), Some(input)) = (&block.id, &block.name, block.input) else {
            return Err(RunError::new(
                ErrorCode::UnknownError,
                format!("The model's reply has a tool_use block (content.{i}) without an id, a name or an input."),
            ));
        };
        out.push(Requested {
            id: id.clone(),
            name: name.clone(),
            input: input.to_owned(),
        });
    }
    Ok(out)
}
