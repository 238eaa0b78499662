//! The credentials of Bedrock and Claude Platform on AWS, in the order of each platform's
//! official client: the `apiKey` option wins; then `provider.credentials` (an object, or a
//! function lib/credentials.js keeps and the run calls); then, on Claude Platform on AWS, an
//! `AWS_PROFILE` profile and `ANTHROPIC_AWS_API_KEY`, on Bedrock `AWS_BEARER_TOKEN_BEDROCK`;
//! then AWS's default chain. Signing needs a region even with `baseURL`. `provider.accessToken`
//! (Google's platforms, Foundry) is only ever a function.

use std::collections::BTreeMap;

use serde_json::Value;

use super::read::{bad_kind, env_str};
use crate::engine::wire::aws_auth::{chain, AwsCredentials, AwsSigning, AwsSource};
use crate::engine::{RunError, Secret};

/// What lib/credentials.js puts in place of a `provider.credentials` function (the function
/// itself does not cross as JSON).
pub const FUNCTION: &str = "[function]";

const EXPECTED: &str =
    "an object { accessKeyId, secretAccessKey, sessionToken? } or a function returning one";

/// Checks `provider.accessToken` as given: only a function (a fixed token is `authToken`).
pub fn check_token_function(value: &Value) -> Result<(), RunError> {
    if value.as_str() == Some(FUNCTION) {
        return Ok(());
    }
    Err(RunError::invalid_request(
        "Option provider.accessToken must be a function returning a token (a string, or { token, expiresAt? }); pass a fixed token as authToken. Nothing was sent.",
    ))
}

/// Checks `provider.credentials` as given: a function, or AWS credentials.
pub fn check(value: &Value) -> Result<(), RunError> {
    source(value).map(|_| ())
}

fn source(value: &Value) -> Result<AwsSource, RunError> {
    if value.as_str() == Some(FUNCTION) {
        return Ok(AwsSource::Function(None));
    }
    match AwsCredentials::from_json(value) {
        Ok(credentials) => Ok(AwsSource::Given(credentials)),
        Err(why) if value.is_object() => Err(RunError::invalid_request(format!(
            "Option provider.credentials must be {EXPECTED}: {why}. Nothing was sent."
        ))),
        Err(_) => Err(bad_kind("provider.credentials", EXPECTED, value)),
    }
}

/// The key or the signing of a run on `kind` (`"bedrock"` or `"aws"`): `key` is the `apiKey`
/// option, `given` `provider.credentials`; `region` is asked only when requests are signed.
pub fn aws(
    kind: &str,
    key: Option<Secret>,
    given: Option<&Value>,
    env: &BTreeMap<String, Value>,
    region: impl Fn() -> Result<String, RunError>,
) -> Result<(Option<Secret>, Option<AwsSigning>), RunError> {
    if key.is_some() {
        return Ok((key, None));
    }
    let (service, key_var) = match kind {
        "bedrock" => ("bedrock", "AWS_BEARER_TOKEN_BEDROCK"),
        _ => ("aws-external-anthropic", "ANTHROPIC_AWS_API_KEY"),
    };
    let sign = |source| Ok((None, Some(AwsSigning::new(region()?, service, source))));
    if let Some(value) = given {
        return sign(source(value)?);
    }
    if kind == "aws" {
        if let Some(profile) = env_str(env, "AWS_PROFILE") {
            return sign(AwsSource::Profile(profile.to_owned()));
        }
    }
    if let Some(key) = env_str(env, key_var) {
        return Ok((Some(Secret::from(key)), None));
    }
    let before = match kind {
        "bedrock" => "the apiKey option, provider.credentials, AWS_BEARER_TOKEN_BEDROCK, then",
        _ => "the apiKey option, provider.credentials, AWS_PROFILE, ANTHROPIC_AWS_API_KEY, then",
    };
    sign(AwsSource::DefaultChain { before })
}

/// The region of the `AWS_PROFILE` profile (else the default one) in the shared config file.
pub fn profile_region(env: &BTreeMap<String, Value>) -> Option<String> {
    chain::profile_region(env_str(env, "AWS_PROFILE"))
}
