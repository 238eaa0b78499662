//! The Messages API client: one request with retries and backoff, and every HTTP outcome
//! turned into a result or a [`RunError`] with its code.

use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use reqwest::StatusCode;

use super::error::{ErrorCode, RunError};
use super::protocol::{ErrorBody, MessageResponse};
use super::redact::Redactor;
use super::request::Body;
use super::retry::{self, Hint};
use super::secret::Secret;
use super::stream::{self, StreamEvent};

/// The largest response body we read; a larger one is refused rather than buffered.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// How to reach the API for one run.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    pub api_key: Option<Secret>,
    pub auth_token: Option<Secret>,
    /// Without the `/v1` suffix.
    pub base_url: String,
    pub api_version: String,
    pub max_retries: u32,
    pub timeout: Duration,
    /// Extra request headers (`betas` as `anthropic-beta`, the `headers` option), already
    /// checked not to replace the credential, version or content-type headers. Values marked
    /// sensitive (the `headers` option's) are never quoted: see [`Redactor::of`].
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Secrets of the run that are never sent (the approval secret), kept here so that they
    /// are taken out of what the API says back like the key is.
    pub unsent_secrets: Vec<Secret>,
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
            .map_err(|e| format!("the HTTP client could not be built: {}", source_chain(&e)))?;
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

    async fn send(
        &self,
        cfg: &ApiConfig,
        body: Body,
        mut events: Option<&mut (dyn FnMut(StreamEvent) + Send)>,
    ) -> Result<MessageResponse, RunError> {
        let target = Target {
            url: format!("{}/v1/messages", cfg.base_url.trim_end_matches('/')),
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
                Err(failure) => Failure {
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
            let may_retry = failure.retryable && retries_done < cfg.max_retries;
            let wait = match failure.hint {
                Hint::TooLong(_) => return Err(failure.error),
                _ if !may_retry => return Err(failure.error),
                Hint::Wait(hint) => hint,
                Hint::None => retry::backoff(retries_done),
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

    async fn attempt(
        &self,
        target: &Target,
        cfg: &ApiConfig,
        body: &Body,
        retries_done: u32,
        events: Option<&mut (dyn FnMut(StreamEvent) + Send + '_)>,
    ) -> Result<MessageResponse, Failure> {
        let (url, secrets) = (target.url.as_str(), &target.secrets);
        let sent = self
            .http
            .post(url)
            .headers(target.headers.clone())
            .header("x-stainless-retry-count", retries_done)
            .timeout(cfg.timeout)
            .body(reqwest::Body::wrap(Pieces::new(body)))
            .send()
            .await;
        let response = sent.map_err(|e| Failure::network(network_error(&e, url, cfg)))?;
        let status = response.status();
        let headers = response.headers().clone();
        let request_id = headers
            .get("request-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let event_stream = headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if let (true, true, Some(events)) = (status.is_success(), event_stream, events) {
            return read_streamed(response, status, secrets, events).await;
        }
        let body = read_body(response)
            .await
            .map_err(|e| Failure::network(network_error(&e, url, cfg)))?;
        let Some(body) = body else {
            let mut error = RunError::new(
                ErrorCode::UnknownError,
                format!("The Anthropic API sent a response body over {} MiB (HTTP {status}); it was not read.", MAX_RESPONSE_BYTES >> 20),
            );
            error.status = Some(status.as_u16());
            error.request_id = request_id;
            return Err(Failure::fatal(error));
        };
        if status.is_success() {
            return parse_message(&body, secrets)
                .map(|mut message| {
                    message.request_id = request_id.clone();
                    message
                })
                .map_err(|why| {
                let mut error = RunError::new(
                    ErrorCode::UnknownError,
                    format!("The Anthropic API answered HTTP {status} with a body that is not a Messages API response: {why}."),
                );
                error.status = Some(status.as_u16());
                error.request_id = request_id.clone();
                Failure::fatal(error)
            });
        }
        if status.is_redirection() {
            let mut error = RunError::new(
                ErrorCode::UnknownError,
                format!(
                    "The Anthropic API answered HTTP {} (a redirect{}); redirects are not followed, so the API key goes to baseURL and nowhere else. Point baseURL at the API itself.",
                    status.as_u16(),
                    headers
                        .get(reqwest::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .map(|to| format!(" to {}", secrets.quote(to.as_bytes())))
                        .unwrap_or_default()
                ),
            );
            error.status = Some(status.as_u16());
            error.request_id = request_id;
            return Err(Failure::fatal(error));
        }
        let hint = retry::server_hint(&headers);
        let mut error = http_error(status, &body, hint, secrets);
        error.request_id = error.request_id.or(request_id);
        Err(Failure {
            error,
            retryable: retry::should_retry(status, &headers),
            hint,
        })
    }
}

/// What every attempt of one request shares: where it goes, with which headers, and the
/// secrets to take out of what comes back.
struct Target {
    url: String,
    headers: HeaderMap,
    secrets: Redactor,
}

/// A request body sent piece by piece (each a shared `Bytes`, written with vectored writes),
/// with its exact length, so it goes with a `content-length` like a body in one buffer.
struct Pieces {
    pieces: std::vec::IntoIter<bytes::Bytes>,
    left: u64,
}

impl Pieces {
    fn new(body: &Body) -> Self {
        Pieces {
            left: body.len() as u64,
            pieces: body.pieces().to_vec().into_iter(),
        }
    }
}

impl http_body::Body for Pieces {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Self::Error>>> {
        let next = self.pieces.next();
        if let Some(piece) = &next {
            self.left -= piece.len() as u64;
        }
        std::task::Poll::Ready(next.map(|piece| Ok(http_body::Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.left)
    }
}

/// Reads a streamed 2xx reply; an error in it may be retried only if no event was handed on.
async fn read_streamed(
    response: reqwest::Response,
    status: StatusCode,
    secrets: &Redactor,
    events: &mut (dyn FnMut(StreamEvent) + Send + '_),
) -> Result<MessageResponse, Failure> {
    let mut shown = false;
    let mut forward = |event: StreamEvent| {
        shown = true;
        events(event)
    };
    match stream::read_reply(response, &mut forward, secrets).await {
        Ok(message) => Ok(message),
        Err(e) => {
            let mut error = e.run_error();
            error.request_id = error.request_id.or(e.request_id.clone());
            if error.status.is_none() && !matches!(e.failure, stream::Failure::Api { .. }) {
                error.status = Some(status.as_u16());
            }
            Err(Failure {
                error,
                retryable: e.retryable() && !shown,
                hint: Hint::None,
            })
        }
    }
}

/// One failed attempt: the error it would end the run with, and whether another may follow.
struct Failure {
    error: RunError,
    retryable: bool,
    hint: Hint,
}

impl Failure {
    /// An attempt whose failure no retry would change.
    fn fatal(error: RunError) -> Self {
        Failure {
            error,
            retryable: false,
            hint: Hint::None,
        }
    }

    fn network(error: RunError) -> Self {
        Failure {
            error,
            retryable: true,
            hint: Hint::None,
        }
    }
}

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
    let bad_key = |what: &str| {
        RunError::new(
            ErrorCode::AuthenticationError,
            format!("The {what} contains characters that cannot be sent in an HTTP header; check ANTHROPIC_API_KEY."),
        )
    };
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
        return Err(RunError::new(
            ErrorCode::AuthenticationError,
            "No API key: set ANTHROPIC_API_KEY in the environment (or pass the apiKey option, or authToken / ANTHROPIC_AUTH_TOKEN). Nothing was sent.",
        ));
    }
    Ok(headers)
}

/// Reads the body, refusing one over [`MAX_RESPONSE_BYTES`] (`Ok(None)`).
async fn read_body(mut response: reqwest::Response) -> Result<Option<Vec<u8>>, reqwest::Error> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Ok(None);
    }
    let mut body = Vec::with_capacity(response.content_length().unwrap_or(0) as usize);
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

pub(crate) fn parse_message(body: &[u8], secrets: &Redactor) -> Result<MessageResponse, String> {
    let message: MessageResponse = serde_json::from_slice(body)
        .map_err(|e| format!("{e} (body starts {:?})", secrets.quote(body)))?;
    if message.kind != "message" || message.role != "assistant" {
        return Err(format!(
            "type {:?} and role {:?}, expected \"message\" and \"assistant\"",
            message.kind, message.role
        ));
    }
    if !message.content.get().trim_start().starts_with('[') {
        return Err("content is not an array".into());
    }
    Ok(message)
}

/// Maps an HTTP error answer to its code, passing the API's own message on.
pub(crate) fn http_error(
    status: StatusCode,
    body: &[u8],
    hint: Hint,
    secrets: &Redactor,
) -> RunError {
    let parsed: Option<ErrorBody> = serde_json::from_slice(body).ok();
    let (kind, api_message, request_id) = match parsed {
        Some(b) => (b.error.kind, b.error.message, b.request_id),
        None => (
            String::new(),
            format!(
                "(no JSON error body; body starts {:?})",
                secrets.quote(body)
            ),
            None,
        ),
    };
    let mut error = api_error(status, &kind, &api_message, hint);
    error.request_id = request_id;
    error
}

/// The error of an answer of this status, with the API's `error.type` and `error.message`.
pub(crate) fn api_error(status: StatusCode, kind: &str, api_message: &str, hint: Hint) -> RunError {
    let code = match status.as_u16() {
        401 | 403 => ErrorCode::AuthenticationError,
        429 => ErrorCode::RateLimited,
        503 | 529 => ErrorCode::Overloaded,
        400..=499 => ErrorCode::InvalidRequest,
        _ => ErrorCode::UnknownError,
    };
    let what = if kind.is_empty() {
        String::new()
    } else {
        format!(" {kind}")
    };
    let advice = match code {
        ErrorCode::AuthenticationError => {
            " Check ANTHROPIC_API_KEY (or the apiKey option) and the key's permissions."
        }
        ErrorCode::RateLimited => {
            " Wait before sending more requests (see retryAfter), or lower the request rate."
        }
        ErrorCode::Overloaded => " The API is overloaded; try again in a little while.",
        ErrorCode::InvalidRequest => {
            " Fix the request; retrying it unchanged will fail the same way."
        }
        _ => " This is on the API's side; try again later.",
    };
    let mut error = RunError::new(
        code,
        format!(
            "The Anthropic API answered HTTP {}{what}: {}.{advice}",
            status.as_u16(),
            // The API's message often ends with a period of its own.
            api_message.trim_end_matches('.')
        ),
    );
    error.status = Some(status.as_u16());
    if matches!(code, ErrorCode::RateLimited | ErrorCode::Overloaded) {
        error.retry_after = hint.asked().map(|h| h.as_secs_f64());
    }
    error
}

fn network_error(e: &reqwest::Error, url: &str, cfg: &ApiConfig) -> RunError {
    let message = if e.is_timeout() {
        format!("The request to {url} timed out after {} ms (timeoutMs). Try again, or raise timeoutMs.", cfg.timeout.as_millis())
    } else if e.is_connect() {
        format!(
            "Could not connect to {url}: {}. Check ANTHROPIC_BASE_URL / baseURL and the network.",
            source_chain(e)
        )
    } else {
        format!(
            "The connection to {url} failed: {}. Try again.",
            source_chain(e)
        )
    };
    RunError::new(ErrorCode::NetworkError, message)
}

/// The innermost causes of an error, which name what really happened (refused, reset…).
fn source_chain(e: &reqwest::Error) -> String {
    let mut parts = Vec::new();
    let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(err) = cur {
        parts.push(err.to_string());
        cur = err.source();
    }
    if parts.is_empty() {
        e.to_string()
    } else {
        parts.join(": ")
    }
}
