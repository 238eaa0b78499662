//! The Messages API client: one request sent with retries and backoff until it has an answer or
//! a [`RunError`]. Where it goes and with which headers is `settings.rs`; one attempt (sending,
//! and reading what comes back) is `client/attempt.rs`.

pub(crate) mod attempt;
mod credential;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;

use crate::engine::error::{source_chain, Chain, RunError};
use crate::engine::wire::platform::kind::Platform;
use crate::engine::wire::protocol::MessageResponse;
use crate::engine::wire::redact::{shown_url, Redactor};
use crate::engine::wire::request::Outgoing;
use crate::engine::wire::retry::AttemptFailure;
use crate::engine::wire::settings::ApiConfig;
use crate::engine::wire::stream::StreamEvent;

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
        let mut token_refreshed = false;
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
                Err(failure) => {
                    let mut error = secrets.error(failure.error);
                    if target.platform != Platform::Anthropic {
                        error = error.on_platform(target.platform.display_name());
                    }
                    AttemptFailure { error, ..failure }
                }
            };
            tracing::info!(
                retry = retries_done,
                status = failure.error.status.unwrap_or(0),
                duration_ms = format_args!("{ms:.1}"),
                request_id = failure.error.request_id.as_deref().unwrap_or("-"),
                code = failure.error.code.as_str(),
                "api attempt: failed"
            );
            // A kept access token the platform refused is fetched again, once, and the request
            // sent again with it at once (this is not one of the retries).
            if let (Some(401), false, Some(token)) =
                (failure.error.status, token_refreshed, &cfg.token)
            {
                if token.forget().await {
                    tracing::info!(
                        "api: the access token was refused; sending again with a fresh one"
                    );
                    token_refreshed = true;
                    continue;
                }
            }
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
    /// `baseURL` parsed once (`Err`: the text, which cannot be).
    base: Result<reqwest::Url, String>,
    /// Where a request goes: `[0]` not streamed, `[1]` streamed (they differ on Bedrock and
    /// Vertex only), each made when a request first goes there.
    to: [OnceLock<Endpoint>; 2],
    headers: HeaderMap,
    secrets: Redactor,
    platform: Platform,
}

/// One URL a run's requests go to.
struct Endpoint {
    /// The URL parsed, as reqwest would parse it for each attempt (`Err`: the text, which cannot
    /// be, and each attempt fails as reqwest fails it).
    url: Result<reqwest::Url, String>,
    /// The URL as messages show it (without the user, password and query, which may be
    /// credentials), made when a message first needs it.
    shown: OnceLock<String>,
}

impl Endpoint {
    /// The URL as a request sends it.
    fn as_str(&self) -> &str {
        match &self.url {
            Ok(url) => url.as_str(),
            Err(text) => text,
        }
    }

    /// The URL as messages show it.
    fn shown(&self) -> &str {
        self.shown.get_or_init(|| shown_url(self.as_str()))
    }
}

impl Target {
    /// Where the requests of a run with `cfg` go; an error when its credential or version
    /// cannot be sent.
    pub(crate) fn new(cfg: &ApiConfig, threaded: bool) -> Result<Self, RunError> {
        let platform = &cfg.platform;
        Ok(Target {
            base: reqwest::Url::parse(&cfg.base_url).map_err(|_| cfg.base_url.clone()),
            to: Default::default(),
            headers: platform.headers(cfg, threaded)?,
            secrets: Redactor::of(cfg),
            platform: platform.clone(),
        })
    }

    /// Where a request goes, streamed or not.
    fn endpoint(&self, stream: bool) -> &Endpoint {
        self.to[usize::from(stream)].get_or_init(|| {
            let url = match &self.base {
                Ok(base) => Ok(self.platform.url_from(base, stream)),
                Err(text) => Err(self.platform.url(text, stream)),
            };
            // A URL text the platform made from one that could not be parsed may be one that
            // can (as before, when each was parsed from its text).
            let url = url.or_else(|text| reqwest::Url::parse(&text).map_err(|_| text));
            Endpoint {
                url,
                shown: OnceLock::new(),
            }
        })
    }
}
