//! The AWS credentials a run signs its requests with (Bedrock, Claude Platform on AWS): given
//! as an object, answered by the caller's function, or found by AWS's default chain
//! (`aws_auth/chain.rs`). Fetched credentials are kept until shortly before they expire; the
//! signature itself is `platform/sigv4.rs`'s.

pub mod chain;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use aws_smithy_types::date_time::{DateTime, Format};
use serde_json::Value;

use crate::engine::error::RunError;
use crate::engine::wire::fetched::FetchCredential;
use crate::engine::wire::secret::Secret;

/// How long before they expire fetched credentials are fetched again.
pub const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(5 * 60);

/// How long credentials without an expiry are reused before they are asked for again (as AWS's
/// own SDKs cache them).
pub const REUSE_WITHOUT_EXPIRY: Duration = Duration::from_secs(15 * 60);

/// The longest a credential lookup may take (a function, a profile's process, web identity,
/// the container's or the instance's metadata) before the run fails with `authentication_error`.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(30);

/// An AWS access key pair, with its session token for temporary credentials.
#[derive(Clone, Debug)]
pub struct AwsCredentials {
    /// The access key id (`AKIA…`, `ASIA…`): not a secret, it names the key.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: Secret,
    /// The session token of temporary credentials.
    pub session_token: Option<Secret>,
    /// When they stop working, if they do.
    pub expires: Option<SystemTime>,
}

impl AwsCredentials {
    /// Reads `{ accessKeyId, secretAccessKey, sessionToken?, expiration? }` (as
    /// `@aws-sdk/credential-providers` answer; `expiration` an ISO date or epoch milliseconds),
    /// or says what is wrong with it, without quoting any value.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let expected = "an object { accessKeyId, secretAccessKey, sessionToken? }";
        let Value::Object(fields) = value else {
            return Err(format!("{expected}, not {}", kind(value)));
        };
        let text = |key: &str| match fields.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
            None | Some(Value::Null) => Ok(None),
            Some(other) => Err(format!(
                "{key} must be a non-empty string, not {}",
                kind(other)
            )),
        };
        let (Some(access_key_id), Some(secret)) = (text("accessKeyId")?, text("secretAccessKey")?)
        else {
            return Err(format!(
                "{expected}: accessKeyId and secretAccessKey are both needed"
            ));
        };
        let expires = match fields.get("expiration") {
            None | Some(Value::Null) => None,
            Some(Value::Number(ms)) => ms
                .as_f64()
                .filter(|ms| *ms >= 0.0)
                .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms as u64)),
            Some(Value::String(iso)) => DateTime::from_str(iso, Format::DateTime)
                .ok()
                .and_then(|d| SystemTime::try_from(d).ok()),
            Some(_) => None,
        };
        Ok(AwsCredentials {
            access_key_id,
            secret_access_key: Secret::new(secret),
            session_token: text("sessionToken")?.map(Secret::new),
            expires,
        })
    }

    /// AWS's own type for them, as the signer takes it.
    pub(crate) fn identity(&self) -> aws_smithy_runtime_api::client::identity::Identity {
        aws_credential_types::Credentials::new(
            &self.access_key_id,
            self.secret_access_key.expose(),
            self.session_token.as_ref().map(|t| t.expose().to_owned()),
            self.expires,
            "anthropic-tool-calling",
        )
        .into()
    }

    /// The secrets in them, for the run's redactor.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.secret_access_key.expose())
            .chain(self.session_token.as_ref().map(Secret::expose))
    }

    /// Whether they may still be used at `now`: until [`REFRESH_BEFORE_EXPIRY`] before they
    /// expire, or for [`REUSE_WITHOUT_EXPIRY`] after `fetched` when they do not.
    pub fn fresh(&self, fetched: SystemTime, now: SystemTime) -> bool {
        match self.expires {
            Some(at) => now + REFRESH_BEFORE_EXPIRY < at,
            None => now < fetched + REUSE_WITHOUT_EXPIRY,
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Where a run's AWS credentials come from, in the order the options decided.
#[derive(Clone)]
pub enum AwsSource {
    /// Given as an object (`provider.credentials`).
    Given(AwsCredentials),
    /// The caller's function (`provider.credentials` as a function); `None` until the binding
    /// hands it over.
    Function(Option<Arc<dyn FetchCredential>>),
    /// One profile of the shared config and credentials files (Claude Platform on AWS with
    /// `AWS_PROFILE`, as its official client reads it).
    Profile(String),
    /// AWS's default chain: the environment, the shared files with `AWS_PROFILE`, web identity,
    /// the container's and the instance's metadata. `before`: where the run looked first, as an
    /// error message says it.
    DefaultChain {
        /// Where the run looked before the chain.
        before: &'static str,
    },
}

/// How a run signs its requests: the region and service of the signature's scope, and where the
/// credentials come from. Cloned with the run's settings; clones share one cache.
#[derive(Clone)]
pub struct AwsSigning {
    /// The region the requests are signed for.
    pub region: String,
    /// `bedrock` or `aws-external-anthropic`.
    pub service: &'static str,
    /// Where the credentials come from.
    pub source: AwsSource,
    /// The function's last answer and when it came.
    cache: Arc<tokio::sync::Mutex<Option<(AwsCredentials, SystemTime)>>>,
}

impl std::fmt::Debug for AwsSigning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let source = match &self.source {
            AwsSource::Given(_) => "given",
            AwsSource::Function(_) => "function",
            AwsSource::Profile(_) => "profile",
            AwsSource::DefaultChain { .. } => "default chain",
        };
        f.debug_struct("AwsSigning")
            .field("region", &self.region)
            .field("service", &self.service)
            .field("source", &source)
            .finish()
    }
}

impl AwsSigning {
    /// Signing for `service` in `region` with credentials from `source`.
    pub fn new(region: String, service: &'static str, source: AwsSource) -> Self {
        AwsSigning {
            region,
            service,
            source,
            cache: Arc::default(),
        }
    }

    /// Hands over the caller's function when the credentials come from one (the binding has
    /// it only once the options are read).
    pub fn give_function(&mut self, function: Arc<dyn FetchCredential>) {
        if let AwsSource::Function(slot) = &mut self.source {
            *slot = Some(function);
        }
    }

    /// The credentials for the next request (`platform`: the platform as messages name it), or
    /// `authentication_error` saying where they were looked for; nothing is sent then.
    pub async fn credentials(&self, platform: &str) -> Result<AwsCredentials, RunError> {
        match &self.source {
            AwsSource::Given(credentials) => Ok(credentials.clone()),
            AwsSource::Function(Some(function)) => {
                let mut cache = self.cache.lock().await;
                let now = SystemTime::now();
                if let Some((credentials, at)) = cache.as_ref() {
                    if credentials.fresh(*at, now) {
                        return Ok(credentials.clone());
                    }
                }
                let answer = tokio::time::timeout(LOOKUP_TIMEOUT, function.fetch())
                    .await
                    .map_err(|_| {
                        RunError::credentials_function_failed("provider.credentials", &format!(
                            "it did not answer within {} s",
                            LOOKUP_TIMEOUT.as_secs()
                        ))
                    })?
                    .map_err(|why| RunError::credentials_function_failed("provider.credentials", &why))?;
                let value: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
                let credentials = AwsCredentials::from_json(&value)
                    .map_err(|why| RunError::credentials_function_answered("provider.credentials", &why))?;
                *cache = Some((credentials.clone(), now));
                Ok(credentials)
            }
            AwsSource::Function(None) => Err(RunError::credentials_function_failed(
                "provider.credentials",
                "provider.credentials must be an object { accessKeyId, secretAccessKey, sessionToken? } or a function returning one",
            )),
            AwsSource::Profile(name) => {
                chain::lookup(Some(name), platform, "", &self.region).await
            }
            AwsSource::DefaultChain { before } => {
                chain::lookup(None, platform, before, &self.region).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_the_aws_sdk_answers_and_never_quotes_a_value() {
        let c = AwsCredentials::from_json(&json!({
            "accessKeyId": "AKIAX", "secretAccessKey": "s3cr3t", "sessionToken": "tok",
            "expiration": "2030-01-01T00:00:00.000Z"
        }))
        .unwrap();
        assert_eq!(c.access_key_id, "AKIAX");
        assert_eq!(c.secrets().collect::<Vec<_>>(), ["s3cr3t", "tok"]);
        assert!(c.expires.is_some());
        let bad =
            AwsCredentials::from_json(&json!({ "accessKeyId": "AKIAX", "secretAccessKey": 7 }))
                .unwrap_err();
        assert!(
            bad.contains("secretAccessKey") && !bad.contains("AKIAX"),
            "{bad}"
        );
        let half = AwsCredentials::from_json(&json!({ "accessKeyId": "AKIAX" })).unwrap_err();
        assert!(half.contains("both"), "{half}");
    }

    #[test]
    fn credentials_are_reused_until_shortly_before_they_expire() {
        let now = SystemTime::now();
        let mut c =
            AwsCredentials::from_json(&json!({ "accessKeyId": "A", "secretAccessKey": "s" }))
                .unwrap();
        assert!(c.fresh(now, now + Duration::from_secs(60)));
        assert!(!c.fresh(now, now + REUSE_WITHOUT_EXPIRY));
        c.expires = Some(now + Duration::from_secs(10 * 60));
        assert!(c.fresh(now, now));
        assert!(!c.fresh(now, now + Duration::from_secs(6 * 60)));
    }
}
