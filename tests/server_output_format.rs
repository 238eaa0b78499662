//! Structured outputs in the test server: a request's format over HTTP, and the schema rules
//! beyond the shared table (`stand-in/rules.json`).

mod support;

use serde_json::{json, Value};
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
