//! Streamed replies (`"stream": true`) assembled by `engine::stream::read_reply`: the same JSON
//! as the non-streamed reply of the same step, deltas delivered while the reply arrives, and
//! every way a stream can fail mapped to its code.

mod support;

use std::time::{Duration, Instant};

use anthropic_tool_calling::engine::wire::protocol::MessageResponse;
use anthropic_tool_calling::engine::wire::redact::Redactor;
use anthropic_tool_calling::engine::wire::stream::{
    read_reply, StreamError, StreamEvent, StreamFailure,
};
use anthropic_tool_calling::engine::ErrorCode;
use serde_json::{json, Value};
use support::{messages_request, Server, Step};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `POST /v1/messages` as the engine sends it, streamed or not.
async fn post(base_url: &str, stream: bool) -> reqwest::Response {
    let body = json!({
        "model": "claude-sonnet-5-5",
        "max_tokens": 1024,
        "messages": [{ "role": "user", "content": "hi" }],
        "stream": stream,
    });
    messages_request(&reqwest::Client::new(), base_url)
        .body(body.to_string())
        .send()
        .await
        .expect("the request is sent")
}

/// Reads a streamed reply, keeping its events.
async fn streamed(
    response: reqwest::Response,
) -> (Result<MessageResponse, StreamError>, Vec<StreamEvent>) {
    let mut seen = Vec::new();
    let reply = read_reply(response, &mut |e| seen.push(e), &Redactor::default()).await;
    (reply, seen)
}

/// The step answered once without and once with streaming: the two replies must be equal.
async fn same_both_ways(step: Step) -> (MessageResponse, Vec<StreamEvent>) {
    let server = Server::start([step.clone(), step]).await;
    let plain = post(&server.base_url(), false).await;
    assert_eq!(plain.status(), 200);
    let plain: MessageResponse = serde_json::from_slice(&plain.bytes().await.unwrap()).unwrap();
    let (reply, events) = streamed(post(&server.base_url(), true).await).await;
    let reply = reply.unwrap_or_else(|e| panic!("the stream failed: {e}"));
    assert_eq!(reply.content.get(), plain.content.get(), "content");
    assert_eq!(reply.stop_reason, plain.stop_reason, "stop_reason");
    assert_eq!(reply.container, plain.container, "container");
    let usage = |m: &MessageResponse| {
        let u = m.usage;
        (
            u.input_tokens,
            u.output_tokens,
            u.cache_creation_input_tokens,
            u.cache_read_input_tokens,
        )
    };
    assert_eq!(usage(&reply), usage(&plain), "usage");
    assert_eq!(
        (reply.kind.as_str(), reply.role.as_str()),
        ("message", "assistant")
    );
    assert_eq!(
        reply.request_id.as_deref(),
        Some(server.requests()[1].request_id.as_str())
    );
    assert!(server.requests()[1].streamed);
    (reply, events)
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn text_reply_is_the_same_and_its_deltas_come_in_order() {
    let text = "Hello, wörld — \"quoted\" \\ and a\nsecond line ✓";
    let step = Step::text(text).usage(json!({
        "input_tokens": 100, "output_tokens": 42,
        "cache_creation_input_tokens": 3, "cache_read_input_tokens": 7
    }));
    let (reply, events) = same_both_ways(step).await;
    assert_eq!(text_of(&events), text);
    assert!(events.len() > 3, "several text deltas, got {events:?}");
    assert_eq!(events.last(), Some(&StreamEvent::BlockStop { index: 0 }));
    assert_eq!(reply.usage.output_tokens, Some(42));
}

#[tokio::test]
async fn tool_use_reply_keeps_its_input_and_announces_the_call() {
    let input =
        json!({ "orderId": "A-1", "zeta": 1, "alpha": [1, { "b": 2, "a": 1 }], "empty": {} });
    let step = Step::tool_uses(&[
        ("toolu_1", "get_order_status", input.clone()),
        ("toolu_2", "no_input", json!({})),
    ]);
    let (reply, events) = same_both_ways(step).await;
    assert_eq!(reply.stop_reason.as_deref(), Some("tool_use"));
    let start = events.iter().position(|e| {
        *e == StreamEvent::ToolInputStart {
            index: 1,
            id: "toolu_1".into(),
            name: "get_order_status".into(),
            server: false,
        }
    });
    let start = start.expect("tool-input-start for toolu_1");
    let partial: String = events[start..]
        .iter()
        .take_while(|e| **e != StreamEvent::BlockStop { index: 1 })
        .filter_map(|e| match e {
            StreamEvent::ToolInputDelta {
                index: 1,
                id,
                partial_json,
            } if id == "toolu_1" => Some(partial_json.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(partial, input.to_string());
}

#[tokio::test]
async fn thinking_reply_keeps_its_signature() {
    let step = Step::reply(
        json!([
            { "type": "thinking", "thinking": "The user greets me; answer briefly.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h" },
            { "type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a" },
            { "type": "text", "text": "Hi!" }
        ]),
        "end_turn",
    );
    let (_, events) = same_both_ways(step).await;
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ReasoningDelta { index: 0, text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "The user greets me; answer briefly.");
}

#[tokio::test]
async fn citations_are_appended_to_their_text_block() {
    let citation = |n: u32| {
        json!({ "type": "char_location", "cited_text": format!("fact {n}"), "document_index": 0,
                "document_title": "Doc", "start_char_index": n, "end_char_index": n + 6 })
    };
    let step = Step::reply(
        json!([
            { "type": "text", "text": "According to the document, " },
            { "type": "text", "text": "the sky is blue.", "citations": [citation(0), citation(10)] }
        ]),
        "end_turn",
    );
    same_both_ways(step).await;
}

#[tokio::test]
async fn server_tool_blocks_come_back_whole() {
    let step = Step::reply(
        json!([
            { "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": { "query": "rust sse" } },
            { "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                { "type": "web_search_result", "url": "https://example.com", "title": "Example",
                  "encrypted_content": "EqgfCioIARgBIiQ3", "page_age": null }
            ] },
            { "type": "text", "text": "Found it." }
        ]),
        "end_turn",
    );
    let (_, events) = same_both_ways(step).await;
    assert!(events.contains(&StreamEvent::ToolInputStart {
        index: 0,
        id: "srvtoolu_1".into(),
        name: "web_search".into(),
        server: true,
    }));
}

#[tokio::test]
async fn unknown_block_types_pass_through() {
    let step = Step::reply(
        json!([
            { "type": "x_future_block", "payload": { "z": [true, null], "a": 1.5 } },
            { "type": "text", "text": "ok" }
        ]),
        "end_turn",
    );
    same_both_ways(step).await;
}

#[tokio::test]
async fn container_and_stop_reason_come_from_message_delta() {
    let step = Step::reply(json!([{ "type": "text", "text": "ran it" }]), "pause_turn")
        .container("container_011CQ", "2026-12-01T00:00:00Z");
    let (reply, _) = same_both_ways(step).await;
    assert_eq!(reply.container.unwrap().id, "container_011CQ");
    assert_eq!(reply.stop_reason.as_deref(), Some("pause_turn"));
}

#[tokio::test]
async fn deltas_arrive_before_the_reply_ends() {
    let text = "one two three four five six seven";
    let delay = Duration::from_millis(15);
    let server = Server::start([Step::text(text).stream_delay(delay)]).await;
    let response = post(&server.base_url(), true).await;
    let mut seen: Vec<(Instant, StreamEvent)> = Vec::new();
    let reply = read_reply(
        response,
        &mut |e| seen.push((Instant::now(), e)),
        &Redactor::default(),
    )
    .await
    .expect("the reply");
    let done = Instant::now();
    let events: Vec<StreamEvent> = seen.iter().map(|(_, e)| e.clone()).collect();
    assert_eq!(text_of(&events), text);
    // The first delta was in the caller's hands several pauses before the end.
    let first = seen.first().expect("some events").0;
    assert!(
        done - first >= delay * 4,
        "first event only {:?} before the end",
        done - first
    );
    assert_eq!(
        support::value(&reply.content),
        json!([{ "type": "text", "text": text }])
    );
}

async fn failure(step: Step) -> (StreamError, Vec<StreamEvent>) {
    failure_with_id(step).await.0
}

/// [`failure`], and the `request-id` the stand-in answered with.
async fn failure_with_id(step: Step) -> ((StreamError, Vec<StreamEvent>), String) {
    let server = Server::start([step]).await;
    let (reply, events) = streamed(post(&server.base_url(), true).await).await;
    let request_id = server.requests()[0].request_id.clone();
    match reply {
        Ok(_) => panic!("the stream was expected to fail"),
        Err(e) => ((e, events), request_id),
    }
}

#[tokio::test]
async fn an_error_event_maps_like_its_http_twin() {
    let cases = [
        (
            "overloaded_error",
            "Overloaded",
            ErrorCode::Overloaded,
            true,
        ),
        ("rate_limit_error", "Too many", ErrorCode::RateLimited, true),
        (
            "api_error",
            "Internal server error",
            ErrorCode::UnknownError,
            true,
        ),
        (
            "invalid_request_error",
            "prompt is too long",
            ErrorCode::InvalidRequest,
            false,
        ),
        (
            "authentication_error",
            "invalid x-api-key",
            ErrorCode::AuthenticationError,
            false,
        ),
    ];
    for (kind, message, code, retryable) in cases {
        let ((error, events), request_id) =
            failure_with_id(Step::text("partial answer").sse_error_after(4, kind, message)).await;
        assert_eq!(
            error.failure,
            StreamFailure::Api {
                kind: kind.into(),
                message: message.into(),
                code: None,
            }
        );
        let run_error = error.run_error();
        assert_eq!(run_error.code, code, "{kind}");
        assert_eq!(error.retryable(), retryable, "{kind}");
        assert!(run_error.message.contains(message), "{}", run_error.message);
        assert!(
            run_error.message.contains("after HTTP 200"),
            "{}",
            run_error.message
        );
        assert_eq!(run_error.request_id.as_deref(), Some(request_id.as_str()));
        assert!(
            !events.is_empty(),
            "the deltas before the error were delivered"
        );
    }
}

#[tokio::test]
async fn a_cut_stream_is_a_network_error() {
    let (error, _) = failure(Step::text("this answer is cut short").sse_cut_after(5)).await;
    assert!(
        matches!(
            error.failure,
            StreamFailure::Connection(_) | StreamFailure::Ended
        ),
        "{:?}",
        error.failure
    );
    assert_eq!(error.run_error().code, ErrorCode::NetworkError);
    assert!(error.retryable());
}

#[tokio::test]
async fn an_unknown_delta_fails_naming_it() {
    let (error, _) = failure(Step::text("hello").unknown_delta("x_future_delta")).await;
    assert_eq!(
        error.failure,
        StreamFailure::UnknownDelta("x_future_delta".into())
    );
    let run_error = error.run_error();
    assert_eq!(run_error.code, ErrorCode::UnknownError);
    assert!(
        run_error.message.contains("x_future_delta"),
        "{}",
        run_error.message
    );
    assert!(!error.retryable());
}

/// Serves one request with this exact SSE body, then closes the connection cleanly: for what
/// the scripted server does not send (keys out of order, a clean early end, bad JSON).
async fn raw_sse(body: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        // Headers, then the body by its content-length.
        loop {
            let n = socket.read(&mut buf).await.unwrap();
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length || n == 0 {
                    break;
                }
            }
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nrequest-id: req_raw\r\nconnection: close\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(body.as_bytes()).await.unwrap();
        socket.shutdown().await.unwrap();
    });
    format!("http://{address}")
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

fn message_start() -> (&'static str, Value) {
    (
        "message_start",
        json!({ "type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": { "input_tokens": 25, "output_tokens": 1 } } }),
    )
}

fn delta(index: usize, delta: Value) -> (&'static str, Value) {
    (
        "content_block_delta",
        json!({ "type": "content_block_delta", "index": index, "delta": delta }),
    )
}

fn block_start(index: usize, raw_block: &str) -> String {
    // Written by hand so the block's keys keep this order on the wire.
    format!("event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{index},\"content_block\":{raw_block}}}\n\n")
}

fn block_stop(index: usize) -> (&'static str, Value) {
    (
        "content_block_stop",
        json!({ "type": "content_block_stop", "index": index }),
    )
}

fn message_end(stop_reason: &str, usage: Value) -> String {
    sse(&[
        (
            "message_delta",
            json!({ "type": "message_delta", "delta": { "stop_reason": stop_reason, "stop_sequence": null }, "usage": usage }),
        ),
        ("message_stop", json!({ "type": "message_stop" })),
    ])
}

#[tokio::test]
async fn keys_stay_in_wire_order_and_usage_accumulates() {
    let mut body = sse(&[message_start(), ("ping", json!({ "type": "ping" }))]);
    body += &block_start(0, r#"{"type":"text","text":""}"#);
    body += &sse(&[
        delta(0, json!({ "type": "text_delta", "text": "Sky " })),
        delta(
            0,
            json!({ "type": "citations_delta", "citation": { "type": "char_location", "cited_text": "blue" } }),
        ),
        (
            "x_future_event",
            json!({ "type": "x_future_event", "anything": 1 }),
        ),
        delta(0, json!({ "type": "text_delta", "text": "is blue." })),
        block_stop(0),
    ]);
    body += &block_start(
        1,
        r#"{"type":"tool_use","id":"toolu_9","name":"lookup","input":{}}"#,
    );
    body += &sse(&[
        delta(1, json!({ "type": "input_json_delta", "partial_json": "" })),
        delta(
            1,
            json!({ "type": "input_json_delta", "partial_json": "{\"zeta\": 1, \"al" }),
        ),
        delta(
            1,
            json!({ "type": "input_json_delta", "partial_json": "pha\": {\"y\": 2, \"x\": 3}}" }),
        ),
        block_stop(1),
    ]);
    body += &block_start(
        2,
        r#"{"type":"tool_use","id":"toolu_10","name":"noargs","input":{}}"#,
    );
    body += &sse(&[block_stop(2)]);
    body += &message_end("tool_use", json!({ "output_tokens": 57 }));
    let (reply, _) = streamed(post(&raw_sse(body).await, true).await).await;
    let reply = reply.expect("the reply");
    assert_eq!(
        reply.content.get(),
        // The citation is as `json!` wrote it (sorted keys); the blocks keep the wire order.
        r#"[{"type":"text","text":"Sky is blue.","citations":[{"cited_text":"blue","type":"char_location"}]},{"type":"tool_use","id":"toolu_9","name":"lookup","input":{"zeta": 1, "alpha": {"y": 2, "x": 3}}},{"type":"tool_use","id":"toolu_10","name":"noargs","input":{}}]"#
    );
    assert_eq!(
        reply.usage.input_tokens,
        Some(25),
        "kept from message_start"
    );
    assert_eq!(
        reply.usage.output_tokens,
        Some(57),
        "replaced by message_delta"
    );
    assert_eq!(reply.request_id.as_deref(), Some("req_raw"));
}

#[tokio::test]
async fn a_clean_end_before_message_stop_is_a_network_error() {
    let mut body = sse(&[message_start()]);
    body += &block_start(0, r#"{"type":"text","text":""}"#);
    body += &sse(&[delta(
        0,
        json!({ "type": "text_delta", "text": "Half an ans" }),
    )]);
    let (reply, events) = streamed(post(&raw_sse(body).await, true).await).await;
    let error = reply.err().expect("an error");
    assert_eq!(error.failure, StreamFailure::Ended);
    let run_error = error.run_error();
    assert_eq!(run_error.code, ErrorCode::NetworkError);
    assert!(
        run_error.message.contains("ended before message_stop"),
        "{}",
        run_error.message
    );
    assert_eq!(text_of(&events), "Half an ans");
}

#[tokio::test]
async fn malformed_json_in_an_event_is_an_unknown_error() {
    let mut body = sse(&[message_start()]);
    body += "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\n\n";
    body += &message_end("end_turn", json!({ "output_tokens": 2 }));
    let (reply, _) = streamed(post(&raw_sse(body).await, true).await).await;
    let error = reply.err().expect("an error");
    assert!(
        matches!(error.failure, StreamFailure::Malformed(_)),
        "{:?}",
        error.failure
    );
    assert_eq!(error.run_error().code, ErrorCode::UnknownError);
    assert!(!error.retryable());
}

#[tokio::test]
async fn a_tool_input_cut_by_max_tokens_is_kept_as_an_empty_object() {
    let mut body = sse(&[message_start()]);
    body += &block_start(
        0,
        r#"{"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}"#,
    );
    body += &sse(&[
        delta(
            0,
            json!({ "type": "input_json_delta", "partial_json": "{\"query\": \"unfini" }),
        ),
        block_stop(0),
    ]);
    body += &message_end("max_tokens", json!({ "output_tokens": 1024 }));
    let (reply, _) = streamed(post(&raw_sse(body.clone()).await, true).await).await;
    let reply = reply.expect("a cut reply still assembles");
    assert_eq!(
        reply.content.get(),
        r#"[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}]"#
    );
    // The same bad input in a reply that was not cut is an error, never a silent `{}`.
    let uncut = body.replace("max_tokens", "tool_use");
    let (reply, _) = streamed(post(&raw_sse(uncut).await, true).await).await;
    let error = reply.err().expect("an error");
    assert!(
        matches!(error.failure, StreamFailure::Malformed(_)),
        "{:?}",
        error.failure
    );
}
