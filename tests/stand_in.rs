//! The stand-in as the Rust tests see it (`support::Server`): a request that breaks the API's rules
//! is answered with the API's 400 and fails the test that sent it, so does a request the script has
//! no step for, and the records show what arrived.

mod support;

use serde_json::{json, Value};
use support::*;

fn broken_round() -> Value {
    json!({ "model": "m", "max_tokens": 10, "messages": [
        { "role": "user", "content": "hi" },
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "toolu_1", "name": "t", "input": {} }] },
        { "role": "user", "content": "forgot the result" },
    ]})
}

async fn send(server: &Server, body: &Value) -> (u16, Value) {
    let response = messages_request(&reqwest::Client::new(), &server.base_url())
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_str(&response.text().await.unwrap()).unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread")]
#[should_panic(expected = "the engine broke the API's rules")]
async fn a_breach_is_answered_400_and_fails_the_test() {
    let server = Server::start([Step::text("never sent")]).await;
    let (status, error) = send(&server, &broken_round()).await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("without `tool_result` blocks"),
        "{error}"
    );
    assert_eq!(server.violations().len(), 1, "{:?}", server.violations());
}

#[tokio::test(flavor = "multi_thread")]
#[should_panic(expected = "no scripted response left")]
async fn a_request_the_script_has_no_step_for_fails_the_test() {
    let server = Server::start([]).await;
    let (status, _) = send(&server, &json!({ "model": "m", "max_tokens": 10, "messages": [{ "role": "user", "content": "hi" }] })).await;
    assert_eq!(status, 500);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_taken_breach_passes_and_the_records_show_what_arrived() {
    let server = Server::start([Step::text("fine")]).await;
    assert_eq!(send(&server, &broken_round()).await.0, 400);
    let taken = server.take_violations();
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert!(taken[0].starts_with("request 1: "), "{taken:?}");
    let valid = json!({ "model": "m", "max_tokens": 10, "messages": [{ "role": "user", "content": "hi" }] });
    let (status, reply) = send(&server, &valid).await;
    assert_eq!(
        (status, reply["content"][0]["text"].as_str()),
        (200, Some("fine"))
    );
    assert!(server.violations().is_empty());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body, valid);
    assert_eq!(requests[1].raw_body, valid.to_string());
    assert_eq!(requests[1].headers["x-api-key"], API_KEY);
    assert_eq!(requests[1].reply_id.as_deref(), reply["id"].as_str());
    assert!(requests[1].at >= requests[0].at);
}
