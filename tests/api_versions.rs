//! The API version a run speaks (`anthropic-version`: 2026-10-21 unless pinned), what that
//! version refuses, and the code a refusal names its cause with (`error.details.error_code`),
//! against the stand-in, which holds each request to the rules of the version it names.

mod support;

use anthropic_tool_calling::engine::run::main_loop::run_observed;
use anthropic_tool_calling::engine::wire::protocol::RawMessage;
use anthropic_tool_calling::engine::{ApiClient, ErrorCode, ToolInvocation, ToolOutcome};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use support::api::{CURRENT_VERSION, LEGACY_VERSION};
use support::*;
use tokio_util::sync::CancellationToken;

/// A message of the history, as JSON.
fn message(value: Value) -> RawMessage {
    RawMessage::from(RawValue::from_string(value.to_string()).unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_passes_on_its_error_code_answered_or_streamed() {
    let server = Server::start([
        Step::error(400, "image too large").error_code("image_dimensions_too_large"),
        Step::error(404, "no such thread").error_code("thread_not_found"),
        Step::text("partial")
            .sse_error_after(3, "invalid_request_error", "refused mid-stream")
            .error_code("thread_already_continued"),
        Step::error(400, "plain refusal"),
    ])
    .await;
    let mut cfg = config(&server);
    cfg.api.max_retries = 0;
    let e = run_once(&cfg, &[], prompt("hi")).await.unwrap_err();
    assert_eq!((e.code, e.status), (ErrorCode::InvalidRequest, Some(400)));
    assert_eq!(
        e.api_error_code.as_deref(),
        Some("image_dimensions_too_large")
    );
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(json["apiErrorCode"], "image_dimensions_too_large");
    let e = run_once(&cfg, &[], prompt("hi")).await.unwrap_err();
    assert_eq!(
        (e.status, e.api_error_code.as_deref()),
        (Some(404), Some("thread_not_found"))
    );
    cfg.stream = true;
    let (_, sink) = recorder();
    let client = ApiClient::new();
    let cancel = CancellationToken::new();
    let streamed = run_observed(&client, &cfg, &[], prompt("hi"), &cancel, Some(&sink));
    let e = streamed.await.unwrap_err();
    assert!(e.message.contains("after HTTP 200"), "{}", e.message);
    assert_eq!(
        e.api_error_code.as_deref(),
        Some("thread_already_continued")
    );
    let e = run_once(&cfg, &[], prompt("hi")).await.unwrap_err();
    assert_eq!(e.api_error_code, None);
    assert!(serde_json::to_value(&e)
        .unwrap()
        .get("apiErrorCode")
        .is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gateway_echoing_the_key_as_the_error_code_gets_it_redacted() {
    let echoing = Step::error(400, "refused").error_code("key {echo:x-api-key}");
    let streamed = Step::text("partial")
        .sse_error_after(2, "invalid_request_error", "refused")
        .error_code("key {echo:x-api-key}");
    let server = Server::start([echoing, streamed]).await;
    let mut cfg = config(&server);
    let e = run_once(&cfg, &[], prompt("hi")).await.unwrap_err();
    assert_eq!(e.api_error_code.as_deref(), Some("key [redacted]"));
    cfg.stream = true;
    let (_, sink) = recorder();
    let (client, cancel) = (ApiClient::new(), CancellationToken::new());
    let run = run_observed(&client, &cfg, &[], prompt("hi"), &cancel, Some(&sink));
    let e = run.await.unwrap_err();
    assert_no_key(&e);
    assert_eq!(e.api_error_code.as_deref(), Some("key [redacted]"));
}

#[tokio::test(flavor = "multi_thread")]
async fn details_of_another_shape_cost_nothing_of_the_refusal() {
    let odd = [
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"odd","details":{"error_code":7}}}"#,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"odd","details":"a string"}}"#,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"odd","details":null}}"#,
    ];
    let server = Server::start(odd.map(|body| Step::Raw {
        status: 400,
        content_type: "application/json".into(),
        body: body.into(),
    }))
    .await;
    let cfg = config(&server);
    for _ in odd {
        let e = run_once(&cfg, &[], prompt("hi")).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidRequest);
        assert!(
            e.message.contains("invalid_request_error: odd."),
            "{}",
            e.message
        );
        assert_eq!(e.api_error_code, None);
    }
}

/// A search tool whose result carries a cited text, as a search_result block.
fn cited_search() -> anthropic_tool_calling::engine::Tool {
    tool(&any_input("search"), |_call: ToolInvocation| async {
        let cite = json!([{ "type": "search_result_location", "cited_text": "30 days", "source": "https://kb.test/1", "title": "KB", "search_result_index": 0, "start_block_index": 0, "end_block_index": 0 }]);
        let blocks = json!([{ "type": "search_result", "source": "https://kb.test/1", "title": "KB",
            "content": [{ "type": "text", "text": "Returns within 30 days.", "citations": cite }] }]);
        ToolOutcome::Blocks(blocks.to_string())
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_result_with_cited_text_is_a_tool_failure_where_the_version_refuses_it() {
    let server = Server::start([Step::tool_uses(&[("toolu_1", "search", json!({}))])]).await;
    let cfg = config(&server);
    let e = run_once(&cfg, &[cited_search()], prompt("Return window?"))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolExecutionError);
    assert_eq!(e.tool_name.as_deref(), Some("search"));
    assert!(
        e.message
            .contains("citations on a text block (blocks[0].content[0])")
            && e.message.contains("apiVersion: \"2023-06-01\""),
        "{}",
        e.message
    );
    assert_eq!(
        server.requests().len(),
        1,
        "the refused result was never sent"
    );

    // Under the pin it goes out as the tool gave it, and the API of that version takes it.
    let server = Server::start([
        Step::tool_uses(&[("toolu_1", "search", json!({}))]),
        Step::text("30 days."),
    ])
    .await;
    let mut cfg = config(&server);
    cfg.api.api_version = LEGACY_VERSION.into();
    let out = run_once(&cfg, &[cited_search()], prompt("Return window?"))
        .await
        .unwrap();
    assert_eq!(out.text, "30 days.");
    let sent = &server.requests()[1].last_blocks()[0]["content"][0]["content"][0];
    assert_eq!(sent["citations"][0]["cited_text"], "30 days");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_holds_a_history_to_the_rules_of_the_version_sent() {
    // With `document`, the assistant's message holds a document (refused under 2026-10-21); the
    // last user message always has a cited text (refused under 2026-10-21 too).
    let history = |document: bool| {
        let mut said = vec![json!({ "type": "text", "text": "Here it is." })];
        if document {
            said.insert(0, json!({ "type": "document", "source": { "type": "text", "media_type": "text/plain", "data": "Returns within 30 days." } }));
        }
        vec![
            message(json!({ "role": "user", "content": "Summarise the policy." })),
            message(json!({ "role": "assistant", "content": said })),
            message(json!({ "role": "user", "content": [
                { "type": "text", "text": "Returns within 30 days.", "citations": [{ "type": "char_location", "cited_text": "30", "document_index": 0, "document_title": null, "start_char_index": 0, "end_char_index": 2 }] },
                { "type": "text", "text": "And exchanges?" },
            ]})),
        ]
    };
    let server = Server::start([]).await;
    let cfg = config(&server);
    assert_eq!(cfg.api.api_version, CURRENT_VERSION);
    let e = run_once(&cfg, &[], history(true)).await.unwrap_err();
    assert_eq!((e.code, e.status), (ErrorCode::InvalidRequest, Some(400)));
    assert!(
        e.message
            .contains("messages.1.content.0: `document` blocks can only be in `user` messages"),
        "{}",
        e.message
    );
    let broken = server.take_violations();
    assert!(
        broken.iter().any(|p| p
            .contains("messages.1.content.0: `document` blocks can only be in `user` messages")),
        "{broken:?}"
    );

    // The stand-in names the first rule a request breaks; without the document it is the citations.
    let server = Server::start([]).await;
    let e = run_once(&config(&server), &[], history(false))
        .await
        .unwrap_err();
    assert_eq!((e.code, e.status), (ErrorCode::InvalidRequest, Some(400)));
    let citations = "messages.2.content.0.citations: `citations` on `text` blocks can only be in `assistant` messages";
    assert!(e.message.contains(citations), "{}", e.message);
    let broken = server.take_violations();
    assert!(broken.iter().any(|p| p.contains(citations)), "{broken:?}");

    let server = Server::start([Step::text("Exchanges too.")]).await;
    let mut cfg = config(&server);
    cfg.api.api_version = LEGACY_VERSION.into();
    assert_eq!(
        run_once(&cfg, &[], history(true)).await.unwrap().text,
        "Exchanges too."
    );
    assert_eq!(
        server.requests()[0].headers["anthropic-version"],
        LEGACY_VERSION
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sampling_fields_are_refused_under_2026_10_21_and_sent_under_the_pin() {
    // The engine trusts its config (the binding refuses these options before a run starts):
    // this shows the server refusing them as the API does.
    let server = Server::start([]).await;
    let mut cfg = config(&server);
    cfg.temperature = Some(1.0);
    let e = run_once(&cfg, &[], prompt("hi")).await.unwrap_err();
    assert!(
        e.message
            .contains("temperature: Extra inputs are not permitted"),
        "{}",
        e.message
    );
    server.take_violations();

    let server = Server::start([Step::text("ok")]).await;
    cfg = config(&server);
    cfg.temperature = Some(0.2);
    cfg.api.api_version = LEGACY_VERSION.into();
    run_once(&cfg, &[], prompt("hi")).await.unwrap();
    assert_eq!(server.requests()[0].body["temperature"], 0.2);
}
