//! The credential an attempt gets when it is known only then: an AWS signature over this very
//! request (`platform/sigv4.rs`), or a bearer token the caller's function answered
//! (`token_auth.rs`). Either way the secrets it carries join the redactor of what comes back.

use std::time::SystemTime;

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};

use super::{Endpoint, Target};
use crate::engine::error::RunError;
use crate::engine::wire::platform::sigv4;
use crate::engine::wire::redact::Redactor;
use crate::engine::wire::request::Body;
use crate::engine::wire::retry::AttemptFailure;
use crate::engine::wire::settings::ApiConfig;

/// The header naming the project billed for a user's requests.
const USER_PROJECT: &str = "x-goog-user-project";

/// Adds the attempt's own credential to `headers`, and answers the redactor that knows its
/// secrets (`None`: the run's own, nothing was added). A failure means nothing is sent.
pub(super) async fn authorize(
    target: &Target,
    cfg: &ApiConfig,
    to: &Endpoint,
    body: &Body,
    headers: &mut HeaderMap,
) -> Result<Option<Redactor>, AttemptFailure> {
    let fatal = |e| AttemptFailure::fatal(target.secrets.error(e));
    if let Some(aws) = &cfg.aws {
        let credentials = aws
            .credentials(target.platform.display_name())
            .await
            .map_err(fatal)?;
        let signed = target.secrets.with(credentials.secrets());
        let hash = body.sha256_hex();
        // The URL exactly as reqwest will send it.
        let url = to.as_str();
        sigv4::sign_request(headers, url, &hash, aws, &credentials, SystemTime::now())
            .map_err(|e| AttemptFailure::fatal(signed.error(e)))?;
        return Ok(Some(signed));
    }
    if let Some(source) = &cfg.token {
        let token = source
            .token(target.platform.display_name())
            .await
            .map_err(fatal)?;
        let secrets = target.secrets.with([token.token.expose()]);
        let mut value = HeaderValue::from_str(&format!("Bearer {}", token.token.expose()))
            .map_err(|_| {
                AttemptFailure::fatal(RunError::unsendable_platform_credential("access token"))
            })?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
        // The caller's own `headers` option wins.
        let project = token.quota_project.as_deref();
        if let Some(project) = project.and_then(|p| HeaderValue::from_str(p).ok()) {
            headers.entry(USER_PROJECT).or_insert(project);
        }
        return Ok(Some(secrets));
    }
    Ok(None)
}
