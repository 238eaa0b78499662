//! Resuming a run paused for approval: the history ends with the model's `tool_use` turn, or
//! with that turn and a user message holding the results of the calls that did run. Each call
//! without a result must have a verified decision; approved ones run, declined ones are told so,
//! and their results join that user message in `tool_use` order, before anything is sent.

use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::run::config::RunConfig;
use crate::engine::run::conversation::Conversation;
use crate::engine::run::feedback as fb;
use crate::engine::run::model_reply::Requested;
use crate::engine::run::posted_history::{self, CheckedHistory};
use crate::engine::run::round::RoundOutcome;
use crate::engine::run::settle_round::Answer;
use crate::engine::tools::approval::{Bound, Decision, Refused};
use crate::engine::wire::protocol::{self, RawMessage};

/// The calls of the history's last `tool_use` turn that have no result yet.
pub struct Waiting {
    /// Without a result, in `tool_use` order.
    pub calls: Vec<Requested>,
    /// Every `tool_use` id of the turn, in order.
    order: Vec<String>,
    /// The results already given, by `tool_use_id`.
    answered: Vec<(String, Box<RawValue>)>,
    /// The history ends with the user message of those results (it is rebuilt).
    partial_user: bool,
}

/// The resume prologue, before the first request: if the history ends paused, its waiting
/// calls run (or are declined) by the decisions given, and their results join the history.
/// Decisions without a paused history are refused.
///
/// A run taken over (`RunConfig::taken_over`) whose last reply's round had not finished, with
/// no decisions to apply, runs that round again: the journal tells which calls finished.
pub async fn resume(
    talk: &mut Conversation<'_>,
    waiting: Option<Waiting>,
) -> Result<Option<RunOutput>, RunError> {
    let cfg = talk.cfg();
    if let Some(progress) = &cfg.taken_over {
        talk.go_on_from(progress);
        // The run's decisions stand while the calls they decide still wait; once their round
        // was committed the history waits for none of them (or for a later round's calls).
        let Some(waiting) = waiting else {
            return Ok(None);
        };
        if !cfg.approvals.is_empty() {
            if let Ok(decided) = decisions(&waiting, cfg) {
                return run_decided(talk, waiting, &decided).await;
            }
        }
        if waiting.partial_user {
            return Err(RunError::internal(
                "a run taken over ends with some of its round's results and no decision for the rest",
            ));
        }
        return talk.retake_round().await;
    }
    let Some(waiting) = waiting else {
        if cfg.approvals.is_empty() {
            return Ok(None);
        }
        return Err(RunError::invalid_request(
            "Option approvals was given, but the prompt's history has no tool call waiting for approval: resume with data.messages of the run that stopped with approval_required. Nothing was sent.",
        ));
    };
    let decided = decisions(&waiting, cfg)?;
    run_decided(talk, waiting, &decided).await
}

/// Runs the waiting calls by their decisions; their results join the history.
async fn run_decided(
    talk: &mut Conversation<'_>,
    mut waiting: Waiting,
    decided: &[Decision],
) -> Result<Option<RunOutput>, RunError> {
    let calls = std::mem::take(&mut waiting.calls);
    match talk.tool_round(calls, Some(decided)).await? {
        RoundOutcome::Done(answers) => {
            waiting.answer(&mut talk.messages, &answers);
            Ok(None)
        }
        // Every call of a resumed round has its decision: none can wait again.
        RoundOutcome::Paused { .. } => Err(RunError::internal(
            "a resumed call waited for approval again",
        )),
    }
}

/// The waiting calls, if the history ends paused: its last message is an assistant turn with
/// `tool_use` blocks, or such a turn followed by a user message of only some of their results.
/// A last user message that leaves a call of the turn before it unanswered and holds anything
/// but results is refused: it is no pause this package leaves, and the API refuses it anyway.
pub fn waiting(history: &CheckedHistory<'_>) -> Result<Option<Waiting>, RunError> {
    let Some((_, last)) = &history.last else {
        return Ok(None);
    };
    if last.role == "assistant" {
        let calls = tool_uses(last)?;
        if calls.is_empty() {
            return Ok(None);
        }
        return Ok(Some(Waiting {
            order: calls.iter().map(|c| c.id.clone()).collect(),
            calls,
            answered: Vec::new(),
            partial_user: false,
        }));
    }
    let Some((before_index, before)) = &history.before_last else {
        return Ok(None);
    };
    if before.role != "assistant" {
        return Ok(None);
    }
    let all = tool_uses(before)?;
    if all.is_empty() {
        return Ok(None);
    }
    let mut answered = Vec::new();
    let mut only_results = true;
    for block in &last.blocks {
        match block.result_for()? {
            Some(id) => answered.push((id, block.raw.to_owned())),
            None => only_results = false,
        }
    }
    let order: Vec<String> = all.iter().map(|c| c.id.clone()).collect();
    let calls: Vec<Requested> = all
        .into_iter()
        .filter(|c| !answered.iter().any(|(id, _)| id == &c.id))
        .collect();
    if calls.is_empty() {
        return Ok(None);
    }
    if !only_results || answered.is_empty() {
        return Err(RunError::invalid_request(format!(
            "The prompt's history leaves the call {} ({}) of messages[{before_index}] without a tool_result in the message after it. \
             Give every call of that turn its tool_result, first in the next user message. Nothing was sent and nothing ran.",
            calls[0].id, calls[0].name
        )));
    }
    Ok(Some(Waiting {
        calls,
        order,
        answered,
        partial_user: true,
    }))
}

/// The `tool_use` calls of a message, each checked to be complete.
fn tool_uses(message: &posted_history::Message<'_>) -> Result<Vec<Requested>, RunError> {
    let mut calls = Vec::new();
    for block in &message.blocks {
        if let Some(call) = block.tool_use()? {
            calls.push(call);
        }
    }
    Ok(calls)
}

/// Matches each decision to the waiting call it was issued for. Every waiting call needs one:
/// the history comes from outside, and only a pause this package issued (its approval ids,
/// signed for exactly these calls in this scope) may make a call run without the model asking
/// for it in this run. Nothing has run or been sent when this fails.
pub fn decisions(waiting: &Waiting, cfg: &RunConfig) -> Result<Vec<Decision>, RunError> {
    let given = &cfg.approvals;
    let scope = cfg.approval_scope.as_str();
    // One slot per waiting call, in their order: a decision is matched to exactly one call.
    let mut out: Vec<Option<Decision>> = vec![None; waiting.calls.len()];
    if !given.is_empty() {
        let signer = cfg.signer()?;
        for (i, decision) in given.iter().enumerate() {
            let mut why = Refused::Malformed;
            let mut matched = None;
            for (c, call) in waiting.calls.iter().enumerate() {
                let bound = Bound {
                    scope,
                    name: &call.name,
                    tool_use_id: &call.id,
                    input: &call.input,
                };
                match signer.verify(&decision.approval_id, &bound) {
                    Ok(()) => {
                        matched = Some(c);
                        break;
                    }
                    Err(Refused::Expired) => why = Refused::Expired,
                    Err(Refused::Forged) if why != Refused::Expired => why = Refused::Forged,
                    Err(_) => {}
                }
            }
            let Some(c) = matched else {
                return Err(fb::bad_decision(i, &decision.approval_id, why));
            };
            if out[c].replace(decision.clone()).is_some() {
                let call = &waiting.calls[c];
                return Err(RunError::invalid_request(format!(
                    "approvals[{i}] decides {} ({}) a second time. Send one decision per call. Nothing was sent.",
                    call.id, call.name
                )));
            }
        }
    }
    let mut decided = Vec::with_capacity(out.len());
    for (call, decision) in waiting.calls.iter().zip(out) {
        let Some(decision) = decision else {
            return Err(RunError::invalid_request(format!(
                "The prompt's history ends with the call {} ({}) without a result, and approvals holds no decision for it. \
                 A run only resumes calls it paused for approval: resume with data.messages of the run that stopped with \
                 approval_required and {{ approvalId, approved }} for every call in data.pendingApprovals \
                 (to go on without running it, give it a tool_result in a user message). Nothing was sent and nothing ran.",
                call.id, call.name
            )));
        };
        decided.push(decision);
    }
    Ok(decided)
}

impl Waiting {
    /// The history with the new results joined to the old ones, in `tool_use` order.
    pub fn answer(self, messages: &mut Vec<RawMessage>, answers: &[Answer]) {
        if self.partial_user {
            messages.pop();
        }
        let fresh: Vec<(String, Box<RawValue>)> = answers
            .iter()
            .map(|a| (a.tool_use_id.clone(), a.block()))
            .collect();
        let mut all: Vec<(String, Box<RawValue>)> = self.answered;
        all.extend(fresh);
        let ordered: Vec<&RawValue> = self
            .order
            .iter()
            .filter_map(|id| all.iter().find(|(k, _)| k == id).map(|(_, b)| &**b))
            .collect();
        if !ordered.is_empty() {
            messages.push(protocol::raw_message("user", &ordered));
        }
    }
}
