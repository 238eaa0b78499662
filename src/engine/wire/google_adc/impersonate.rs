//! Service account impersonation: a token of one identity (a workload identity pool's federated
//! token, a gcloud user's, another service account's) traded at the IAM Credentials API's
//! `generateAccessToken` (the credentials file's `service_account_impersonation_url`) for a
//! short-lived token of the service account it names. Used by an external account that names a
//! service account to impersonate, and by gcloud's `impersonated_service_account` files
//! (`gcloud auth application-default login --impersonate-service-account`).

use std::time::SystemTime;

use aws_smithy_types::date_time::{DateTime, Format};
use serde::{Deserialize, Serialize};

use super::exchange::{http, short, CLOUD_PLATFORM};
use crate::engine::wire::access_token::AccessToken;
use crate::engine::wire::secret::Secret;

/// The lifetime asked for when the file names none (Google's default and its usual maximum).
pub const DEFAULT_LIFETIME_SECONDS: u64 = 3600;

#[derive(Serialize)]
struct Asked<'a> {
    scope: [&'a str; 1],
    lifetime: String,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    delegates: &'a [String],
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Granted {
    access_token: String,
    expire_time: Option<String>,
}

#[derive(Deserialize)]
struct Refusal {
    error: Option<RefusalBody>,
}

#[derive(Deserialize)]
struct RefusalBody {
    message: Option<String>,
    status: Option<String>,
}

/// The impersonated service account's token, asked at `url` with `source` as the bearer. What
/// the endpoint says back is quoted short; the source token is never quoted.
pub async fn access_token(
    url: &str,
    source: &AccessToken,
    delegates: &[String],
    lifetime_seconds: u64,
) -> Result<AccessToken, String> {
    let asked = Asked {
        scope: [CLOUD_PLATFORM],
        lifetime: format!("{lifetime_seconds}s"),
        delegates,
    };
    let body = serde_json::to_vec(&asked)
        .map_err(|e| format!("the request could not be written ({e})"))?;
    let mut request = http()?
        .post(url)
        .bearer_auth(source.token.expose())
        .header("content-type", "application/json")
        .body(body);
    if let Some(project) = &source.quota_project {
        request = request.header("x-goog-user-project", project);
    }
    let who = format!("the impersonation endpoint {url}");
    let response = request
        .send()
        .await
        .map_err(|e| format!("{who} could not be reached ({})", short(&e.to_string())))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| {
        format!("{who} answered HTTP {status} but its body could not be read ({e})")
    })?;
    if !status.is_success() {
        let said = match serde_json::from_slice::<Refusal>(&body) {
            Ok(Refusal {
                error: Some(RefusalBody { message, status }),
            }) => format!(
                "{}: {}",
                status.as_deref().unwrap_or("error"),
                short(message.as_deref().unwrap_or(""))
            ),
            _ => "no Google error body".to_owned(),
        };
        return Err(format!("{who} answered HTTP {} ({said})", status.as_u16()));
    }
    let granted: Granted = serde_json::from_slice(&body)
        .map_err(|_| format!("{who} answered HTTP {status} without an accessToken"))?;
    if granted.access_token.trim().is_empty() {
        return Err(format!("{who} answered an empty accessToken"));
    }
    let expires = granted
        .expire_time
        .as_deref()
        .and_then(|at| DateTime::from_str(at, Format::DateTime).ok())
        .and_then(|at| SystemTime::try_from(at).ok());
    Ok(AccessToken {
        token: Secret::new(granted.access_token),
        expires,
        quota_project: None,
    })
}
