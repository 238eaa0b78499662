//! The test server's long-loop replies: a scripted compaction block, `usage.iterations` and a
//! top-level `context_management` are sent as given, and streamed the way the API streams them
//! (one `compaction_delta` with the final summary; iterations and `context_management` with
//! message_delta); the beta features' requests are checked with the request's `anthropic-beta`.

mod support;

use serde_json::{json, Value};
use support::rules::{compaction_block, tool_change, COMPACT_BETA, TOOL_CHANGES_BETA};
use support::*;

fn request(messages: Value, stream: bool) -> Value {
    json!({ "model": "claude-test", "max_tokens": 256, "stream": stream, "messages": messages, "tools": [serde_json::from_str::<Value>(ORDER_TOOL).unwrap()] })
}

async fn post(server: &Server, body: &Value, beta: &str) -> reqwest::Response {
    messages_request(&reqwest::Client::new(), &server.base_url())
        .header("anthropic-beta", beta)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

/// The JSON body of an answer.
async fn json_of(response: reqwest::Response) -> Value {
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

fn iterations() -> Value {
    json!([
        { "type": "compaction", "input_tokens": 60385, "output_tokens": 522, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0 },
        { "type": "message", "input_tokens": 612, "output_tokens": 9, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0 },
    ])
}

fn compacted_reply() -> Step {
    let block = compaction_block(Some("Summary: the user asked about order 4821."), "ZW5j");
    Step::reply(json!([block, { "type": "text", "text": "It shipped." }]), "end_turn")
        .usage(json!({ "input_tokens": 612, "output_tokens": 9, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 }))
        .iterations(iterations())
        .context_management(json!({ "applied_edits": [] }))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_reply_is_sent_as_given_and_streamed_as_the_api_streams_it() {
    // One reply twice (the same id), so the streamed one reassembles to the plain one.
    let reply = compacted_reply();
    let server = Server::start([reply.clone(), reply]).await;
    let messages = json!([{ "role": "user", "content": "Where is order 4821?" }]);
    let plain = json_of(post(&server, &request(messages.clone(), false), COMPACT_BETA).await).await;
    assert_eq!(plain["content"][0]["type"], "compaction");
    assert_eq!(plain["usage"]["iterations"], iterations());
    assert_eq!(plain["context_management"], json!({ "applied_edits": [] }));

    let body = post(&server, &request(messages, true), COMPACT_BETA)
        .await
        .text()
        .await
        .unwrap();
    let events = server::sse::parse(&body);
    let start = &events[0].1["message"];
    assert_eq!(
        start["usage"]["input_tokens"], 60385,
        "the first iteration's"
    );
    assert!(
        start["usage"].get("iterations").is_none() && start.get("context_management").is_none()
    );
    let block_start = events
        .iter()
        .find(|(n, _)| n == "content_block_start")
        .unwrap();
    assert_eq!(
        block_start.1["content_block"],
        json!({ "type": "compaction", "content": null })
    );
    let compaction_deltas: Vec<&Value> = events
        .iter()
        .filter(|(_, d)| d["index"] == 0 && d["delta"]["type"] == "compaction_delta")
        .map(|(_, d)| &d["delta"])
        .collect();
    assert_eq!(
        compaction_deltas,
        [
            &json!({ "type": "compaction_delta", "content": "Summary: the user asked about order 4821.", "encrypted_content": "ZW5j" })
        ]
    );
    let (_, last) = events.iter().find(|(n, _)| n == "message_delta").unwrap();
    assert_eq!(last["usage"]["iterations"], iterations());
    assert_eq!(last["usage"]["input_tokens"], 612);
    assert_eq!(last["context_management"], json!({ "applied_edits": [] }));
    assert_eq!(server::sse::reassemble(&events), Ok(plain));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_compaction_is_sent_back_last_to_continue() {
    let block = compaction_block(Some("Summary so far."), "ZW5j");
    let server = Server::start([
        Step::compaction_pause(block.clone(), 151_000, 4),
        Step::text("Continued."),
    ])
    .await;
    let first = json!([{ "role": "user", "content": "go" }]);
    let paused = json_of(post(&server, &request(first.clone(), false), COMPACT_BETA).await).await;
    assert_eq!(paused["stop_reason"], "compaction");
    assert_eq!(paused["content"], json!([block]));
    assert_eq!(paused["usage"]["iterations"][0]["input_tokens"], 151_000);
    let mut history = first.as_array().unwrap().clone();
    history.push(json!({ "role": "assistant", "content": paused["content"] }));
    let answer = post(
        &server,
        &request(Value::Array(history), false),
        COMPACT_BETA,
    )
    .await;
    assert_eq!(answer.status(), 200, "the continuation is a valid request");
}

#[tokio::test(flavor = "multi_thread")]
async fn system_messages_need_the_tool_changes_beta_of_the_request() {
    let server = Server::start([Step::text("ok")]).await;
    let messages = json!([
        { "role": "user", "content": "hi" },
        { "role": "assistant", "content": [{ "type": "text", "text": "hello" }] },
        { "role": "system", "content": [tool_change("tool_removal", "get_order_status")] },
        { "role": "user", "content": "go on" },
    ]);
    let refused = post(&server, &request(messages.clone(), false), COMPACT_BETA).await;
    assert_eq!(refused.status(), 400);
    let error = json_of(refused).await;
    assert_eq!(
        error["error"]["message"],
        "messages.2.role: Input should be 'user' or 'assistant'"
    );
    server.take_violations();
    let beta = format!("{COMPACT_BETA}, {TOOL_CHANGES_BETA}");
    assert_eq!(
        post(&server, &request(messages, false), &beta)
            .await
            .status(),
        200
    );
}
