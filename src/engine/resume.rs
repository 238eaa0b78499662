//! Resuming a run paused for approval: the history ends with the model's `tool_use` turn, or
//! with that turn and a user message holding the results of the calls that did run. Each call
//! without a result must have a verified decision; approved ones run, declined ones are told so,
//! and their results join that user message in `tool_use` order, before anything is sent.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::approval::{Bound, Decision, Refused, Signer};
use super::error::RunError;
use super::feedback as fb;
use super::protocol::{self, RawMessage};
use super::round::{Answer, Requested};

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

#[derive(Deserialize)]
struct MessageView<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    content: &'a RawValue,
}

#[derive(Deserialize)]
struct BlockView<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
    #[serde(default)]
    tool_use_id: Option<String>,
}

fn blocks(m: &RawMessage) -> Option<(String, Vec<&RawValue>)> {
    let view: MessageView = serde_json::from_str(m.get()).ok()?;
    let blocks: Vec<&RawValue> = serde_json::from_str(view.content.get()).ok()?;
    Some((view.role.into_owned(), blocks))
}

fn tool_uses(blocks: &[&RawValue]) -> Vec<Requested> {
    blocks
        .iter()
        .filter_map(|b| serde_json::from_str::<BlockView>(b.get()).ok())
        .filter(|b| b.kind == "tool_use")
        .filter_map(|b| {
            Some(Requested {
                id: b.id?,
                name: b.name?,
                input: b.input?.to_owned(),
            })
        })
        .collect()
}

/// The waiting calls, if the history ends paused.
pub fn waiting(messages: &[RawMessage]) -> Option<Waiting> {
    let (role, last) = blocks(messages.last()?)?;
    if role == "assistant" {
        let calls = tool_uses(&last);
        if calls.is_empty() {
            return None;
        }
        return Some(Waiting {
            order: calls.iter().map(|c| c.id.clone()).collect(),
            calls,
            answered: Vec::new(),
            partial_user: false,
        });
    }
    let (before_role, before) = blocks(messages.get(messages.len().checked_sub(2)?)?)?;
    if before_role != "assistant" {
        return None;
    }
    let mut answered = Vec::new();
    for block in &last {
        let view: BlockView = serde_json::from_str(block.get()).ok()?;
        if view.kind != "tool_result" {
            return None;
        }
        answered.push((view.tool_use_id?, (*block).to_owned()));
    }
    let all = tool_uses(&before);
    let order: Vec<String> = all.iter().map(|c| c.id.clone()).collect();
    let calls: Vec<Requested> = all
        .into_iter()
        .filter(|c| !answered.iter().any(|(id, _)| id == &c.id))
        .collect();
    if calls.is_empty() || answered.is_empty() {
        return None;
    }
    Some(Waiting {
        calls,
        order,
        answered,
        partial_user: true,
    })
}

/// Matches each decision to the waiting call it was issued for. Every waiting call needs one:
/// the history comes from outside, and only a pause this package issued (its approval ids,
/// signed for exactly these calls in this scope) may make a call run without the model asking
/// for it in this run. Nothing has run or been sent when this fails.
pub fn decisions(
    waiting: &Waiting,
    given: &[Decision],
    signer: Option<&Signer>,
    scope: &str,
) -> Result<HashMap<String, Decision>, RunError> {
    let mut out: HashMap<String, Decision> = HashMap::new();
    if !given.is_empty() {
        let signer = signer.ok_or_else(fb::no_approval_secret)?;
        for (i, decision) in given.iter().enumerate() {
            let mut why = Refused::Malformed;
            let mut matched = None;
            for call in &waiting.calls {
                let bound = Bound {
                    scope,
                    name: &call.name,
                    tool_use_id: &call.id,
                    input: &call.input,
                };
                match signer.verify(&decision.approval_id, &bound) {
                    Ok(()) => {
                        matched = Some(call);
                        break;
                    }
                    Err(Refused::Expired) => why = Refused::Expired,
                    Err(Refused::Forged) if why != Refused::Expired => why = Refused::Forged,
                    Err(_) => {}
                }
            }
            let Some(call) = matched else {
                return Err(fb::bad_decision(i, &decision.approval_id, why));
            };
            if out.insert(call.id.clone(), decision.clone()).is_some() {
                return Err(RunError::invalid_request(format!(
                    "approvals[{i}] decides {} ({}) a second time. Send one decision per call. Nothing was sent.",
                    call.id, call.name
                )));
            }
        }
    }
    if let Some(call) = waiting.calls.iter().find(|c| !out.contains_key(&c.id)) {
        return Err(RunError::invalid_request(format!(
            "The prompt's history ends with the call {} ({}) without a result, and approvals holds no decision for it. \
             A run only resumes calls it paused for approval: resume with data.messages of the run that stopped with \
             approval_required and {{ approvalId, approved }} for every call in data.pendingApprovals \
             (to go on without running it, give it a tool_result in a user message). Nothing was sent and nothing ran.",
            call.id, call.name
        )));
    }
    Ok(out)
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
