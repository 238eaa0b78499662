//! The Messages API client: where a request goes and with which headers, and one request sent
//! with retries and backoff until it has an answer or a [`RunError`]. One attempt (sending, and
//! reading what comes back) is `api/attempt.rs`.

mod attempt;

use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};

pub(crate) use attempt::{http_error, parse_message};

use super::api_thread::THREADS_BETA;
use super::error::{source_chain, Chain, RunError};
use super::protocol::MessageResponse;
use super::redact::{shown_url, Redactor};
use super::request::Outgoing;
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
        request: impl Into<Outgoing<'_>>,
    ) -> Result<MessageResponse, RunError> {
        let request = request.into();
        let target = Target::new(cfg, request.threaded)?;
        self.send(&target, cfg, request, None).await
    }

    /// Sends one `POST /v1/messages` whose body asks for `"stream": true`, hands `events` what
    /// arrives while the reply is written, and assembles the reply (the same JSON as without
    /// streaming). A failed attempt is retried like its HTTP twin only if none of its events
    /// were handed on yet (else they would repeat).
    pub async fn create_message_streamed(
        &self,
        cfg: &ApiConfig,
        request: impl Into<Outgoing<'_>>,
        events: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<MessageResponse, RunError> {
        let request = request.into();
        let target = Target::new(cfg, request.threaded)?;
        self.send(&target, cfg, request, Some(events)).await
    }

    /// [`ApiClient::create_message`] (with `events`, [`ApiClient::create_message_streamed`])
    /// to a [`Target`] made once for the run's requests: where they go, their headers and the
    /// run's secrets are derived once per run, not once per request.
    pub(crate) async fn send_to(
        &self,
        target: &Target,
        cfg: &ApiConfig,
        request: Outgoing<'_>,
        events: Option<&mut (dyn FnMut(StreamEvent) + Send)>,
    ) -> Result<MessageResponse, RunError> {
        self.send(target, cfg, request, events).await
    }

    /// Sends the request until an attempt succeeds or one fails with no retry left; each
    /// attempt gets a log line, and its error has the run's secrets taken out. An attempt whose
    /// streamed reply was cut once it began is followed by the request's restart body, if it has
    /// one (the reply then says so: `after_cut`).
    async fn send(
        &self,
        target: &Target,
        cfg: &ApiConfig,
        request: Outgoing<'_>,
        mut events: Option<&mut (dyn FnMut(StreamEvent) + Send)>,
    ) -> Result<MessageResponse, RunError> {
        let secrets = &target.secrets;
        let mut retries_done = 0u32;
        let mut restarted = None;
        let mut after_cut = false;
        loop {
            let body = restarted.as_ref().unwrap_or(&request.body);
            let started = Instant::now();
            let attempt = self
                .attempt(target, cfg, body, retries_done, events.as_deref_mut())
                .await;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let failure = match attempt {
                Ok(mut response) => {
                    response.after_cut = after_cut;
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
            if let (true, false, Some(restart)) =
                (failure.reply_started, after_cut, request.restart)
            {
                tracing::info!(
                    "api thread: the reply was cut once it began; the retry starts a new thread"
                );
                restarted = Some(restart());
                after_cut = true;
            }
            tokio::time::sleep(wait).await;
            retries_done += 1;
        }
    }
}

/// What every attempt of a run's requests shares: where they go, with which headers, and the
/// secrets to take out of what comes back. Derived from the run's [`ApiConfig`] (and whether the
/// request continues an API thread, which adds a beta header).
pub(crate) struct Target {
    url: String,
    /// `url` parsed once, as reqwest would parse it for each attempt (`None`: it cannot be,
    /// and each attempt fails as reqwest fails it).
    parsed: Option<reqwest::Url>,
    /// `url` as messages show it: without the user, password and query, which may be credentials.
    shown: String,
    headers: HeaderMap,
    secrets: Redactor,
}

impl Target {
    /// Where the requests of a run with `cfg` go; an error when its credential or version
    /// cannot be sent.
    pub(crate) fn new(cfg: &ApiConfig, threaded: bool) -> Result<Self, RunError> {
        let url = messages_url(&cfg.base_url);
        Ok(Target {
            parsed: reqwest::Url::parse(&url).ok(),
            shown: shown_url(&url),
            url,
            headers: auth_headers(cfg, threaded)?,
            secrets: Redactor::of(cfg),
        })
    }
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
/// the credential), which they cannot replace. A request with a `thread` adds the Threads beta
/// to `anthropic-beta`.
fn auth_headers(cfg: &ApiConfig, threaded: bool) -> Result<HeaderMap, RunError> {
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
fn with_threads_beta(headers: &mut HeaderMap) {
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
