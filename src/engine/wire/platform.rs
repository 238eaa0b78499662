//! Where the Messages API is reached: Anthropic's own API, or a cloud platform that serves the
//! same models (CONTRACT §14). A [`Platform`] says, for one run, where a request goes (the
//! platform's path after `baseURL`, the model in the path on Bedrock and Vertex), how the body is
//! shaped (`anthropic_version` and betas in the body, `model` and `stream` left out), which
//! headers carry the version and the credential, whether the API's Threads are offered, how a
//! streamed reply is framed (`bedrock.rs`: AWS event-stream frames) and how the platform's
//! errors map to our codes (`errors.rs`). The platforms themselves are listed in `kind.rs`. The
//! loop never asks which one it talks to.

pub mod bedrock;
pub mod errors;
pub mod kind;
pub mod sigv4;

pub use kind::Platform;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};

use crate::engine::error::RunError;
use crate::engine::wire::settings::ApiConfig;

/// The API version a request names, and the legacy value Bedrock and Vertex take for the
/// `2023-06-01` pin.
const PINNED_VERSION: &str = "2023-06-01";

/// Characters a model id keeps raw in its path segment (as the official clients encode it):
/// everything else, `/` and `%` included, is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

fn segment(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

impl Platform {
    /// The platform's name as `provider` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Platform::Anthropic => "anthropic",
            Platform::Bedrock { .. } => "bedrock",
            Platform::Vertex { .. } => "vertex",
            Platform::Foundry => "foundry",
            Platform::Aws { .. } => "aws",
            Platform::GoogleCloud { .. } => "google-cloud",
        }
    }

    /// The platform as an error message names it.
    pub fn display_name(&self) -> &'static str {
        match self {
            Platform::Anthropic => "The Anthropic API",
            Platform::Bedrock { .. } => "Amazon Bedrock",
            Platform::Vertex { .. } => "Google Vertex AI",
            Platform::Foundry => "Microsoft Foundry",
            Platform::Aws { .. } => "Claude Platform on AWS",
            Platform::GoogleCloud { .. } => "Claude on Google Cloud",
        }
    }

    /// Whether the platform runs the first-party API with its Threads (Bedrock and Vertex
    /// refuse `thread`: they get the whole history every time).
    pub fn has_threads(&self) -> bool {
        !matches!(self, Platform::Bedrock { .. } | Platform::Vertex { .. })
    }

    /// Whether the API version goes in the body (`anthropic_version`), not in a header.
    fn version_in_body(&self) -> bool {
        matches!(self, Platform::Bedrock { .. } | Platform::Vertex { .. })
    }

    /// The platform's path after `baseURL`'s, for a streamed request or not.
    pub fn path(&self, stream: bool) -> String {
        match self {
            Platform::Anthropic | Platform::Aws { .. } => "/v1/messages".to_owned(),
            Platform::Foundry => "/anthropic/v1/messages".to_owned(),
            Platform::Bedrock { model } => {
                let op = if stream {
                    "invoke-with-response-stream"
                } else {
                    "invoke"
                };
                format!("/model/{}/{op}", segment(model))
            }
            Platform::Vertex {
                project,
                region,
                model,
            } => {
                let op = if stream {
                    "streamRawPredict"
                } else {
                    "rawPredict"
                };
                format!(
                    "/v1/projects/{}/locations/{}/publishers/anthropic/models/{}:{op}",
                    segment(project),
                    segment(region),
                    segment(model)
                )
            }
            Platform::GoogleCloud {
                project,
                location,
                workspace,
            } => format!(
                "/v1/projects/{}/locations/{}/workspaces/{}/invoke/v1/messages",
                segment(project),
                segment(location),
                segment(workspace)
            ),
        }
    }

    /// Where a request goes for a `baseURL`: the platform's path after its path, before its
    /// query (a gateway may take its key as a query parameter).
    pub fn url(&self, base_url: &str, stream: bool) -> String {
        match reqwest::Url::parse(base_url) {
            Ok(base) => self.url_from(&base, stream).into(),
            Err(_) => format!("{}{}", base_url.trim_end_matches('/'), self.path(stream)),
        }
    }

    /// [`Platform::url`] from the `baseURL` parsed once (a run's requests derive both of their
    /// URLs from one parse).
    pub fn url_from(&self, base: &reqwest::Url, stream: bool) -> reqwest::Url {
        let mut url = base.clone();
        let path = format!("{}{}", url.path().trim_end_matches('/'), self.path(stream));
        url.set_path(&path);
        url.set_fragment(None);
        url
    }

    /// The keys the body leaves out on this platform (`extraBody` does not bring them back).
    pub fn omitted_fields(&self) -> &'static [&'static str] {
        match self {
            Platform::Bedrock { .. } => &["model", "stream"],
            Platform::Vertex { .. } => &["model"],
            _ => &[],
        }
    }

    /// The fields this platform's body starts with: `anthropic_version` on Bedrock and Vertex
    /// (the pin's legacy value under `2023-06-01`), and on Bedrock the betas as
    /// `anthropic_beta` (those the `betas` option and the run's features named; the `headers`
    /// option's own `anthropic-beta` stays a header). Each is `(key, JSON text)`.
    pub fn leading_fields(&self, api: &ApiConfig) -> Vec<(&'static str, String)> {
        if !self.version_in_body() {
            return Vec::new();
        }
        let version = match (self, api.api_version.as_str()) {
            (Platform::Bedrock { .. }, PINNED_VERSION) => "bedrock-2023-05-31",
            (Platform::Vertex { .. }, PINNED_VERSION) => "vertex-2023-10-16",
            (_, other) => other,
        };
        let mut out = vec![(
            "anthropic_version",
            serde_json::to_string(version).expect("a string"),
        )];
        if matches!(self, Platform::Bedrock { .. }) {
            let betas: Vec<&str> = body_betas(api).collect();
            if !betas.is_empty() {
                out.push((
                    "anthropic_beta",
                    serde_json::to_string(&betas).expect("strings"),
                ));
            }
        }
        out
    }

    /// The headers every attempt sends on this platform: the caller's extra ones, then the
    /// content type, the version (where it is a header) and the credential, which they cannot
    /// replace. `threaded`: the request has a `thread` (its beta joins `anthropic-beta`).
    pub(crate) fn headers(&self, cfg: &ApiConfig, threaded: bool) -> Result<HeaderMap, RunError> {
        if matches!(self, Platform::Anthropic) {
            return crate::engine::wire::settings::auth_headers(cfg, threaded);
        }
        let mut headers = HeaderMap::new();
        let betas_in_body = matches!(self, Platform::Bedrock { .. });
        for (name, value) in &cfg.headers {
            if betas_in_body && name == "anthropic-beta" && !value.is_sensitive() {
                continue;
            }
            headers.append(name.clone(), value.clone());
        }
        if threaded {
            crate::engine::wire::settings::with_threads_beta(&mut headers);
        }
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if !self.version_in_body() {
            let version = HeaderValue::from_str(&cfg.api_version).map_err(|_| {
                RunError::invalid_request(format!(
                    "apiVersion {:?} is not a valid header value.",
                    cfg.api_version
                ))
            })?;
            headers.insert("anthropic-version", version);
        }
        if let Platform::Aws { workspace_id } = self {
            let id = HeaderValue::from_str(workspace_id).map_err(|_| {
                RunError::invalid_request(
                    "provider.workspaceId is not a valid header value. Nothing was sent.",
                )
            })?;
            headers.insert("anthropic-workspace-id", id);
        }
        // A signed request, or one with a fetched token, gets its `authorization` per attempt
        // (`client/credential.rs`).
        if cfg.aws.is_none() && cfg.token.is_none() {
            let (name, value) = self.credential(cfg)?;
            headers.insert(name, value);
        }
        Ok(headers)
    }

    /// The credential header: Foundry's key as `x-api-key` (or an Entra ID token as a bearer),
    /// every other platform's key or token as `Authorization: Bearer`.
    fn credential(
        &self,
        cfg: &ApiConfig,
    ) -> Result<(reqwest::header::HeaderName, HeaderValue), RunError> {
        let bad = RunError::unsendable_platform_credential;
        let bearer = |secret: &str, what: &str| {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {secret}")).map_err(|_| bad(what))?;
            value.set_sensitive(true);
            Ok((AUTHORIZATION, value))
        };
        match self {
            Platform::Foundry => {
                if let Some(key) = &cfg.api_key {
                    let mut value =
                        HeaderValue::from_str(key.expose()).map_err(|_| bad("API key"))?;
                    value.set_sensitive(true);
                    return Ok((reqwest::header::HeaderName::from_static("x-api-key"), value));
                }
                match &cfg.auth_token {
                    Some(token) => bearer(token.expose(), "auth token"),
                    None => Err(errors::no_credentials(self)),
                }
            }
            Platform::Bedrock { .. } | Platform::Aws { .. } => match &cfg.api_key {
                Some(key) => bearer(key.expose(), "API key"),
                None => Err(errors::no_credentials(self)),
            },
            Platform::Vertex { .. } | Platform::GoogleCloud { .. } => match &cfg.auth_token {
                Some(token) => bearer(token.expose(), "access token"),
                None => Err(errors::no_credentials(self)),
            },
            Platform::Anthropic => unreachable!("the Anthropic API's headers are settings.rs's"),
        }
    }
}

/// The betas a Bedrock body carries: each name of the non-sensitive `anthropic-beta` headers
/// (the `betas` option's and the run's features'), once, in order.
fn body_betas(api: &ApiConfig) -> impl Iterator<Item = &str> {
    let mut seen: Vec<&str> = Vec::new();
    api.headers
        .iter()
        .filter(|(name, value)| name == "anthropic-beta" && !value.is_sensitive())
        .filter_map(|(_, value)| value.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(move |b| {
            if b.is_empty() || seen.contains(b) {
                return false;
            }
            seen.push(b);
            true
        })
}

#[cfg(test)]
mod tests;
