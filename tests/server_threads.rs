//! The test server's Threads beyond the shared table (`stand-in/rules.json`): what depends on how
//! a request ends — a stream cut or failed before message_stop holds nothing, a request continuing
//! a reply holds it in flight until it ends, an error frees it — and what the records show.

mod support;

use std::time::Duration;

use serde_json::{json, Value};
use support::threads::{ThreadState, THREADS_BETA};
use support::*;

async fn post(server: &Server, body: &Value) -> (u16, Value, String) {
    let response = messages_request(&reqwest::Client::new(), &server.base_url())
        .header("anthropic-beta", THREADS_BETA)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
    )
}

fn create(stream: bool) -> Value {
    json!({ "model": "m", "max_tokens": 64, "system": "Be brief.", "tools": [{ "name": "t", "input_schema": { "type": "object" } }],
            "messages": [{ "role": "user", "content": "hi" }], "thread": { "type": "create" }, "stream": stream })
}

fn continuing(id: &str, stream: bool) -> Value {
    json!({ "model": "m", "max_tokens": 64, "messages": [{ "role": "user", "content": "more" }],
            "thread": { "type": "continue", "previous_message_id": id }, "stream": stream })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_or_failed_before_message_stop_holds_nothing() {
    let cut = Step::text("cut").sse_cut_after(5);
    let failed = Step::text("failed").sse_error_after(4, "overloaded_error", "Overloaded");
    let whole = Step::text("whole");
    let (cut_id, failed_id, whole_id) = (cut.id(), failed.id(), whole.id());
    let server = Server::start([Step::text("first"), cut, failed, whole]).await;
    let (_, first, _) = post(&server, &create(false)).await;
    let first = first["id"].as_str().unwrap().to_owned();
    for (id, _) in [(&cut_id, "cut"), (&failed_id, "failed")] {
        let _ = messages_request(&reqwest::Client::new(), &server.base_url())
            .header("anthropic-beta", THREADS_BETA)
            .body(continuing(&first, true).to_string())
            .send()
            .await
            .unwrap()
            .text()
            .await;
        assert_eq!(server.held_conversation(id), None, "{id} is not held");
    }
    // The reply they continued is free again: the server holds a whole reply or none of it.
    let (status, _, text) = post(&server, &continuing(&first, true)).await;
    assert_eq!(status, 200);
    assert!(text.contains("message_stop"));
    let held = server
        .held_conversation(&whole_id)
        .expect("a whole reply is held");
    assert_eq!(held["messages"].as_array().unwrap().len(), 4);
    assert_eq!(held["system"], "Be brief.");
    let (status, spent, _) = post(&server, &continuing(&first, false)).await;
    assert_eq!(status, 400);
    assert_eq!(
        spent["error"]["details"]["error_code"],
        "thread_already_continued"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_is_in_flight_while_continued_and_free_again_after_an_error() {
    let server = Server::start([
        Step::text("first"),
        Step::text("slow").stream_delay(Duration::from_millis(100)),
        Step::error(529, "Overloaded"),
        Step::text("again"),
    ])
    .await;
    let (_, first, _) = post(&server, &create(false)).await;
    let first = first["id"].as_str().unwrap().to_owned();
    let slow = {
        let (url, body) = (server.base_url(), continuing(&first, true));
        tokio::spawn(async move {
            messages_request(&reqwest::Client::new(), &url)
                .header("anthropic-beta", THREADS_BETA)
                .body(body.to_string())
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        })
    };
    server.wait_for_requests(2).await;
    let (status, busy, _) = post(&server, &continuing(&first, false)).await;
    assert_eq!(status, 400);
    assert_eq!(
        busy["error"]["details"]["error_code"],
        "thread_continue_in_flight"
    );
    assert!(slow.await.unwrap().contains("message_stop"));
    // The slow one spent it; a new reply's continue that fails frees that reply again.
    let latest = server.requests()[1].reply_id.clone().unwrap();
    let (status, _, _) = post(&server, &continuing(&latest, false)).await;
    assert_eq!(status, 529);
    let (status, _, _) = post(&server, &continuing(&latest, false)).await;
    assert_eq!(status, 200);
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_record_shows_the_whole_conversation_and_the_body_what_was_sent() {
    let server = Server::start([Step::text("first"), Step::text("second")]).await;
    let (_, first, _) = post(&server, &create(false)).await;
    let (status, _, _) = post(&server, &continuing(first["id"].as_str().unwrap(), false)).await;
    assert_eq!(status, 200);
    let second = &server.requests()[1];
    assert_eq!(second.messages().len(), 1);
    assert_eq!(second.full_body["messages"].as_array().unwrap().len(), 3);
    assert_eq!(second.full_body["system"], "Be brief.");
    assert!(second.full_body.get("thread").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_test_may_lose_spend_or_busy_a_held_reply() {
    let server = Server::start([Step::text("first")]).await;
    let (_, first, _) = post(&server, &create(false)).await;
    let first = first["id"].as_str().unwrap().to_owned();
    for (state, code) in [
        (ThreadState::InFlight, "thread_continue_in_flight"),
        (ThreadState::Continued, "thread_already_continued"),
        (ThreadState::Lost, "thread_not_found"),
    ] {
        server.set_thread(&first, state);
        let (_, refused, _) = post(&server, &continuing(&first, false)).await;
        assert_eq!(refused["error"]["details"]["error_code"], code);
    }
    // A client is expected to recover from these: they are no broken rule.
    assert!(server.violations().is_empty());
}
