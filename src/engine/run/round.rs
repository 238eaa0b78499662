//! One tool round: every `tool_use` of a reply is checked, may wait for approval, is run
//! (concurrently or in order) and is answered, failures included, in `tool_use` order. Each step
//! has a file of its own: `check_call.rs`, `execute_call.rs`, `settle_round.rs`.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;

use crate::engine::error::RunError;
use crate::engine::run::call_counts::CallMemory;
use crate::engine::run::call_outcome::{declined, identical, not_run_waiting};
use crate::engine::run::call_records::CallLog;
use crate::engine::run::check_call::{check_call, needs_approval, Ready};
use crate::engine::run::config::{OnToolError, RunConfig};
use crate::engine::run::execute_call::execute_call;
use crate::engine::run::feedback as fb;
use crate::engine::run::model_reply::Requested;
use crate::engine::run::settle_round::{tell_interrupted, Answer, Answers};
use crate::engine::tools::approval::{Decision, PendingApproval};
use crate::engine::tools::changes::Withdrawn;
use crate::engine::tools::tool::Tool;
use crate::engine::trace::events::{EventSink, RunEvent};

/// How a round ended: every call answered, or some waiting for a person's yes.
pub enum RoundOutcome {
    /// Every call has its answer.
    Done(Vec<Answer>),
    /// The calls that ran have their answers; `pending` wait for approval. With
    /// `parallelToolCalls: false` the calls after the first pending one are not run and are
    /// answered so (not held: every unanswered call of a paused turn is a pending approval).
    Paused {
        /// The answers of the calls that were settled.
        answers: Vec<Answer>,
        /// The calls waiting for a person, in `tool_use` order.
        pending: Vec<PendingApproval>,
    },
}

/// What the run gives every round: the tools offered, the settings, the call log and the
/// observer.
#[derive(Clone, Copy)]
pub struct RoundContext<'r> {
    /// The tools offered.
    pub tools: &'r [Tool],
    /// The run's settings.
    pub cfg: &'r RunConfig,
    /// Where every call is recorded as it starts and settles.
    pub log: &'r CallLog,
    /// Told of every call and result.
    pub events: Option<&'r dyn EventSink>,
}

/// Runs one round; the calls are recorded in the log as they start and settle. A tool the
/// history `withdrawn` is not offered. A resumed round
/// (`resumed`: each call's verified decision, by position) runs the yeses, declines the noes and
/// asks nothing. In stop mode the first failure ends the run at once: calls with bad input are
/// caught before any tool runs, and the first call to fail (in time) stops the others, whose
/// futures are dropped (their `ctx.signal` aborts) and which are reported as failed.
pub async fn run_round(
    requested: Vec<Requested>,
    run: RoundContext<'_>,
    memory: &mut CallMemory,
    withdrawn: &Withdrawn,
    resumed: Option<&[Decision]>,
) -> Result<RoundOutcome, RunError> {
    let RoundContext {
        tools,
        cfg,
        log,
        events,
    } = run;
    let stop = cfg.on_tool_error == OnToolError::Stop;
    announce(&requested, log, events);
    let mut answers = Answers::new(requested.len(), memory, log, events);

    let offered: Vec<&str> = tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|name| !withdrawn.contains(name))
        .collect();
    let mut ready: Vec<(usize, Ready)> = Vec::new();
    for (index, req) in requested.into_iter().enumerate() {
        let checked = check_call(req, tools, &offered, cfg, answers.memory());
        match answers.checked(index, checked) {
            Ok(r) => ready.push((index, r)),
            Err(settled) if stop => return Err(answers.stop_here(index, settled)),
            Err(settled) => answers.settle(index, settled),
        }
    }

    let approved = approve(ready, cfg, resumed, &mut answers).await?;
    execute_all(approved.allowed, cfg, stop, &mut answers).await?;
    if let Some(waiting) = approved.pending.first() {
        for (i, r) in approved.held {
            answers.settle(i, not_run_waiting(r.into_call(), &waiting.tool_name));
        }
    }
    let answers = answers.end();
    if approved.pending.is_empty() {
        Ok(RoundOutcome::Done(answers))
    } else {
        Ok(RoundOutcome::Paused {
            answers,
            pending: approved.pending,
        })
    }
}

/// A new round begins: the log makes room for its calls, and the observer hears of each.
fn announce(requested: &[Requested], log: &CallLog, events: Option<&dyn EventSink>) {
    log.begin_round(requested.len());
    if let Some(sink) = events {
        for req in requested {
            sink.emit(RunEvent::ToolCall {
                id: req.id.clone(),
                name: req.name.clone(),
                input: Arc::from(req.input.clone()),
            });
        }
    }
}

/// The checked calls sorted by approval.
struct Approved<'t> {
    /// May run.
    allowed: Vec<(usize, Ready<'t>)>,
    /// Wait for a person.
    pending: Vec<PendingApproval>,
    /// In order, after the first one that waits: not run, answered once the others are done.
    held: Vec<(usize, Ready<'t>)>,
}

/// Approval. A resumed round's calls each have their verified decision, by position: a yes
/// runs, a no is answered with the denial at once, and nothing else is asked. In a round the
/// model asked for, a call whose tool asks for approval waits; in order, the calls after the
/// first one that waits are held.
async fn approve<'t>(
    ready: Vec<(usize, Ready<'t>)>,
    cfg: &RunConfig,
    resumed: Option<&[Decision]>,
    answers: &mut Answers<'_>,
) -> Result<Approved<'t>, RunError> {
    let mut approved = Approved {
        allowed: Vec::with_capacity(ready.len()),
        pending: Vec::new(),
        held: Vec::new(),
    };
    for (i, r) in ready {
        if !cfg.parallel_tool_calls && !approved.pending.is_empty() {
            approved.held.push((i, r));
            continue;
        }
        if let Some(decided) = resumed {
            let decision = &decided[i];
            if decision.approved {
                approved.allowed.push((i, r));
            } else {
                answers.settle(i, declined(r.into_call(), decision.reason.as_deref()));
            }
            continue;
        }
        // A call the identical-call limit refuses is not put to a person first.
        if let Some(times) = cfg
            .max_identical_calls
            .and_then(|limit| answers.would_refuse(i, limit))
        {
            answers.settle(i, identical(r.into_call(), times));
            continue;
        }
        match needs_approval(&r, cfg).await? {
            Some(pending) => approved.pending.push(pending),
            None => approved.allowed.push((i, r)),
        }
    }
    Ok(approved)
}

/// `maxIdenticalCalls`: a call is counted when it is dispatched, so the calls still running
/// count as well as those that succeeded (within a round, the next identical call in
/// `tool_use` order is the one refused; one by one, a call that failed has given its place
/// back). A refused call is not run and is answered so (not a failure in either mode).
fn dispatch<'t>(
    i: usize,
    r: Ready<'t>,
    cfg: &RunConfig,
    answers: &mut Answers<'_>,
) -> Option<(usize, Ready<'t>)> {
    if let Some(limit) = cfg.max_identical_calls {
        if let Err(times) = answers.dispatch(i, &r.id, limit) {
            answers.settle(i, identical(r.into_call(), times));
            return None;
        }
    }
    // A tool that runs where the run was started tells its own start there (onToolCall).
    if let Some(sink) = answers
        .events()
        .filter(|_| !r.tool.executor.runs_in_caller())
    {
        sink.emit(RunEvent::ToolStart {
            id: r.id.clone(),
            name: r.tool.name.clone(),
            at: std::time::Instant::now(),
        });
    }
    Some((i, r))
}

/// Runs the allowed calls, all at once or in order, settling each as it ends. In stop mode the
/// first failure ends the round: the calls still running are dropped and told as interrupted.
async fn execute_all(
    allowed: Vec<(usize, Ready<'_>)>,
    cfg: &RunConfig,
    stop: bool,
    answers: &mut Answers<'_>,
) -> Result<(), RunError> {
    let log = answers.log();
    if cfg.parallel_tool_calls {
        let dispatched: Vec<_> = allowed
            .into_iter()
            .filter_map(|(i, r)| dispatch(i, r, cfg, answers))
            .collect();
        // The call that settles last is the round's last: its result is committed with the
        // round's (the next step's first write), so its journal needs no record of its own.
        let running_now = AtomicUsize::new(dispatched.len());
        let running_now = &running_now;
        let mut running: FuturesUnordered<_> = dispatched
            .into_iter()
            .map(|(i, r)| async move { (i, execute_call(r, cfg, log, i, running_now).await) })
            .collect();
        while let Some((i, settled)) = running.next().await {
            let settled = match settled {
                Ok(settled) => settled,
                // The journal failed: nothing more may run unrecorded.
                Err(failure) => {
                    drop(running);
                    tell_interrupted(log.interrupt(fb::ABORTED_CALL), answers.events());
                    return Err(failure);
                }
            };
            if stop && settled.failure.is_some() {
                // Calls that finished by now keep their results; dropping the others cancels
                // them (their executors abort `ctx.signal`).
                while let Some(Some((j, done))) = running.next().now_or_never() {
                    if let Ok(done) = done {
                        answers.settle(j, done);
                    }
                }
                drop(running);
                let why = fb::interrupted_by(&settled.call.tool_name);
                let failure = answers.stop_here(i, settled);
                tell_interrupted(log.interrupt(&why), answers.events());
                return Err(failure);
            }
            answers.settle(i, settled);
        }
    } else {
        let count = allowed.len();
        for (at, (i, r)) in allowed.into_iter().enumerate() {
            let Some((i, r)) = dispatch(i, r, cfg, answers) else {
                continue;
            };
            // Only the round's last call is known to be last (see the parallel case).
            let after_this = AtomicUsize::new(if at + 1 == count { 1 } else { 2 });
            let settled = match execute_call(r, cfg, log, i, &after_this).await {
                Ok(settled) => settled,
                // The journal failed: the call (which may have run) is told as interrupted.
                Err(failure) => {
                    tell_interrupted(log.interrupt(fb::ABORTED_CALL), answers.events());
                    return Err(failure);
                }
            };
            if stop && settled.failure.is_some() {
                return Err(answers.stop_here(i, settled));
            }
            answers.settle(i, settled);
        }
    }
    Ok(())
}
