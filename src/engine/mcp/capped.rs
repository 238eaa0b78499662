//! The HTTP client of a Streamable HTTP server, with its tool list's byte budget: the answer to a
//! `tools/list` is read no further than [`MAX_LISTING_BYTES`], before anything of it is parsed,
//! whichever way it comes (a JSON body, an event of the request's own SSE stream, or one of the
//! session's stream). Past it the request gets a JSON-RPC error of ours instead, and the session
//! goes on.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use futures::stream::{BoxStream, StreamExt};
use reqwest_mcp::header::{HeaderName, HeaderValue};
use rmcp::model::ErrorCode as JsonRpcCode;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde::Deserialize;
use sse_stream::Sse;

use super::config::MAX_LISTING_BYTES;

/// The JSON-RPC error code of a tool list past the budget (in the range JSON-RPC leaves to
/// implementations); its message is [`LISTING_TOO_LARGE`].
pub const LISTING_TOO_LARGE_CODE: i32 = -32099;

/// The message of the error a too large tool list is answered with.
pub const LISTING_TOO_LARGE: &str = "the tools/list answer is larger than the client takes";

/// How many `tools/list` ids are remembered for answers that come on the session's stream.
pub(super) const REMEMBERED: usize = 16;

/// A `reqwest` client that reads tool lists within the budget.
#[derive(Clone)]
pub struct Capped {
    http: reqwest_mcp::Client,
    /// The ids of the latest `tools/list` requests.
    listings: Arc<Mutex<VecDeque<RequestId>>>,
}

impl Capped {
    /// Wraps `http`.
    pub fn new(http: reqwest_mcp::Client) -> Self {
        Capped {
            http,
            listings: Arc::default(),
        }
    }

    fn remember(&self, id: &RequestId) {
        let mut ids = self.listings.lock().unwrap_or_else(|p| p.into_inner());
        if ids.len() == REMEMBERED {
            ids.pop_front();
        }
        ids.push_back(id.clone());
    }

    /// `events` with each event too large for a tool list that answers one replaced by our
    /// error. Other events are the transport's to bound (its own, larger, limit).
    fn capped(
        &self,
        events: BoxStream<'static, Result<Sse, SseError>>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let listings = self.listings.clone();
        events
            .map(move |event| {
                let mut sse = event?;
                let Some(data) = sse.data.as_deref().filter(|d| d.len() > MAX_LISTING_BYTES) else {
                    return Ok(sse);
                };
                let Some(id) = answered(data) else {
                    return Ok(sse);
                };
                let ids = listings.lock().unwrap_or_else(|p| p.into_inner());
                if ids.contains(&id) {
                    sse.data = serde_json::to_string(&too_large(id)).ok();
                }
                Ok(sse)
            })
            .boxed()
    }
}

/// The id of a `tools/list` request, if `message` is one.
pub(super) fn listing_id(message: &ClientJsonRpcMessage) -> Option<&RequestId> {
    match message {
        ClientJsonRpcMessage::Request(r)
            if matches!(r.request, ClientRequest::ListToolsRequest(_)) =>
        {
            Some(&r.id)
        }
        _ => None,
    }
}

/// The id of the request a message's text answers, read without keeping anything else of it
/// (serde skips the other fields without building them).
pub(super) fn answered(data: &str) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Peek {
        id: Option<RequestId>,
    }
    serde_json::from_str::<Peek>(data).ok()?.id
}

/// Our answer to a `tools/list` whose answer was too large.
pub(super) fn too_large(id: RequestId) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(
        ErrorData::new(JsonRpcCode(LISTING_TOO_LARGE_CODE), LISTING_TOO_LARGE, None),
        Some(id),
    )
}

type Posted = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest_mcp::Error>>;
type Events =
    Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<reqwest_mcp::Error>>;

impl StreamableHttpClient for Capped {
    type Error = reqwest_mcp::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Posted {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Posted {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        mut limits: StreamableHttpResponseLimits,
    ) -> Posted {
        let Some(id) = listing_id(&message).cloned() else {
            return self
                .http
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await;
        };
        self.remember(&id);
        limits.max_json_response_size = limits.max_json_response_size.min(MAX_LISTING_BYTES);
        let posted = self
            .http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        match posted {
            Err(StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                Ok(StreamableHttpPostResponse::Json(too_large(id), None))
            }
            Ok(StreamableHttpPostResponse::Sse(events, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.capped(events), session),
            ),
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Events {
        let events = self
            .http
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.capped(events))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Events {
        let events = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.capped(events))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_a_large_answer_is_read_without_the_rest() {
        let data = format!(
            r#"{{"jsonrpc":"2.0","result":{{"tools":[{}]}},"id":7}}"#,
            r#"{"name":"a"},"#.repeat(1000).trim_end_matches(',')
        );
        assert_eq!(answered(&data), Some(RequestId::Number(7)));
        assert_eq!(answered(r#"{"method":"x"}"#), None);
        assert_eq!(answered("not json"), None);
    }
}
