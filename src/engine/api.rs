//! The Messages API client: where a request goes and with which headers, and one request sent
//! with retries and backoff until it has an answer or a [`RunError`]. One attempt (sending, and
//! reading what comes back) is `api/attempt.rs`.

mod attempt;

use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};

pub(crate) use attempt::{http_error, parse_message};

use super::error::{source_chain, Chain, RunError};
use super::protocol::MessageResponse;
use super::redact::{shown_url, Redactor};
use super::request::Body;
use super::retry::AttemptFailure;
use super::secret::Secret;
use super::stream::StreamEvent;

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
    /// path, before its query ([`messages_url`]).
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
}

/// An HTTP client with its keep-alive connection pool. Build one per process (or per runtime,
/// since pooled connections belong to the runtime that opened them) and share it.
#[derive(Clone)]
pub struct ApiClient {
    http: reqwest::Client,
}

impl Default for ApiClient {
    fn default() -> Self {
        Self::new()
    }
}

impl ApiClient {
    /// A client with a keep-alive pool and rustls.
    ///
    /// # Panics
    ///
    /// When reqwest cannot build one (see [`ApiClient::try_new`], which the binding uses).
    pub fn new() -> Self {
        Self::try_new().unwrap_or_else(|why| panic!("{why}"))
    }

    /// A client with a keep-alive pool and rustls, or why reqwest could not build one (its TLS
    /// backend did not start). There is no fallback: a default client would follow redirects,
    /// carrying the key to wherever they point.
    pub fn try_new() -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .pool_idle_timeout(Duration::from_secs(60))
            // The key goes to baseURL and nowhere else: a redirect is an error, never followed
            // (reqwest would carry `x-api-key` to another host).
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true)
            .user_agent(concat!(
                "anthropic-tool-calling/",
                env!("CARGO_PKG_VERSION")
            ))
            .build()
            .map_err(|e| {
                format!(
                    "the HTTP client could not be built: {}",
                    source_chain(&e, Chain::Causes)
                )
            })?;
        Ok(ApiClient { http })
    }

    /// Sends one `POST /v1/messages`, retrying as the SDK does, and parses the answer.
    pub async fn create_message(
        &self,
        cfg: &ApiConfig,
        body: Body,
    ) -> Result<MessageResponse, RunError> {
        self.send(cfg, body, None).await
    }

    /// Sends one `POST /v1/messages` whose body asks for `"stream": true`, hands `events` what
    /// arrives while the reply is written, and assembles the reply (the same JSON as without
    /// streaming). A failed attempt is retried like its HTTP twin only if none of its events
    /// were handed on yet (else they would repeat).
    pub async fn create_message_streamed(
        &self,
        cfg: &ApiConfig,
        body: Body,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<MessageResponse, RunError> {
        self.send(cfg, body, Some(events)).await
    }

    /// Sends the request until an attempt succeeds or one fails with no retry left; each
    /// attempt gets a log line, and its error has the run's secrets taken out.
    async fn send(
        &self,
        cfg: &ApiConfig,
        body: Body,
        mut events: Option<&mut (dyn FnMut(StreamEvent) + Send)>,
    ) -> Result<MessageResponse, RunError> {
        let url = messages_url(&cfg.base_url);
        let target = Target {
            shown: shown_url(&url),
            url,
            headers: auth_headers(cfg)?,
            secrets: Redactor::of(cfg),
        };
        let secrets = &target.secrets;
        let mut retries_done = 0u32;
        loop {
            let started = Instant::now();
            let attempt = self
                .attempt(&target, cfg, &body, retries_done, events.as_deref_mut())
                .await;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let failure = match attempt {
                Ok(response) => {
                    tracing::info!(
                        retry = retries_done,
                        status = 200,
                        duration_ms = format_args!("{ms:.1}"),
                        request_id =
                            &*secrets.redact(response.request_id.as_deref().unwrap_or("-")),
                        "api attempt: ok"
                    );
                    return Ok(response);
                }
                // Everything below quotes the error (log line, the run's error, a stream part).
                Err(failure) => AttemptFailure {
                    error: secrets.error(failure.error),
                    ..failure
                },
            };
            tracing::info!(
                retry = retries_done,
                status = failure.error.status.unwrap_or(0),
                duration_ms = format_args!("{ms:.1}"),
                request_id = failure.error.request_id.as_deref().unwrap_or("-"),
                code = failure.error.code.as_str(),
                "api attempt: failed"
            );
            let Some(wait) = failure.wait_before_retry(retries_done, cfg.max_retries) else {
                return Err(failure.error);
            };
            tracing::debug!(
                retry = retries_done + 1,
                wait_ms = wait.as_millis() as u64,
                "api: waiting before the retry"
            );
            tokio::time::sleep(wait).await;
            retries_done += 1;
        }
    }
}

/// What every attempt of one request shares: where it goes, with which headers, and the
/// secrets to take out of what comes back.
struct Target {
    url: String,
    /// `url` as messages show it: without the user, password and query, which may be credentials.
    shown: String,
    headers: HeaderMap,
    secrets: Redactor,
}

/// Where `POST /v1/messages` goes for a `baseURL`: after its path, before its query (a gateway
/// may take its key as a query parameter: `https://gw/proxy?key=…` is `/proxy/v1/messages?key=…`).
pub fn messages_url(base_url: &str) -> String {
    match reqwest::Url::parse(base_url) {
        Ok(mut url) => {
            let path = format!("{}/v1/messages", url.path().trim_end_matches('/'));
            url.set_path(&path);
            url.set_fragment(None);
            url.into()
        }
        Err(_) => format!("{}/v1/messages", base_url.trim_end_matches('/')),
    }
}

/// The headers every attempt sends: the caller's extra ones, then ours (content type, version,
/// the credential), which they cannot replace.
fn auth_headers(cfg: &ApiConfig) -> Result<HeaderMap, RunError> {
    let mut headers = HeaderMap::new();
    for (name, value) in &cfg.headers {
        headers.append(name.clone(), value.clone());
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
