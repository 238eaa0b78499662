//! Approval of risky tools (`needsApproval`): which calls wait for a person, the signed ids that
//! carry them through the browser and back, and the decisions that resume a paused run.
//!
//! An approval id is `apr_<issued-at ms>_<HMAC-SHA256 hex>` over the run's scope (the user's or
//! the chat's id, `""` without one), the tool's name, the `tool_use` id, the canonical input and
//! the issue time, keyed by the run's secret: a page can show it and post it back, but cannot
//! change the call it approves, make one up, carry it into another user's chat, or keep it past
//! its TTL.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde::Serialize;
use serde_json::value::RawValue;
use sha2::Sha256;

use crate::engine::json::canonical::canonical_json;
use crate::engine::tools::tool::{ApprovalPolicy, ToolInvocation};
use crate::engine::wire::secret::Secret;

/// The `stopReason` of a run that waits for a person's decision on some calls.
pub const APPROVAL_REQUIRED: &str = "approval_required";

/// How long an approval id is valid unless `approvalTtlMs` says otherwise.
pub const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Every call needs approval.
pub struct Always;

impl ApprovalPolicy for Always {
    fn needs_approval(&self, _call: ToolInvocation) -> Pin<Box<dyn Future<Output = bool> + Send>> {
        Box::pin(std::future::ready(true))
    }
}

/// A call waiting for a person, as the run hands it back.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    /// The signed id the person's decision must carry back.
    pub approval_id: String,
    /// The waiting call's `tool_use` id.
    pub tool_use_id: String,
    /// The tool it calls.
    pub tool_name: String,
    /// The model's input, verbatim.
    pub input: Box<RawValue>,
}

/// A person's answer to one pending call (the `approvals` option).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The id of the pending call it decides.
    pub approval_id: String,
    /// Yes: the call runs. No: the model is told it was declined.
    pub approved: bool,
    /// Why not, told to the model with a no.
    pub reason: Option<String>,
}

/// Issues and checks approval ids with the run's secret.
#[derive(Debug, Clone)]
pub struct Signer {
    /// The key of every approval id's signature.
    pub secret: Secret,
    /// How long an id stays valid (`approvalTtlMs`).
    pub ttl: Duration,
}

/// Why an approval id was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not an id this package issues.
    Malformed,
    /// Its signature does not match the call in the history (changed input, another secret).
    Forged,
    /// Older than the TTL (or issued in the future).
    Expired,
}

type HmacSha256 = Hmac<Sha256>;

/// What an approval id is bound to: one call, in one scope.
#[derive(Debug, Clone, Copy)]
pub struct Bound<'a> {
    /// `approvalScope` (the user's or the chat's id), `""` without one.
    pub scope: &'a str,
    /// The tool's name.
    pub name: &'a str,
    /// The call's `tool_use` id.
    pub tool_use_id: &'a str,
    /// The model's input (bound in its canonical form).
    pub input: &'a RawValue,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Signer {
    fn mac(&self, call: &Bound<'_>, issued_at: u64) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(self.secret.expose().as_bytes())
            .expect("HMAC takes a key of any length");
        let canonical = serde_json::from_str::<serde_json::Value>(call.input.get())
            .map(|v| canonical_json(&v))
            .unwrap_or_else(|_| call.input.get().to_owned());
        let issued_at = issued_at.to_be_bytes();
        // Length-prefixed, so no two different calls write the same bytes.
        for part in [
            call.scope.as_bytes(),
            call.name.as_bytes(),
            call.tool_use_id.as_bytes(),
            canonical.as_bytes(),
            &issued_at,
        ] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac
    }

    /// A new approval id for this call.
    pub fn issue(&self, call: &Bound<'_>) -> String {
        let issued_at = now_ms();
        let tag = self.mac(call, issued_at).finalize().into_bytes();
        spelled(issued_at, &tag)
    }

    /// The call as it waits for a person, with a new approval id for it: the one place a
    /// pending approval is made.
    pub fn pending(&self, call: &Bound<'_>) -> PendingApproval {
        PendingApproval {
            approval_id: self.issue(call),
            tool_use_id: call.tool_use_id.to_owned(),
            tool_name: call.name.to_owned(),
            input: RawValue::from_string(call.input.get().to_owned())
                .expect("a checked input is JSON"),
        }
    }

    /// Checks that `approval_id` was issued for exactly this call, in this scope, with this
    /// secret, within the TTL.
    pub fn verify(&self, approval_id: &str, call: &Bound<'_>) -> Result<(), Refused> {
        let (issued_at, tag) = parse_id(approval_id).ok_or(Refused::Malformed)?;
        self.mac(call, issued_at)
            .verify_slice(&tag)
            .map_err(|_| Refused::Forged)?;
        let now = now_ms();
        let age = now.checked_sub(issued_at).ok_or(Refused::Expired)?;
        if age > self.ttl.as_millis() as u64 {
            return Err(Refused::Expired);
        }
        Ok(())
    }
}

/// The issue time and tag of an id in the one spelling [`Signer::issue`] writes. Another spelling
/// of the same numbers (`+`, leading zeros, upper-case hex) is refused: an app that records the
/// ids it has seen as strings must not see one call approved under several.
fn parse_id(id: &str) -> Option<(u64, Vec<u8>)> {
    let rest = id.strip_prefix("apr_")?;
    let (at, hex) = rest.split_once('_')?;
    let issued_at = at.parse::<u64>().ok()?;
    if hex.len() != 64 {
        return None;
    }
    let tag = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    (id == spelled(issued_at, &tag)).then_some((issued_at, tag))
}

/// An approval id as it is issued.
fn spelled(issued_at: u64, tag: &[u8]) -> String {
    let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    format!("apr_{issued_at}_{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(secret: &str) -> Signer {
        Signer {
            secret: Secret::new(secret),
            ttl: Duration::from_secs(60),
        }
    }

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    fn call<'a>(scope: &'a str, name: &'a str, id: &'a str, input: &'a RawValue) -> Bound<'a> {
        Bound {
            scope,
            name,
            tool_use_id: id,
            input,
        }
    }

    #[test]
    fn an_id_approves_exactly_its_call() {
        let s = signer("k1");
        let input = raw(r#"{"orderId":"1","amount":5}"#);
        let id = s.issue(&call("", "refund", "toolu_1", &input));
        assert!(id.starts_with("apr_"));
        assert_eq!(
            s.verify(&id, &call("", "refund", "toolu_1", &input)),
            Ok(())
        );
        // key order does not matter; anything else does
        let reordered = raw(r#"{"amount":5,"orderId":"1"}"#);
        assert_eq!(
            s.verify(&id, &call("", "refund", "toolu_1", &reordered)),
            Ok(())
        );
        let more = raw(r#"{"orderId":"1","amount":500}"#);
        for other in [
            call("", "refund", "toolu_1", &more),
            call("", "refund", "toolu_2", &input),
            call("", "delete", "toolu_1", &input),
        ] {
            assert_eq!(s.verify(&id, &other), Err(Refused::Forged));
        }
        assert_eq!(
            signer("k2").verify(&id, &call("", "refund", "toolu_1", &input)),
            Err(Refused::Forged)
        );
        for made_up in ["apr_1_zz", "made-up"] {
            assert_eq!(
                s.verify(made_up, &call("", "refund", "toolu_1", &input)),
                Err(Refused::Malformed)
            );
        }
    }

    #[test]
    fn an_id_has_one_spelling() {
        let s = signer("k1");
        let input = raw("{}");
        let bound = call("", "refund", "toolu_1", &input);
        let id = s.issue(&bound);
        let (at, hex) = id["apr_".len()..].split_once('_').unwrap();
        let mixed: String = hex
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        for other in [
            format!("apr_+{at}_{hex}"),
            format!("apr_0{at}_{hex}"),
            format!("apr_{at}_{}", hex.to_ascii_uppercase()),
            format!("apr_{at}_{mixed}"),
        ] {
            assert_eq!(s.verify(&other, &bound), Err(Refused::Malformed), "{other}");
        }
        assert_eq!(s.verify(&id, &bound), Ok(()));
    }

    #[test]
    fn an_id_is_bound_to_its_scope() {
        let s = signer("k1");
        let input = raw("{}");
        let in_chat_a = s.issue(&call("chat-a", "refund", "toolu_1", &input));
        assert_eq!(
            s.verify(&in_chat_a, &call("chat-a", "refund", "toolu_1", &input)),
            Ok(())
        );
        for scope in ["chat-b", "", "chat-a "] {
            assert_eq!(
                s.verify(&in_chat_a, &call(scope, "refund", "toolu_1", &input)),
                Err(Refused::Forged),
                "scope {scope:?}"
            );
        }
        let unscoped = s.issue(&call("", "refund", "toolu_1", &input));
        assert_eq!(
            s.verify(&unscoped, &call("chat-a", "refund", "toolu_1", &input)),
            Err(Refused::Forged)
        );
        // The fields are length-prefixed: moving bytes from one field into the next is no match.
        let shifted = s.issue(&call("ab", "c", "toolu_1", &input));
        assert_eq!(
            s.verify(&shifted, &call("a", "bc", "toolu_1", &input)),
            Err(Refused::Forged)
        );
    }

    #[test]
    fn an_old_id_is_expired() {
        let s = signer("k");
        let input = raw("{}");
        let bound = call("", "t", "toolu_1", &input);
        // An id issued an hour ago, signed correctly.
        let issued_at = now_ms() - 3_600_000;
        let tag = s.mac(&bound, issued_at).finalize().into_bytes();
        let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
        let old = format!("apr_{issued_at}_{hex}");
        let day = Signer {
            secret: Secret::new("k"),
            ttl: DEFAULT_APPROVAL_TTL,
        };
        assert_eq!(day.verify(&old, &bound), Ok(()));
        let minute = Signer {
            secret: Secret::new("k"),
            ttl: Duration::from_secs(60),
        };
        assert_eq!(minute.verify(&old, &bound), Err(Refused::Expired));
    }
}
