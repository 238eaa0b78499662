//! An external account (workload identity federation): a token of another identity provider
//! (an OIDC token of a CI, a cloud or a platform such as Vercel), read from a file or a URL as
//! the credentials file says, exchanged at Google's Security Token Service (the file's
//! `token_url`) for an access token; with `service_account_impersonation_url`, that token is traded
//! for the named service account's (`impersonate.rs`). Executable and AWS sources are not read here.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::exchange::{http, post_form, short, CLOUD_PLATFORM};
use super::impersonate;
use crate::engine::wire::access_token::AccessToken;

/// Where the external token is read (`credential_source`).
#[derive(Deserialize, Default)]
pub struct CredentialSource {
    /// A file holding the token.
    pub file: Option<String>,
    /// A URL answering the token (with `headers`).
    pub url: Option<String>,
    /// Headers for `url`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `{ type: "text" | "json", subject_token_field_name }`.
    pub format: Option<SourceFormat>,
    /// An executable source (not read here).
    pub executable: Option<serde_json::Value>,
    /// AWS as the identity provider (not read here).
    pub environment_id: Option<String>,
}

/// How the external token is written where it is read.
#[derive(Deserialize, Default)]
pub struct SourceFormat {
    /// `text` (the default) or `json`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// With `json`: the field holding the token.
    pub subject_token_field_name: Option<String>,
}

/// The fields of an external account file read here.
#[derive(Deserialize, Default)]
pub struct External {
    /// The workload identity pool provider.
    pub audience: Option<String>,
    /// What the external token is (`urn:ietf:params:oauth:token-type:jwt`, …).
    pub subject_token_type: Option<String>,
    /// The Security Token Service's token endpoint.
    pub token_url: Option<String>,
    /// Where the external token is read.
    pub credential_source: Option<CredentialSource>,
    /// A service account to impersonate: its IAM Credentials `generateAccessToken` URL (also the
    /// field of an `impersonated_service_account` file).
    pub service_account_impersonation_url: Option<String>,
    /// `{ token_lifetime_seconds }` of the impersonated token.
    pub service_account_impersonation: Option<ImpersonationSettings>,
}

/// How long an impersonated token is asked to live.
#[derive(Deserialize, Default)]
pub struct ImpersonationSettings {
    /// Seconds; Google's default is 3600.
    pub token_lifetime_seconds: Option<u64>,
}

/// An access token for an external identity; errors never quote the external token.
pub async fn external_account(file: &External) -> Result<AccessToken, String> {
    let federated = federated_token(file).await?;
    let Some(url) = &file.service_account_impersonation_url else {
        return Ok(federated);
    };
    let lifetime = file
        .service_account_impersonation
        .as_ref()
        .and_then(|s| s.token_lifetime_seconds)
        .unwrap_or(impersonate::DEFAULT_LIFETIME_SECONDS);
    impersonate::access_token(url, &federated, &[], lifetime).await
}

/// The Security Token Service's token for the external identity.
async fn federated_token(file: &External) -> Result<AccessToken, String> {
    let (Some(audience), Some(kind), Some(token_url), Some(source)) = (
        &file.audience,
        &file.subject_token_type,
        &file.token_url,
        &file.credential_source,
    ) else {
        return Err("the external account needs audience, subject_token_type, token_url and credential_source".into());
    };
    let subject = subject_token(source).await?;
    let form = [
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        ("audience", audience.as_str()),
        ("scope", CLOUD_PLATFORM),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:access_token",
        ),
        ("subject_token", subject.as_str()),
        ("subject_token_type", kind.as_str()),
    ];
    post_form(token_url, &form)
        .await
        .map_err(|why| why.replace(subject.as_str(), "[redacted]"))
}

/// The external token, from the source's file or URL, as text or from a JSON field.
async fn subject_token(source: &CredentialSource) -> Result<String, String> {
    let text = if let Some(path) = &source.file {
        std::fs::read_to_string(path)
            .map_err(|e| format!("credential_source.file {path:?} could not be read: {e}"))?
    } else if let Some(url) = &source.url {
        let mut asked = http()?.get(url);
        for (name, value) in &source.headers {
            asked = asked.header(name, value);
        }
        let response = asked.send().await.map_err(|e| {
            format!(
                "credential_source.url {url} could not be reached ({})",
                short(&e.to_string())
            )
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!(
                "credential_source.url {url} answered HTTP {}",
                status.as_u16()
            ));
        }
        response
            .text()
            .await
            .map_err(|e| format!("credential_source.url {url}: {e}"))?
    } else if source.executable.is_some() || source.environment_id.is_some() {
        return Err("an executable or AWS credential_source is not read yet: pass google-auth-library's token as provider.accessToken".into());
    } else {
        return Err("credential_source names no file or url".into());
    };
    let json = source
        .format
        .as_ref()
        .is_some_and(|f| f.kind.as_deref() == Some("json"));
    let token = if json {
        let field = source
            .format
            .as_ref()
            .and_then(|f| f.subject_token_field_name.as_deref())
            .unwrap_or("access_token");
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|_| "the external token's source is not JSON".to_owned())?;
        value
            .get(field)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| format!("the external token's JSON has no string field {field:?}"))?
    } else {
        text.trim().to_owned()
    };
    if token.is_empty() {
        return Err("the external token's source is empty".into());
    }
    Ok(token)
}
