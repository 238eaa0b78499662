//! Executing a checked call: handing it to its tool's executor, within the run's per-call
//! timeout, and reading what came back.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::report::calls::ToolOutput;
use crate::engine::run::call_outcome::{failed, not_run, succeeded, Call, Settled, Words};
use crate::engine::run::call_record::{from_record, to_record};
use crate::engine::run::call_records::CallLog;
use crate::engine::run::check_call::Ready;
use crate::engine::run::config::RunConfig;
use crate::engine::run::feedback as fb;
use crate::engine::tools::tool::{TimeLeft, ToolExecutor, ToolFuture, ToolInvocation, ToolOutcome};
use crate::engine::trace::events::{Recorded, Why};
use crate::engine::wire::api_version::{cited_text, has_removals, LEGACY, REMOVED_IN};

/// Runs a checked call (call `index` of the round, so recorded in `log` as it starts), with the
/// run's per-call timeout. With a journal (a durable run) the call is recorded as started before
/// it runs and as finished after; a call an earlier holder of the run finished is not run again
/// (its record is its answer), and one it started is run again as the next attempt — or, for a
/// tool that asks so, told to the model as interrupted. A journal that fails ends the run.
///
/// `running`: how many calls of the round are still running, this one included. The one that
/// settles last records nothing as finished: the round's results are committed right after it,
/// in the next step's first write, which is the same guarantee one write earlier.
pub async fn execute_call(
    ready: Ready<'_>,
    cfg: &RunConfig,
    log: &CallLog,
    index: usize,
    running: &AtomicUsize,
) -> Result<Settled, RunError> {
    let Some(journal) = &cfg.journal else {
        return Ok(run_call(ready, cfg, log, index, 1).await);
    };
    let journal = &journal.0;
    let recorded = journal.recorded(&ready.id);
    if let Some(Recorded { attempts, finished }) = recorded {
        if let Some(settled) = finished.and_then(|json| from_record(&ready, &json)) {
            log.started(index, &ready.tool.name, &ready.id, &ready.input, false);
            return Ok(settled);
        }
        if attempts > 0 && ready.tool.report_interrupted {
            let name = ready.tool.name.clone();
            return Ok(not_run(
                ready.into_call(),
                Why::Interrupted,
                fb::taken_over_interrupted_for_developer(&name, attempts),
                fb::interrupted_for_model(&name, true),
            ));
        }
    }
    let id = ready.id.clone();
    let attempt = journal.call_started(&id).await?;
    let settled = run_call(ready, cfg, log, index, attempt).await;
    if running.fetch_sub(1, Ordering::AcqRel) > 1 {
        journal.call_finished(&id, to_record(&settled)).await?;
    }
    Ok(settled)
}

/// Runs the call: its `attempt` (1 unless a run taken over runs it again).
async fn run_call(
    ready: Ready<'_>,
    cfg: &RunConfig,
    log: &CallLog,
    index: usize,
    attempt: u32,
) -> Settled {
    let timeout = cfg.tool_timeout;
    let Ready { tool, id, input } = ready;
    log.started(
        index,
        &tool.name,
        &id,
        &input,
        tool.executor.runs_in_caller(),
    );
    let started = Instant::now();
    let future = tool.executor.execute(ToolInvocation {
        tool_use_id: id.clone(),
        input: input.clone(),
        attempt,
        idempotency_key: cfg.idempotency_key(&id),
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
                return held(
                    succeeded(call, output, content, false, elapsed),
                    &*tool.executor,
                );
            }
            let dev = fb::bad_json_for_developer(name);
            (
                Why::BadOutput,
                Words::new(fb::internal_error_for_model(name), dev),
            )
        }
        Some(ToolOutcome::Blocks(content)) => {
            let version = &cfg.api.api_version;
            if let Some(at) = cited_text_under(version, &content) {
                let dev = fb::cited_blocks_for_developer(name, &at, version, REMOVED_IN, LEGACY);
                (
                    Why::BadOutput,
                    Words::new(fb::internal_error_for_model(name), dev),
                )
            } else if serde_json::from_str::<Vec<&RawValue>>(&content).is_ok() {
                let output = ToolOutput::Json(content.clone());
                return held(
                    succeeded(call, output, content, true, elapsed),
                    &*tool.executor,
                );
            } else {
                let dev = fb::blocks_not_array_for_developer(name);
                (
                    Why::BadOutput,
                    Words::new(fb::internal_error_for_model(name), dev),
                )
            }
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
            let dev = fb::tool_error_for_developer(name, &message);
            let stop = fb::tool_error_stop(name, &message);
            let model = fb::tool_error_for_model(name, message);
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
            let dev = fb::failed_for_developer(name, &message);
            let stop = fb::failed_stop(name, &message);
            let model = fb::internal_error_for_model(name);
            (Why::Threw, Words { model, dev, stop })
        }
    };
    failed(call, why, words, elapsed)
}

/// Where a tool's content blocks (`content`, a JSON array) carry a cited text block that
/// `version` refuses in a user message, if they do.
fn cited_text_under(version: &str, content: &str) -> Option<String> {
    if !has_removals(version) || !content.contains("\"citations\"") {
        return None;
    }
    let blocks: Vec<serde_json::Value> = serde_json::from_str(content).ok()?;
    cited_text(&blocks)
}

/// A successful call, marked when its executor holds the output's value itself.
fn held(mut settled: Settled, executor: &dyn ToolExecutor) -> Settled {
    settled.call.output_held = executor.runs_in_caller();
    settled
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
