//! Tool failures: `onToolError: "stop"` ends the run with the failure; `"continue"` tells the
//! model with an `is_error` result whose text is checked exactly as the server received it.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anthropic_tool_calling::engine::{ErrorCode, OnToolError, Tool, ToolInvocation, ToolOutcome};
use serde_json::{json, Value};
use support::*;

/// Internal details a failing tool reports; they must reach the developer, never the model.
const SECRET: &str = "connection to db-primary.internal:5432 refused (password=hunter2)";

fn broken() -> (Tool, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let t = tool(&any_input("broken"), move |_call: ToolInvocation| {
        seen.fetch_add(1, Ordering::SeqCst);
        async { ToolOutcome::Failed(SECRET.to_owned()) }
    });
    (t, calls)
}

fn slow() -> Tool {
    tool(&any_input("slow"), |_call: ToolInvocation| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        ToolOutcome::Output {
            content: "too late".into(),
            json: false,
        }
    })
}

fn continue_mode(server: &Server) -> anthropic_tool_calling::engine::RunConfig {
    let mut cfg = config(server);
    cfg.on_tool_error = OnToolError::Continue;
    cfg
}

// ---- stop mode (the default) ----

#[tokio::test(flavor = "multi_thread")]
async fn stop_unknown_tool_is_a_validation_error_and_nothing_runs() {
    let server = Server::start([Step::tool_uses(&[
        ("toolu_1", "get_order_status", json!({ "orderId": "A1" })),
        ("toolu_2", "delete_everything", json!({})),
    ])])
    .await;
    let (order, calls) = order_tool();

    let err = run_once(&config(&server), &[order], prompt("Clean up"))
        .await
        .unwrap_err();

    assert_eq!(err.code, ErrorCode::ToolValidationError);
    assert_eq!(err.tool_name.as_deref(), Some("delete_everything"));
    assert_eq!(err.tool_use_id.as_deref(), Some("toolu_2"));
    assert!(
        err.message.contains("delete_everything") && err.message.contains("get_order_status"),
        "{}",
        err.message
    );
    assert_eq!(
        count(&calls),
        0,
        "no tool may run in a round that fails validation"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_invalid_input_names_the_field_and_the_tool_is_not_called() {
    for (input, expected) in [
        (
            json!({ "orderId": 4821 }),
            r#"orderId: 4821 is not of type "string""#,
        ),
        (json!({}), r#""orderId" is a required property"#),
    ] {
        let server =
            Server::start([Step::tool_uses(&[("toolu_1", "get_order_status", input)])]).await;
        let (order, calls) = order_tool();

        let err = run_once(&config(&server), &[order], prompt("Status?"))
            .await
            .unwrap_err();

        assert_eq!(err.code, ErrorCode::ToolValidationError);
        assert_eq!(err.tool_name.as_deref(), Some("get_order_status"));
        assert!(err.message.contains(expected), "{}", err.message);
        assert_eq!(count(&calls), 0);
        assert_eq!(err.tool_calls.len(), 1);
        assert!(err.tool_calls[0].is_error);
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_failed_tool_is_an_execution_error_and_nothing_more_is_sent() {
    let server = Server::start([Step::tool_uses(&[
        ("toolu_1", "get_order_status", json!({ "orderId": "A1" })),
        ("toolu_2", "broken", json!({})),
    ])])
    .await;
    let (order, order_calls) = order_tool();
    let (broken, broken_calls) = broken();

    let err = run_once(&config(&server), &[order, broken], prompt("Go"))
        .await
        .unwrap_err();

    assert_eq!(err.code, ErrorCode::ToolExecutionError);
    assert_eq!(err.tool_name.as_deref(), Some("broken"));
    assert_eq!(err.tool_use_id.as_deref(), Some("toolu_2"));
    assert!(
        err.message.contains(SECRET),
        "the developer gets the details: {}",
        err.message
    );
    assert_eq!((count(&order_calls), count(&broken_calls)), (1, 1));
    let ids: Vec<&str> = err
        .tool_calls
        .iter()
        .map(|c| c.tool_use_id.as_str())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"]);
    assert!(
        !err.tool_calls[0].is_error && err.tool_calls[1].is_error,
        "{:?}",
        err.tool_calls
    );
    assert_eq!(
        server.requests().len(),
        1,
        "nothing may be sent after a stop-mode failure"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_in_order_mode_does_not_run_the_calls_after_a_failure() {
    let server = Server::start([Step::tool_uses(&[
        ("toolu_1", "broken", json!({})),
        ("toolu_2", "get_order_status", json!({ "orderId": "A1" })),
    ])])
    .await;
    let (order, order_calls) = order_tool();
    let (broken, _) = broken();
    let mut cfg = config(&server);
    cfg.parallel_tool_calls = false;

    let err = run_once(&cfg, &[order, broken], prompt("Go"))
        .await
        .unwrap_err();

    assert_eq!(err.code, ErrorCode::ToolExecutionError);
    assert_eq!(err.tool_name.as_deref(), Some("broken"));
    assert_eq!(count(&order_calls), 0);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_tool_error_timeout_and_bad_json_output_are_execution_errors() {
    let bad_json = tool(&any_input("bad_json"), |_call: ToolInvocation| async {
        ToolOutcome::Output {
            content: "{not json".into(),
            json: true,
        }
    });
    let picky = tool(&any_input("picky"), |_call: ToolInvocation| async {
        ToolOutcome::ToolError("Order Z9 is unknown.".into())
    });
    for (name, expected) in [
        ("picky", "Order Z9 is unknown."),
        ("slow", "timed out after 50 ms"),
        ("bad_json", "not valid JSON"),
    ] {
        let server = Server::start([Step::tool_uses(&[("toolu_1", name, json!({}))])]).await;
        let mut cfg = config(&server);
        cfg.tool_timeout = Some(Duration::from_millis(50));
        let started = Instant::now();

        let err = run_once(
            &cfg,
            &[picky.clone(), slow(), bad_json.clone()],
            prompt("Go"),
        )
        .await
        .unwrap_err();

        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{name} took {:?}",
            started.elapsed()
        );
        assert_eq!(err.code, ErrorCode::ToolExecutionError, "{name}");
        assert_eq!(err.tool_name.as_deref(), Some(name));
        assert!(err.message.contains(expected), "{name}: {}", err.message);
        assert_eq!(server.requests().len(), 1);
    }
}

// ---- continue mode ----

#[tokio::test(flavor = "multi_thread")]
async fn continue_tells_the_model_about_every_kind_of_failure() {
    let server = Server::start([
        Step::tool_uses(&[
            ("toolu_1", "delete_everything", json!({})),
            ("toolu_2", "get_order_status", json!({ "orderId": 4821 })),
            ("toolu_3", "broken", json!({})),
            ("toolu_4", "picky", json!({ "orderId": "Z9" })),
            ("toolu_5", "slow", json!({})),
            ("toolu_6", "get_order_status", json!({ "orderId": "A1" })),
        ]),
        Step::text("A1 has shipped; I could not do the rest."),
    ])
    .await;
    let (order, order_calls) = order_tool();
    let (broken, broken_calls) = broken();
    let picky = tool(&any_input("picky"), |_call: ToolInvocation| async {
        ToolOutcome::ToolError(
            "Order Z9 is not in our system; ask the user for the order number.".into(),
        )
    });
    let mut cfg = continue_mode(&server);
    cfg.tool_timeout = Some(Duration::from_millis(50));

    let out = run_once(&cfg, &[order, broken, picky, slow()], prompt("Do it all"))
        .await
        .unwrap();

    assert_eq!(out.text, "A1 has shipped; I could not do the rest.");
    assert_eq!(
        (count(&order_calls), count(&broken_calls)),
        (1, 1),
        "the invalid call must not run"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let expected: Vec<Value> = [
        ("toolu_1", "The tool delete_everything does not exist. Available tools: get_order_status, broken, picky, slow.", true),
        (
            "toolu_2",
            r#"Invalid input for get_order_status: orderId: 4821 is not of type "string". Call get_order_status again with input that matches its input_schema."#,
            true,
        ),
        ("toolu_3", "Internal error while running broken. Try again later or tell the user.", true),
        ("toolu_4", "Order Z9 is not in our system; ask the user for the order number.", true),
        ("toolu_5", "The tool slow did not finish within 50 ms and was stopped. Try again later or tell the user.", true),
        ("toolu_6", r#"{"status":"shipped"}"#, false),
    ]
    .iter()
    .map(|(id, text, is_error)| {
        let mut block = json!({ "type": "tool_result", "tool_use_id": id, "content": text });
        if *is_error {
            block["is_error"] = json!(true);
        }
        block
    })
    .collect();
    assert_eq!(requests[1].last_blocks(), expected);
    for r in &requests {
        assert!(
            !r.raw_body.contains("hunter2") && !r.raw_body.contains("db-primary"),
            "internal details reached the model"
        );
    }

    let flags: Vec<bool> = out.tool_calls.iter().map(|c| c.is_error).collect();
    assert_eq!(flags, [true, true, true, true, true, false]);
    let errors: Vec<&str> = out
        .tool_calls
        .iter()
        .map(|c| c.error.as_deref().unwrap_or(""))
        .collect();
    assert!(errors[0].contains("delete_everything"), "{}", errors[0]);
    assert!(errors[1].contains("orderId"), "{}", errors[1]);
    assert!(
        errors[2].contains(SECRET),
        "the developer gets the details: {}",
        errors[2]
    );
    assert!(
        errors[3].contains("Order Z9 is not in our system"),
        "{}",
        errors[3]
    );
    assert!(errors[4].contains("50 ms"), "{}", errors[4]);
    for failed in &out.tool_calls[..5] {
        assert_eq!(failed.output.to_value(), Value::Null);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_does_not_run_a_call_again_after_max_tool_failures() {
    let server = Server::start([
        Step::tool_uses(&[(
            "toolu_1",
            "broken",
            json!({ "a": 1, "b": { "x": 1, "y": 2 } }),
        )]),
        Step::tool_uses(&[(
            "toolu_2",
            "broken",
            json!({ "b": { "y": 2, "x": 1 }, "a": 1 }),
        )]),
        Step::tool_uses(&[
            (
                "toolu_3",
                "broken",
                json!({ "a": 1, "b": { "y": 2, "x": 1 } }),
            ),
            ("toolu_4", "broken", json!({ "a": 2 })),
        ]),
        Step::text("Sorry, that could not be done."),
    ])
    .await;
    let (broken, calls) = broken();
    let cfg = continue_mode(&server);

    let out = run_once(&cfg, &[broken], prompt("Try")).await.unwrap();

    assert_eq!(out.text, "Sorry, that could not be done.");
    assert_eq!(
        count(&calls),
        3,
        "two failures of the same call, then only the different call"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        requests[3].last_blocks(),
        vec![
            json!({ "type": "tool_result", "tool_use_id": "toolu_3", "is_error": true, "content":
                "The tool broken has failed 2 times with this same input and was not run again. \
                 Do not repeat this call; tell the user that it could not be done." }),
            json!({ "type": "tool_result", "tool_use_id": "toolu_4", "is_error": true, "content":
                "Internal error while running broken. Try again later or tell the user." }),
        ]
    );
    assert!(out.tool_calls[2]
        .error
        .as_deref()
        .unwrap_or("")
        .contains("maxToolFailures"));
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_results_are_normal_results() {
    let server = Server::start([
        Step::tool_uses(&[
            ("toolu_1", "empty", json!({ "v": "" })),
            ("toolu_2", "empty", json!({ "v": "[]" })),
            ("toolu_3", "empty", json!({ "v": "null" })),
            ("toolu_4", "empty", json!({ "v": "{}" })),
        ]),
        Step::text("Nothing found."),
    ])
    .await;
    let empty = tool(&any_input("empty"), |call: ToolInvocation| async move {
        let input: Value = serde_json::from_str(call.input.get()).unwrap();
        match input["v"].as_str().unwrap() {
            "" => ToolOutcome::Output {
                content: String::new(),
                json: false,
            },
            json_text => ToolOutcome::Output {
                content: json_text.to_owned(),
                json: true,
            },
        }
    });

    let out = run_once(&continue_mode(&server), &[empty], prompt("Find"))
        .await
        .unwrap();

    assert_eq!(out.text, "Nothing found.");
    let blocks = server.requests()[1].last_blocks();
    let contents: Vec<&str> = blocks
        .iter()
        .map(|b| b["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["", "[]", "null", "{}"]);
    assert!(
        blocks.iter().all(|b| b.get("is_error").is_none()),
        "{blocks:?}"
    );
    let outputs: Vec<Value> = out.tool_calls.iter().map(|c| c.output.to_value()).collect();
    assert_eq!(outputs, [json!(""), json!([]), Value::Null, json!({})]);
    assert!(out
        .tool_calls
        .iter()
        .all(|c| !c.is_error && c.error.is_none()));
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_an_empty_tool_error_still_tells_the_model_something() {
    let server = Server::start([
        Step::tool_uses(&[("toolu_1", "mute", json!({}))]),
        Step::text("It failed."),
    ])
    .await;
    let mute = tool(&any_input("mute"), |_call: ToolInvocation| async {
        ToolOutcome::ToolError(String::new())
    });

    let out = run_once(&continue_mode(&server), &[mute], prompt("Go"))
        .await
        .unwrap();

    assert_eq!(out.text, "It failed.");
    let blocks = server.requests()[1].last_blocks();
    assert_eq!(blocks[0]["is_error"], true);
    assert_eq!(
        blocks[0]["content"],
        "Internal error while running mute. Try again later or tell the user."
    );
    assert!(out.tool_calls[0].is_error);
}

// ---- an executor's own check of the input (a Standard Schema's refinements in JS) ----

fn refusing() -> Tool {
    tool(&any_input("refine"), |_call: ToolInvocation| async {
        ToolOutcome::InvalidInput(vec!["orderId: Order number has a wrong check digit".into()])
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_executor_refusing_the_input_is_reported_like_a_schema_failure() {
    let server = Server::start([Step::tool_uses(&[(
        "toolu_1",
        "refine",
        json!({ "orderId": "1235" }),
    )])])
    .await;
    let err = run_once(&config(&server), &[refusing()], prompt("Return it"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::ToolValidationError);
    assert_eq!(err.tool_name.as_deref(), Some("refine"));
    assert!(
        err.message.contains(
            "does not match its input_schema: orderId: Order number has a wrong check digit"
        ),
        "{}",
        err.message
    );

    let server = Server::start([
        Step::tool_uses(&[("toolu_1", "refine", json!({ "orderId": "1235" }))]),
        Step::text("Please check the number."),
    ])
    .await;
    let out = run_once(&continue_mode(&server), &[refusing()], prompt("Return it"))
        .await
        .unwrap();
    assert_eq!(
        server.requests()[1].last_blocks(),
        vec![
            json!({ "type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content":
            "Invalid input for refine: orderId: Order number has a wrong check digit. Call refine again with input that matches its input_schema." })
        ]
    );
    assert!(out.tool_calls[0].is_error);
}
