//! A bearer token a run fetched (from the caller's function, or Google's Application Default
//! Credentials) and how long it may be reused.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::engine::wire::secret::Secret;

/// How long before it expires a kept token is fetched again (as Google's own library does).
pub const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(5 * 60);

/// How long a token that came without its expiry (a plain string) is reused; a 401 ends it
/// sooner.
pub const REUSE_WITHOUT_EXPIRY: Duration = Duration::from_secs(5 * 60);

/// The longest the caller's function may take before the run fails with `authentication_error`.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(30);

/// A bearer token and, when known, when it stops working.
#[derive(Clone, Debug)]
pub struct AccessToken {
    /// The token sent as `Authorization: Bearer`.
    pub token: Secret,
    /// When it expires, if the answer said.
    pub expires: Option<SystemTime>,
    /// The project billed for the requests (`x-goog-user-project`): a gcloud user's quota
    /// project, as Google's own libraries send it.
    pub quota_project: Option<String>,
}

impl AccessToken {
    /// Reads a function's answer: a token string, or `{ token, expiresAt? }` (`expiresAt` in
    /// epoch milliseconds or an ISO date; lib/credentials.js turns a `Date` into milliseconds).
    /// Says what is wrong without quoting any value.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let token = |t: &str| {
            let t = t.trim();
            (!t.is_empty()).then(|| Secret::new(t))
        };
        match value {
            Value::String(s) => match token(s) {
                Some(token) => Ok(AccessToken {
                    token,
                    expires: None,
                    quota_project: None,
                }),
                None => Err("an empty string".to_owned()),
            },
            Value::Object(fields) => {
                let Some(token) = fields.get("token").and_then(Value::as_str).and_then(token)
                else {
                    return Err("an object without a non-empty token string".to_owned());
                };
                let expires = match fields.get("expiresAt") {
                    Some(Value::Number(ms)) => ms
                        .as_f64()
                        .filter(|ms| *ms >= 0.0)
                        .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms as u64)),
                    Some(Value::String(iso)) => aws_smithy_types::DateTime::from_str(
                        iso,
                        aws_smithy_types::date_time::Format::DateTime,
                    )
                    .ok()
                    .and_then(|d| SystemTime::try_from(d).ok()),
                    _ => None,
                };
                Ok(AccessToken {
                    token,
                    expires,
                    quota_project: None,
                })
            }
            Value::Null => Err("nothing (null or undefined)".to_owned()),
            Value::Bool(_) => Err("a boolean".to_owned()),
            Value::Number(_) => Err("a number".to_owned()),
            Value::Array(_) => Err("an array".to_owned()),
        }
    }

    /// Whether it may still be used at `now`: until [`REFRESH_BEFORE_EXPIRY`] before it
    /// expires, or for [`REUSE_WITHOUT_EXPIRY`] after `fetched` when its expiry is not known.
    pub fn fresh(&self, fetched: SystemTime, now: SystemTime) -> bool {
        match self.expires {
            Some(at) => now + REFRESH_BEFORE_EXPIRY < at,
            None => now < fetched + REUSE_WITHOUT_EXPIRY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_string_or_a_token_with_its_expiry_and_never_quotes_it() {
        let plain = AccessToken::from_json(&json!("ya29.abc")).unwrap();
        assert_eq!(plain.token.expose(), "ya29.abc");
        assert!(plain.expires.is_none());
        let timed =
            AccessToken::from_json(&json!({ "token": "ya29.x", "expiresAt": 4102444800000u64 }))
                .unwrap();
        assert!(timed.expires.is_some());
        let iso = AccessToken::from_json(
            &json!({ "token": "ya29.x", "expiresAt": "2100-01-01T00:00:00Z" }),
        )
        .unwrap();
        assert_eq!(iso.expires, timed.expires);
        let bad = AccessToken::from_json(&json!({ "access_token": "ya29.secret" })).unwrap_err();
        assert!(!bad.contains("ya29"), "{bad}");
        assert!(AccessToken::from_json(&json!("  ")).is_err());
    }

    #[test]
    fn a_token_is_reused_until_shortly_before_it_expires() {
        let now = SystemTime::now();
        let mut t = AccessToken::from_json(&json!("t")).unwrap();
        assert!(t.fresh(now, now + Duration::from_secs(60)));
        assert!(!t.fresh(now, now + REUSE_WITHOUT_EXPIRY));
        t.expires = Some(now + Duration::from_secs(10 * 60));
        assert!(t.fresh(now, now));
        assert!(!t.fresh(now, now + Duration::from_secs(6 * 60)));
    }
}
