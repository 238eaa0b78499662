//! Structured outputs in the test server: a request's format over HTTP; a scripted final answer
//! that misses it is answered 500 and remembered (a test bug must not pass quietly), one built
//! `.ignoring_format()` is sent as it is, and what is not a final answer is never checked. The
//! schema rules themselves are in the shared table (`stand-in/rules.json`); a few more here.

mod support;

use serde_json::{json, Value};
use support::conform::{schema_mismatch, FORMAT_MISMATCH};
use support::rules::{check_body, check_body_with_betas, TASK_BUDGETS_BETA};
use support::*;

fn order() -> Value {
    json!({
        "type": "object",
        "properties": {
            "orderId": { "type": "string" },
            "status": { "enum": ["shipped", "pending"] },
            "eta": { "type": "string", "format": "date" },
        },
        "required": ["orderId", "status"],
        "additionalProperties": false,
    })
}

fn asking(schema: Value, stream: bool) -> Value {
    json!({
        "model": "claude-test", "max_tokens": 256, "stream": stream,
        "messages": [{ "role": "user", "content": "where is #4821?" }],
        "output_config": { "format": { "type": "json_schema", "schema": schema } },
    })
}

async fn send(server: &Server, body: &Value) -> (u16, Value, String) {
    let response = messages_request(&reqwest::Client::new(), &server.base_url())
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let error = serde_json::from_str::<Value>(&text).unwrap_or_default()["error"].clone();
    (status, error, text)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_schema_in_the_subset_reaches_the_script_and_one_outside_it_is_refused() {
    let server = Server::start([Step::text(r#"{"orderId":"4821","status":"shipped"}"#)]).await;
    let (status, _, text) = send(&server, &asking(order(), false)).await;
    assert_eq!(status, 200, "{text}");
    let mut open = order();
    open["additionalProperties"] = json!(true);
    let (status, error, _) = send(&server, &asking(open, false)).await;
    assert_eq!(status, 400);
    assert_eq!(
        error["message"],
        "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false"
    );
    assert_eq!(server.take_violations().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_final_answer_that_misses_the_format_is_a_500_and_a_broken_rule() {
    let wrong = r#"{"orderId":"4821","status":"lost"}"#;
    let server = Server::start([
        Step::text(wrong),
        Step::text(wrong),
        Step::text("Order #4821 has shipped."),
        Step::text(r#"{"orderId":"4821","status":"shipped","eta":"2026-05-02"}"#),
    ])
    .await;
    let why = r#"at /status: "lost" is not one of "shipped" or "pending""#;
    for stream in [false, true] {
        let (status, error, _) = send(&server, &asking(order(), stream)).await;
        assert_eq!(status, 500);
        assert_eq!(error["type"], "api_error");
        assert_eq!(error["message"], format!("{FORMAT_MISMATCH}{why}"));
    }
    let (status, error, _) = send(&server, &asking(order(), false)).await;
    assert_eq!(status, 500);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{FORMAT_MISMATCH}the text is not JSON (")),
        "{message}"
    );
    let (status, _, text) = send(&server, &asking(order(), true)).await;
    assert_eq!(status, 200, "{text}");
    let violations = server.take_violations();
    assert_eq!(violations.len(), 3, "{violations:?}");
    assert!(violations[0].starts_with(&format!("request 1: {FORMAT_MISMATCH}")));
}

#[tokio::test(flavor = "multi_thread")]
async fn ignoring_format_sends_a_broken_answer_and_other_replies_are_never_checked() {
    let server = Server::start([
        Step::text("Sorry, prose.").ignoring_format(),
        Step::text("Sorry, prose.").ignoring_format(),
        Step::reply(
            json!([{ "type": "text", "text": "I can't help." }]),
            "refusal",
        ),
        Step::reply(
            json!([{ "type": "text", "text": "{\"orderId\": \"48" }]),
            "max_tokens",
        ),
        Step::tool_uses(&[("toolu_1", "get_order_status", json!({ "orderId": "4821" }))]),
        Step::text("plain prose"),
    ])
    .await;
    for stream in [false, true] {
        let (status, _, text) = send(&server, &asking(order(), stream)).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("Sor"));
    }
    for _ in 0..3 {
        assert_eq!(send(&server, &asking(order(), false)).await.0, 200);
    }
    let plain =
        json!({ "model": "m", "max_tokens": 9, "messages": [{ "role": "user", "content": "hi" }] });
    assert_eq!(send(&server, &plain).await.0, 200);
    assert!(server.violations().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deprecated_output_format_is_held_to_its_schema_too() {
    let server = Server::start([
        Step::text(r#"{"orderId":"4821"}"#),
        Step::text(r#"{"orderId":"4821","status":"pending"}"#),
    ])
    .await;
    let mut body = asking(order(), false);
    body.as_object_mut().unwrap().remove("output_config");
    body["output_format"] = json!({ "type": "json_schema", "schema": order() });
    let (status, error, _) = send(&server, &body).await;
    assert_eq!(status, 500);
    assert_eq!(
        error["message"],
        format!(r#"{FORMAT_MISMATCH}at /: "status" is a required property"#)
    );
    assert_eq!(send(&server, &body).await.0, 200);
    assert_eq!(server.take_violations().len(), 1);
}

#[test]
fn schema_mismatch_words_its_reasons_as_the_js_stand_in() {
    let schema = order();
    let cases = [
        (json!({ "orderId": "1", "status": "shipped" }), None),
        (
            json!({ "orderId": 1, "status": "shipped" }),
            Some(r#"at /orderId: 1 is not of type "string""#),
        ),
        (
            json!({ "orderId": "1", "status": "shipped", "x": 1 }),
            Some("at /: Additional properties are not allowed ('x' was unexpected)"),
        ),
        (
            json!({ "orderId": "1", "status": "shipped", "eta": "2026-13-01" }),
            Some(r#"at /eta: "2026-13-01" is not a "date""#),
        ),
    ];
    for (value, want) in cases {
        assert_eq!(schema_mismatch(&schema, &value).as_deref(), want, "{value}");
    }
    let nullable = json!({ "anyOf": [{ "type": "string" }, { "type": "null" }] });
    assert_eq!(
        schema_mismatch(&nullable, &json!(3)).as_deref(),
        Some("at /: 3 is not valid under any of the schemas listed in the 'anyOf' keyword")
    );
}

#[test]
fn a_few_schema_rules_beyond_the_table() {
    let at = "output_config.format.schema";
    let problem = |schema: Value| check_body(&asking(schema, false)).join("; ");
    assert_eq!(problem(order()), "");
    assert_eq!(
        problem(json!({ "type": "string", "pattern": "([a-z" })),
        format!("{at}: 'pattern' is not a valid regular expression")
    );
    assert_eq!(
        problem(json!({ "type": "string", "pattern": "(?<=a)b" })),
        format!("{at}: For 'string' type, 'pattern' with lookahead or lookbehind is not supported")
    );
    assert_eq!(
        problem(json!({ "type": "array", "items": { "type": "string" }, "minItems": 1 })),
        ""
    );
    assert_eq!(
        problem(json!({ "anyOf": [] })),
        format!("{at}: 'anyOf' must be a non-empty list of schemas")
    );
    let budget = json!({ "model": "m", "max_tokens": 9, "messages": [{ "role": "user", "content": "hi" }],
        "output_config": { "task_budget": { "type": "tokens", "total": 9 } } });
    assert_eq!(
        check_body_with_betas(&budget, &[TASK_BUDGETS_BETA.to_owned()]),
        Vec::<String>::new()
    );
    assert_eq!(check_body(&budget).len(), 1);
}
