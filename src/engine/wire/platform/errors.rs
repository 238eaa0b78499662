//! A platform's error answers as our errors. The Anthropic API and the platforms that run it
//! (Foundry, Claude Platform on AWS, Claude on Google Cloud, and Vertex for the model's own
//! refusals) map by HTTP status, as the API's errors always have (`client/attempt.rs`); Google's
//! and Azure's front ends answer `{ error: { code, message } }`, read the same way. Bedrock maps by its AWS error type
//! (the `x-amzn-errortype` header, else the body's), as CONTRACT §14 lists them, and each is
//! retried as its API twin is.

use reqwest::header::HeaderMap;
use reqwest::StatusCode;

use super::kind::Platform;
use crate::engine::error::{twin_status, RunError};
use crate::engine::wire::redact::Redactor;
use crate::engine::wire::retry::{self, Hint};

/// A Bedrock error answer (one with an AWS error type) as the run's error, and whether the
/// request may be sent again; `None` for any other answer, which maps by its HTTP status as the
/// API's do.
pub(crate) fn bedrock_answer(
    platform: &Platform,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    hint: Hint,
    secrets: &Redactor,
) -> Option<(RunError, bool)> {
    if !matches!(platform, Platform::Bedrock { .. }) {
        return None;
    }
    let aws_type = aws_error_type(headers, body)?;
    Some(aws_answer(status, headers, body, &aws_type, hint, secrets))
}

/// What a Bedrock error of an AWS type stands for: the API error type it is the twin of (its
/// code, and whether it is retried, follow), `None` for `ModelTimeoutException` (a
/// `network_error`, retried as a timeout is).
pub fn bedrock_twin(aws_type: &str) -> Option<&'static str> {
    // Stream exceptions spell the type with a small first letter.
    let mut chars = aws_type.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase());
    let name: String = first.into_iter().chain(chars).collect();
    Some(match name.as_str() {
        "ValidationException" | "ResourceNotFoundException" => "invalid_request_error",
        "AccessDeniedException"
        | "UnrecognizedClientException"
        | "ExpiredTokenException"
        | "InvalidSignatureException"
        | "IncompleteSignatureException"
        | "MissingAuthenticationTokenException" => "authentication_error",
        "ThrottlingException" | "ServiceQuotaExceededException" => "rate_limit_error",
        "ServiceUnavailableException" | "ModelNotReadyException" => "overloaded_error",
        "ModelTimeoutException" => return None,
        _ => "api_error",
    })
}

/// The AWS error type of a Bedrock answer: the `x-amzn-errortype` header, else the body's
/// `code` or `__type`, cleaned as AWS's clients clean it (before `,` and `:`, after `#`).
fn aws_error_type(headers: &HeaderMap, body: &[u8]) -> Option<String> {
    let from_header = headers
        .get("x-amzn-errortype")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let from_body = || {
        let json: serde_json::Value = serde_json::from_slice(body).ok()?;
        ["code", "__type"]
            .iter()
            .find_map(|k| json.get(*k)?.as_str().map(str::to_owned))
    };
    let raw = from_header.or_else(from_body)?;
    let cleaned = raw.split(',').next().unwrap_or_default();
    let cleaned = cleaned.split(':').next().unwrap_or_default();
    let cleaned = cleaned.rsplit('#').next().unwrap_or_default().trim();
    (!cleaned.is_empty()).then(|| cleaned.to_owned())
}

fn aws_answer(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    aws_type: &str,
    hint: Hint,
    secrets: &Redactor,
) -> (RunError, bool) {
    let json: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let said = json.as_ref().and_then(|j| {
        ["message", "Message"]
            .iter()
            .find_map(|k| j.get(*k)?.as_str())
    });
    let message = match said {
        Some(text) => secrets.redact(text).into_owned(),
        None => format!(
            "(no JSON error body; body starts {:?})",
            secrets.quote(body)
        ),
    };
    let twin = bedrock_twin(aws_type);
    let twin_status = twin.map_or(StatusCode::REQUEST_TIMEOUT, twin_status);
    let error = RunError::platform_http(
        "Amazon Bedrock",
        status.as_u16(),
        twin.map(|_| twin_status.as_u16()),
        aws_type,
        &message,
        hint.asked(),
    );
    (error, retry::should_retry(twin_status, headers))
}

/// `authentication_error`: the run has no credential for its platform; says where one is looked
/// for. Nothing was sent.
pub fn no_credentials(platform: &Platform) -> RunError {
    let where_ = match platform {
        Platform::Bedrock { .. } => "a Bedrock API key (the apiKey option or AWS_BEARER_TOKEN_BEDROCK) or AWS credentials (provider.credentials, the AWS default chain)",
        Platform::Vertex { .. } => "an OAuth access token: the authToken option, a provider.accessToken function, or Application Default Credentials",
        Platform::Foundry => "a Foundry key (the apiKey option or ANTHROPIC_FOUNDRY_API_KEY) or an Entra ID token (the authToken option, or a provider.accessToken function)",
        Platform::Aws { .. } => "a workspace API key (the apiKey option or ANTHROPIC_AWS_API_KEY) or AWS credentials (provider.credentials, AWS_PROFILE, the AWS default chain)",
        Platform::GoogleCloud { .. } => "an OAuth access token: the authToken option, a provider.accessToken function, or Application Default Credentials",
        Platform::Anthropic => return RunError::no_credentials(),
    };
    RunError::no_platform_credentials(platform.display_name(), where_)
}
