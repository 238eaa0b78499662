//! The test server is only worth as much as its strictness: these prove it refuses what the
//! real API refuses, and that a refused request fails the test that sent it.

mod support;

use serde_json::{json, Value};
use support::rules::{check_body, check_pairing};
use support::*;

fn user(content: Value) -> Value {
    json!({ "role": "user", "content": content })
}

fn assistant(content: Value) -> Value {
    json!({ "role": "assistant", "content": content })
}

fn tool_use(id: &str) -> Value {
    json!({ "type": "tool_use", "id": id, "name": "t", "input": {} })
}

fn tool_result(id: &str) -> Value {
    json!({ "type": "tool_result", "tool_use_id": id, "content": "ok" })
}

fn text(t: &str) -> Value {
    json!({ "type": "text", "text": t })
}

#[test]
fn pairing_rules_accept_a_well_formed_conversation() {
    let messages = [
        user(json!("hi")),
        assistant(json!([
            text("checking"),
            tool_use("toolu_1"),
            tool_use("toolu_2")
        ])),
        user(json!([
            tool_result("toolu_2"),
            tool_result("toolu_1"),
            text("and also…")
        ])),
        assistant(json!([text("done")])),
        user(json!("thanks")),
    ];
    assert_eq!(check_pairing(&messages), Ok(()));
}

#[test]
fn pairing_rules_refuse_every_breach_with_the_api_message() {
    let cases = [
        (vec![user(json!("hi")), assistant(json!([tool_use("toolu_1")]))], "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."),
        (
            vec![user(json!("hi")), assistant(json!([tool_use("toolu_1")])), user(json!("no results"))],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        ),
        (
            vec![
                user(json!("hi")),
                assistant(json!([tool_use("toolu_1"), tool_use("toolu_2")])),
                user(json!([tool_result("toolu_1")])),
                user(json!([tool_result("toolu_2")])),
            ],
            "immediately after: toolu_2.",
        ),
        (
            vec![user(json!("hi")), assistant(json!([tool_use("toolu_1")])), user(json!([text("first"), tool_result("toolu_1")]))],
            "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message.",
        ),
        (
            vec![user(json!("hi")), assistant(json!([text("no tools")])), user(json!([tool_result("toolu_9")]))],
            "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9.",
        ),
        (
            vec![
                user(json!("hi")),
                assistant(json!([tool_use("toolu_1")])),
                user(json!([tool_result("toolu_1"), tool_result("toolu_1")])),
            ],
            "`tool_result` ids must be unique",
        ),
        (
            vec![
                user(json!("hi")),
                assistant(json!([tool_use("toolu_1")])),
                user(json!([tool_result("toolu_1")])),
                assistant(json!([tool_use("toolu_1")])),
                user(json!([tool_result("toolu_1")])),
            ],
            "`tool_use` ids must be unique",
        ),
    ];
    for (messages, expected) in cases {
        let why = check_pairing(&messages).expect_err(expected);
        assert!(why.contains(expected), "expected {expected:?}, got {why:?}");
    }
}

#[test]
fn body_rules_refuse_bad_fields_tools_and_blocks() {
    let good = json!({ "model": "m", "max_tokens": 10, "messages": [user(json!("hi"))],
        "tools": [{ "name": "get_order_status", "input_schema": { "type": "object" } }] });
    assert!(check_body(&good).is_empty(), "{:?}", check_body(&good));
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut body = good.clone();
        edit(&mut body);
        check_body(&body).join("; ")
    };
    assert!(broken(&|b| b["max_tokens"] = json!(0)).contains("max_tokens"));
    assert!(broken(&|b| b["max_tokens"] = json!(1.5)).contains("max_tokens"));
    assert!(broken(&|b| b["model"] = json!(null)).contains("model"));
    assert!(broken(&|b| b["messages"] = json!([])).contains("messages"));
    assert!(broken(&|b| b["tools"][0]["name"] = json!("bad name")).contains("tools.0.custom.name"));
    assert!(
        broken(&|b| b["tools"][0]["input_schema"]["type"] = json!("array"))
            .contains("input_schema.type")
    );
    assert!(
        broken(&|b| b["tools"] = json!([b["tools"][0].clone(), b["tools"][0].clone()]))
            .contains("unique")
    );
    assert!(
        broken(&|b| b["messages"] = json!([{ "role": "system", "content": "x" }])).contains("role")
    );
    assert!(
        broken(&|b| b["messages"] = json!([user(json!([tool_use("toolu_1")]))]))
            .contains("cannot hold")
    );
    let bad_flag = json!({ "type": "tool_result", "tool_use_id": "toolu_1", "content": "x", "is_error": "yes" });
    let breach = broken(&|b| {
        b["messages"] = json!([
            user(json!("hi")),
            assistant(json!([tool_use("toolu_1")])),
            user(json!([bad_flag.clone()]))
        ])
    });
    assert!(breach.contains("is_error"), "{breach}");
    let empty_error =
        json!({ "type": "tool_result", "tool_use_id": "toolu_1", "content": "", "is_error": true });
    let breach = broken(&|b| {
        b["messages"] = json!([
            user(json!("hi")),
            assistant(json!([tool_use("toolu_1")])),
            user(json!([empty_error.clone()]))
        ])
    });
    assert!(
        breach.contains("content cannot be empty if `is_error` is true"),
        "{breach}"
    );
}

/// A client that breaks the rules gets the API's 400, and the test that let it happen fails.
#[tokio::test(flavor = "multi_thread")]
#[should_panic(expected = "the engine broke the API's rules")]
async fn a_breach_is_answered_400_and_fails_the_test() {
    let server = Server::start([Step::text("never sent")]).await;
    let body = json!({ "model": "m", "max_tokens": 10,
        "messages": [user(json!("hi")), assistant(json!([tool_use("toolu_1")])), user(json!("forgot the result"))] });
    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages", server.base_url()))
        .header("x-api-key", API_KEY)
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let error: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap_or_default();
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("without `tool_result` blocks"),
        "{error}"
    );
    assert_eq!(server.violations().len(), 1);
}
