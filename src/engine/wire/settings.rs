//! How a run reaches the API: where its requests go (`baseURL`, the path added to it), with
//! which headers (the credential, the version, the caller's extra ones, the Threads beta), and
//! the most of an answer that is read.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};

use crate::engine::error::RunError;
use crate::engine::wire::aws_auth::AwsSigning;
use crate::engine::wire::fetched::FetchCredential;
use crate::engine::wire::platform::kind::Platform;
use crate::engine::wire::secret::Secret;
use crate::engine::wire::threads::THREADS_BETA;
use crate::engine::wire::token_auth::TokenAuth;

/// The largest response body we read; a larger one is refused rather than buffered.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// How to reach the API for one run.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// The key sent as `x-api-key` (`apiKey`, else `ANTHROPIC_API_KEY`); it wins over the token.
    pub api_key: Option<Secret>,
    /// The token sent as `Authorization: Bearer` when there is no key (`authToken`, else
    /// `ANTHROPIC_AUTH_TOKEN`).
    pub auth_token: Option<Secret>,
    /// Where the API is (`baseURL`), without the `/v1` suffix; `/v1/messages` is added to its
    /// path, before its query (on a platform, the platform's path: [`Platform::url`]).
    pub base_url: String,
    /// The `anthropic-version` header.
    pub api_version: String,
    /// How many times a failed attempt may be sent again (`maxRetries`).
    pub max_retries: u32,
    /// How long one attempt may take, its answer included (`timeoutMs`).
    pub timeout: Duration,
    /// Extra request headers (`betas` as `anthropic-beta`, the `headers` option), already
    /// checked not to replace the credential, version or content-type headers. Values marked
    /// sensitive (the `headers` option's) are never quoted: see [`Redactor::of`].
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Secrets of the run that are never sent (the approval secret), kept here so that they
    /// are taken out of what the API says back like the key is.
    pub unsent_secrets: Vec<Secret>,
    /// Secrets the request body carries (the MCP connector's authorization tokens): they go to
    /// the API and nowhere else, and are taken out of what it says back like the key is.
    pub body_secrets: Vec<Secret>,
    /// Where the Messages API is reached (`provider`): the Anthropic API by default.
    pub platform: Platform,
    /// On Bedrock and Claude Platform on AWS without a key: how each attempt is signed (AWS
    /// Signature Version 4) and with which credentials.
    pub aws: Option<AwsSigning>,
    /// On Vertex AI, Claude on Google Cloud and Foundry with `provider.accessToken`: where each
    /// attempt's bearer token comes from.
    pub token: Option<TokenAuth>,
}

impl ApiConfig {
    /// Hands over the caller's credential function to whichever source takes one (AWS
    /// credentials, or an access token).
    pub fn give_function(&mut self, function: std::sync::Arc<dyn FetchCredential>) {
        if let Some(aws) = self.aws.as_mut() {
            aws.give_function(function);
        } else if let Some(token) = self.token.as_mut() {
            token.give_function(function);
        }
    }
}

/// The headers every attempt sends: the caller's extra ones, then ours (content type, version,
/// the credential), which they cannot replace. A request with a `thread` adds the Threads beta
/// to `anthropic-beta`.
pub(crate) fn auth_headers(cfg: &ApiConfig, threaded: bool) -> Result<HeaderMap, RunError> {
    let mut headers = HeaderMap::new();
    for (name, value) in &cfg.headers {
        headers.append(name.clone(), value.clone());
    }
    if threaded {
        with_threads_beta(&mut headers);
    }
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(
        "anthropic-version",
        HeaderValue::from_str(&cfg.api_version).map_err(|_| {
            RunError::invalid_request(format!(
                "apiVersion {:?} is not a valid header value.",
                cfg.api_version
            ))
        })?,
    );
    let bad_key = RunError::unsendable_credential;
    if let Some(key) = &cfg.api_key {
        let mut value = HeaderValue::from_str(key.expose()).map_err(|_| bad_key("API key"))?;
        value.set_sensitive(true);
        headers.insert("x-api-key", value);
    } else if let Some(token) = &cfg.auth_token {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
            .map_err(|_| bad_key("auth token"))?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    } else {
        return Err(RunError::no_credentials());
    }
    Ok(headers)
}

/// Adds the Threads beta to `anthropic-beta`: appended to the first such header (as sensitive as
/// it was), unless one names it already; or as a header of its own.
pub(crate) fn with_threads_beta(headers: &mut HeaderMap) {
    let named = headers
        .get_all("anthropic-beta")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|b| b.trim() == THREADS_BETA));
    if named {
        return;
    }
    let value = match headers.get("anthropic-beta") {
        Some(first) => {
            let joined = format!("{},{THREADS_BETA}", first.to_str().unwrap_or_default());
            let mut value = HeaderValue::from_str(&joined)
                .unwrap_or_else(|_| HeaderValue::from_static(THREADS_BETA));
            value.set_sensitive(first.is_sensitive());
            value
        }
        None => HeaderValue::from_static(THREADS_BETA),
    };
    match headers.get_mut("anthropic-beta") {
        Some(first) => *first = value,
        None => {
            headers.insert("anthropic-beta", value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn betas(cfg_headers: &[(&'static str, &str, bool)]) -> Vec<(String, bool)> {
        let mut headers = HeaderMap::new();
        for (name, value, sensitive) in cfg_headers {
            let mut value = HeaderValue::from_str(value).unwrap();
            value.set_sensitive(*sensitive);
            headers.append(*name, value);
        }
        with_threads_beta(&mut headers);
        headers
            .get_all("anthropic-beta")
            .iter()
            .map(|v| (v.to_str().unwrap().to_owned(), v.is_sensitive()))
            .collect()
    }

    #[test]
    fn the_threads_beta_joins_anthropic_beta_once() {
        assert_eq!(betas(&[]), [(THREADS_BETA.to_owned(), false)]);
        assert_eq!(
            betas(&[("anthropic-beta", "a-1,b-2", false)]),
            [(format!("a-1,b-2,{THREADS_BETA}"), false)]
        );
        // The `headers` option's own anthropic-beta stays as sensitive as it was.
        assert_eq!(
            betas(&[
                ("anthropic-beta", "a-1", false),
                ("anthropic-beta", "x", true)
            ]),
            [
                (format!("a-1,{THREADS_BETA}"), false),
                ("x".to_owned(), true)
            ]
        );
        assert_eq!(
            betas(&[("anthropic-beta", "x", true)]),
            [(format!("x,{THREADS_BETA}"), true)]
        );
        let named = format!("a-1, {THREADS_BETA}");
        assert_eq!(
            betas(&[
                ("anthropic-beta", "z", false),
                ("anthropic-beta", &named, true)
            ]),
            [("z".to_owned(), false), (named.clone(), true)]
        );
    }
}
