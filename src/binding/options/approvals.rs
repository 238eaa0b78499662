//! The options of approvals: the person's answers to resume with, and the secret, lifetime and
//! scope of the approval ids a run signs.

use std::collections::BTreeMap;

use serde_json::Value;

use super::read::{bad, env_str, Given};
use crate::engine::run::feedback as fb;
use crate::engine::tools::approval::{Decision, Signer, DEFAULT_APPROVAL_TTL};
use crate::engine::wire::secret::MIN_APPROVAL_SECRET_CHARS;
use crate::engine::{RunError, Secret};

/// `approvalSecret`, else `ANTHROPIC_TOOL_CALLING_SECRET`. A short one is refused whether or not
/// this run needs it: a short secret given is always a mistake, better found on the first run
/// than on the first one that pauses for approval.
pub fn approval_secret(
    option: Given,
    env: &BTreeMap<String, Value>,
) -> Result<Option<Secret>, RunError> {
    let (secret, source) = match option.secret()? {
        Some(secret) => (secret, "Option approvalSecret"),
        None => match env_str(env, "ANTHROPIC_TOOL_CALLING_SECRET") {
            Some(secret) => (Secret::from(secret), "ANTHROPIC_TOOL_CALLING_SECRET"),
            None => return Ok(None),
        },
    };
    let chars = secret.expose().chars().count();
    if chars < MIN_APPROVAL_SECRET_CHARS {
        return Err(fb::short_approval_secret(source, chars));
    }
    Ok(Some(secret))
}

/// The signer of this run's approval ids: the secret, and `approvalTtlMs` (default 24 hours).
pub fn signer(secret: Option<Secret>, ttl: Given) -> Result<Option<Signer>, RunError> {
    let ttl = ttl.millis()?.unwrap_or(DEFAULT_APPROVAL_TTL);
    Ok(secret.map(|secret| Signer { secret, ttl }))
}

/// `approvals`: `[{ approvalId, approved, reason? }]`, the person's answers.
pub fn approvals(option: Given) -> Result<Vec<Decision>, RunError> {
    let expected = "an array of { approvalId: string, approved: boolean, reason?: string }";
    let Some(v) = option.value() else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = &v else {
        return Err(option.bad(expected, &v));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let id = item.get("approvalId").and_then(Value::as_str);
            let approved = item.get("approved").and_then(Value::as_bool);
            let reason = match item.get("reason") {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(r)) => Ok(Some(r.clone())),
                Some(_) => Err(()),
            };
            match (id, approved, reason) {
                (Some(id), Some(approved), Ok(reason)) => Ok(Decision {
                    approval_id: id.to_owned(),
                    approved,
                    reason,
                }),
                _ => Err(bad(
                    &format!("approvals[{i}]"),
                    "{ approvalId: string, approved: boolean, reason?: string }",
                    item,
                )),
            }
        })
        .collect()
}
