//! One attempt at a request: the body sent, the answer read (whole, or as a stream), and every
//! outcome turned into the reply or an [`AttemptFailure`] that says whether to try again.

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE, LOCATION};
use reqwest::StatusCode;

use super::{ApiClient, Target};
use crate::engine::error::RunError;
use crate::engine::wire::platform::{bedrock::EVENT_STREAM, errors::bedrock_answer};
use crate::engine::wire::protocol::{self, ErrorBody, MessageResponse};
use crate::engine::wire::redact::Redactor;
use crate::engine::wire::request::Body;
use crate::engine::wire::retry::{self, AttemptFailure, Hint};
use crate::engine::wire::settings::{ApiConfig, MAX_RESPONSE_BYTES};
use crate::engine::wire::stream::{self, StreamEvent, StreamFailure};

impl ApiClient {
    /// Sends the body once (the `retries_done`-th retry) and reads the answer. With `events`,
    /// a `text/event-stream` answer is read as it arrives and its events handed on.
    pub(super) async fn attempt(
        &self,
        target: &Target,
        cfg: &ApiConfig,
        body: &Body,
        retries_done: u32,
        events: Option<&mut (dyn FnMut(StreamEvent) + Send + '_)>,
    ) -> Result<MessageResponse, AttemptFailure> {
        let to = target.endpoint(events.is_some());
        let mut headers = target.headers.clone();
        headers.insert("x-stainless-retry-count", HeaderValue::from(retries_done));
        // A signed request (AWS) or a fetched token carries secrets known only now: every error
        // of this attempt is redacted with them.
        let own = super::credential::authorize(target, cfg, to, body, &mut headers).await?;
        let secrets = own.as_ref().unwrap_or(&target.secrets);
        self.exchange(target, cfg, body, headers, secrets, events)
            .await
            .map_err(|failure| AttemptFailure {
                error: secrets.error(failure.error),
                ..failure
            })
    }

    /// Sends the request with its headers, and reads what comes back.
    async fn exchange(
        &self,
        target: &Target,
        cfg: &ApiConfig,
        body: &Body,
        headers: HeaderMap,
        secrets: &Redactor,
        events: Option<&mut (dyn FnMut(StreamEvent) + Send + '_)>,
    ) -> Result<MessageResponse, AttemptFailure> {
        let to = target.endpoint(events.is_some());
        let platform = &target.platform;
        let post = match &to.url {
            Ok(url) => self.http.post(url.clone()),
            Err(text) => self.http.post(text.as_str()),
        };
        let sent = post
            .headers(headers)
            .timeout(cfg.timeout)
            .body(body.to_http())
            .send()
            .await;
        let network = |e: reqwest::Error| {
            AttemptFailure::network(RunError::network(&e, to.shown(), cfg.timeout))
        };
        let response = sent.map_err(network)?;
        let status = response.status();
        let headers = response.headers().clone();
        let request_id = protocol::request_id(&headers);
        let event_stream = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream") || t.starts_with(EVENT_STREAM));
        if let (true, true, Some(events)) = (status.is_success(), event_stream, events) {
            return read_streamed(response, status, secrets, events).await;
        }
        let body = read_body(response).await.map_err(network)?;
        let Some(body) = body else {
            let error = RunError::response_too_large(status, MAX_RESPONSE_BYTES);
            return Err(AttemptFailure::fatal(error.or_request_id(request_id)));
        };
        if status.is_success() {
            return parse_message(&body, secrets)
                .map(|mut message| {
                    message.request_id = request_id.clone();
                    message
                })
                .map_err(|why| {
                    let error = RunError::not_a_message(status, &why);
                    AttemptFailure::fatal(error.or_request_id(request_id.clone()))
                });
        }
        if status.is_redirection() {
            let to = headers
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(|to| secrets.quote(to.as_bytes()));
            let error = RunError::redirected(status, to.as_deref());
            return Err(AttemptFailure::fatal(error.or_request_id(request_id)));
        }
        let hint = retry::server_hint(&headers);
        let (error, retryable) =
            match bedrock_answer(platform, status, &headers, &body, hint, secrets) {
                Some(mapped) => mapped,
                None => (
                    http_error(status, &body, hint, secrets),
                    retry::should_retry(status, &headers),
                ),
            };
        Err(AttemptFailure {
            error: error.or_request_id(request_id),
            retryable,
            hint,
            reply_started: false,
        })
    }
}

/// Reads a streamed 2xx reply; an error in it may be retried only if no event was handed on.
async fn read_streamed(
    response: reqwest::Response,
    status: StatusCode,
    secrets: &Redactor,
    events: &mut (dyn FnMut(StreamEvent) + Send + '_),
) -> Result<MessageResponse, AttemptFailure> {
    let mut shown = false;
    let mut forward = |event: StreamEvent| {
        shown = true;
        events(event)
    };
    match stream::read_reply(response, &mut forward, secrets).await {
        Ok(message) => Ok(message),
        Err(e) => {
            let mut error = e.run_error();
            // An error event has no status of its own (its message names its HTTP twin); any
            // other failure came within this 2xx answer.
            if !matches!(e.failure, StreamFailure::Api { .. }) {
                error.status = Some(status.as_u16());
            }
            Err(AttemptFailure {
                error,
                retryable: e.retryable() && !shown,
                hint: Hint::None,
                reply_started: e.started,
            })
        }
    }
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

/// A 2xx body read as a Messages API reply, or why it is not one (quoting the body with the
/// secrets taken out).
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

/// An HTTP error answer as the run's error: the API's `error.type` and `error.message` from its
/// JSON body (a body that is not that JSON is quoted, the secrets taken out), and the request id
/// the body carries.
pub(crate) fn http_error(
    status: StatusCode,
    body: &[u8],
    hint: Hint,
    secrets: &Redactor,
) -> RunError {
    let parsed: Option<ErrorBody> = serde_json::from_slice(body).ok();
    let (kind, api_message, code, request_id) = match parsed {
        Some(b) => {
            let code = b.error.error_code();
            (b.error.kind, b.error.message, code, b.request_id)
        }
        None => (
            String::new(),
            format!(
                "(no JSON error body; body starts {:?})",
                secrets.quote(body)
            ),
            None,
            None,
        ),
    };
    RunError::http(status.as_u16(), &kind, &api_message, hint.asked())
        .with_api_error_code(code)
        .or_request_id(request_id)
}
