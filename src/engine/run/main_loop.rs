//! The loop: request → tool calls → results → request … until an answer or a limit. What each
//! `stop_reason` does is the `match` in [`run_loop`] (what each means is in `stop.rs`); the
//! verbs it is told in are the [`Conversation`]'s.

use tokio_util::sync::CancellationToken;

use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::run::call_records::CallLog;
use crate::engine::run::config::RunConfig;
use crate::engine::run::conversation::Conversation;
use crate::engine::run::feedback as fb;
use crate::engine::run::posted_history;
use crate::engine::run::resume;
use crate::engine::run::round::RoundContext;
use crate::engine::run::settle_round::tell_interrupted;
use crate::engine::run::stop::StopReason;
use crate::engine::tools::changes;
use crate::engine::tools::tool::Tool;
use crate::engine::trace::events::EventSink;
use crate::engine::wire::client::ApiClient;
use crate::engine::wire::protocol::RawMessage;

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
        return Err(RunError::aborted());
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
            let mut error = RunError::aborted();
            error.tool_calls = log.take(fb::ABORTED_CALL);
            Err(error)
        }
    }
}

/// The run, from the history it is given to its answer (or the round that waits for a person).
async fn run_loop(
    client: &ApiClient,
    cfg: &RunConfig,
    tools: &[Tool],
    messages: Vec<RawMessage>,
    log: &CallLog,
    events: Option<&dyn EventSink>,
) -> Result<RunOutput, RunError> {
    // A tool that asks for approval needs a secret to sign approval ids: known before anything
    // is sent.
    if tools.iter().any(|t| t.approval.is_some()) {
        cfg.signer()?;
    }
    // The history is untrusted, and read once: one id, one call, so that no decision or reply
    // can cover two; a run paused for approval resumes from its last messages.
    let history = posted_history::read_history(&messages)?;
    let waiting = resume::waiting(&history)?;
    let (call_ids, located) = (history.call_ids, history.tool_changes);
    let server_tools = cfg.server_tool_names();
    changes::check_history(&located, |name| {
        tools.iter().any(|t| t.name == name) || server_tools.iter().any(|s| s == name)
    })?;
    let changes: Vec<_> = located.into_iter().map(|(_, c)| c).collect();
    let run = RoundContext {
        tools,
        cfg,
        log,
        events,
    };
    let mut talk = Conversation::new(client, run, messages, call_ids, &changes);
    if let Some(paused) = resume::resume(&mut talk, waiting).await? {
        return Ok(paused);
    }
    loop {
        let response = talk.send().await?;
        let reply = talk.take_reply(response)?;
        match reply.stop {
            StopReason::PauseTurn => talk.continue_paused(reply)?,
            StopReason::Compaction => talk.continue_compacted(reply)?,
            StopReason::Refusal => return Ok(talk.refused(reply)),
            StopReason::Truncated if reply.asks_for_tools() => return Err(talk.truncated(&reply)),
            StopReason::ToolUse if reply.asks_for_tools() => {
                if let Some(paused) = talk.answer_round(reply).await? {
                    return Ok(paused);
                }
            }
            StopReason::ToolUse | StopReason::Truncated | StopReason::Answer => {
                return talk.answered(reply).await
            }
        }
    }
}
