//! The loop end to end: requests, tool rounds, results and history, against the local server.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anthropic_tool_calling::engine::run::config::DEFAULT_MAX_TOKENS;
use anthropic_tool_calling::engine::{
    run, ApiClient, ErrorCode, ToolChoice, ToolInvocation, ToolOutcome,
};
use serde_json::json;
use serde_json::value::RawValue;
use support::*;
use tokio::sync::Barrier;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread")]
async fn seed_conversation_runs_one_tool_round_and_answers() {
    let final_content = json!([{ "type": "text", "text": "Order A1 has shipped." }]);
    let server = Server::start([
        Step::tool_uses(&[("toolu_01", "get_order_status", json!({ "orderId": "A1" }))]).usage(json!({
            "input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 7, "cache_read_input_tokens": 5,
            "service_tier": "standard",
        })),
        Step::reply(final_content.clone(), "end_turn").usage(json!({
            "input_tokens": 150, "output_tokens": 30, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 0,
        })),
    ])
    .await;
    let inputs = Arc::new(Mutex::new(Vec::new()));
    let seen = inputs.clone();
    let order = tool(ORDER_TOOL, move |call: ToolInvocation| {
        seen.lock()
            .unwrap()
            .push((call.tool_use_id.clone(), call.input.get().to_owned()));
        async move { json_output(json!({ "status": "shipped" })) }
    });

    let out = run_once(
        &config(&server),
        &[order],
        prompt("What is the status of order A1?"),
    )
    .await
    .unwrap();

    assert_eq!(out.text, "Order A1 has shipped.");
    assert_eq!(out.stop_reason, "end_turn");
    assert_eq!(
        *inputs.lock().unwrap(),
        vec![("toolu_01".to_owned(), r#"{"orderId":"A1"}"#.to_owned())]
    );
    assert_eq!(out.tool_calls.len(), 1);
    let call = &out.tool_calls[0];
    assert_eq!(call.tool_name, "get_order_status");
    assert_eq!(call.tool_use_id, "toolu_01");
    assert_eq!(value(&call.input), json!({ "orderId": "A1" }));
    assert_eq!(call.output.to_value(), json!({ "status": "shipped" }));
    assert!(!call.is_error && call.error.is_none());
    assert_eq!(
        (
            out.usage.input_tokens,
            out.usage.output_tokens,
            out.usage.cache_read_input_tokens,
            out.usage.cache_creation_input_tokens
        ),
        (250, 50, 5, 10)
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(
            r.headers.get("x-api-key").map(String::as_str),
            Some(API_KEY)
        );
        // The version the official SDKs send since their 1.0.
        assert_eq!(
            r.headers.get("anthropic-version").map(String::as_str),
            Some("2026-10-21")
        );
        assert_eq!(
            r.headers.get("content-type").map(String::as_str),
            Some("application/json")
        );
        assert!(!r.headers.contains_key("authorization"));
        assert_eq!(r.retry_count, Some(0));
        assert_eq!(r.body["model"], "claude-sonnet-5-5");
        assert_eq!(r.body["max_tokens"], DEFAULT_MAX_TOKENS);
        // The API's thread holds the tools the first request sent: the model reads them in both.
        assert_eq!(
            r.full_body["tools"],
            json!([serde_json::from_str::<serde_json::Value>(ORDER_TOOL).unwrap()])
        );
        for absent in ["system", "temperature", "tool_choice", "stream"] {
            assert!(r.body.get(absent).is_none(), "{absent} was sent");
        }
    }
    // The definition goes out byte for byte as given, with the request that starts the thread.
    assert!(
        requests[0]
            .raw_body
            .contains(&format!("\"tools\":[{ORDER_TOOL}]")),
        "{}",
        requests[0].raw_body
    );
    assert_eq!(requests[0].body["thread"], json!({ "type": "create" }));
    assert!(requests[1].body.get("tools").is_none());
    assert_eq!(requests[1].body["thread"]["type"], "continue");
    assert_eq!(
        requests[0].messages(),
        &[json!({ "role": "user", "content": "What is the status of order A1?" })]
    );
    let expected_history = vec![
        json!({ "role": "user", "content": "What is the status of order A1?" }),
        json!({ "role": "assistant", "content": [
            { "type": "text", "text": "Let me check." },
            { "type": "tool_use", "id": "toolu_01", "name": "get_order_status", "input": { "orderId": "A1" } },
        ]}),
        json!({ "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "toolu_01", "content": r#"{"status":"shipped"}"# },
        ]}),
    ];
    assert_eq!(
        requests[1].messages(),
        &expected_history[2..],
        "only the new turn"
    );
    assert_eq!(
        requests[1].full_body["messages"].as_array().unwrap(),
        &expected_history
    );

    let history: Vec<serde_json::Value> = out
        .messages
        .iter()
        .map(|m| serde_json::from_str(m.get()).unwrap())
        .collect();
    assert_eq!(history.len(), 4);
    assert_eq!(history[..3], expected_history[..]);
    assert_eq!(
        history[3],
        json!({ "role": "assistant", "content": final_content })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_history_can_be_sent_again_to_continue_the_chat() {
    let server = Server::start([
        Step::tool_uses(&[("toolu_01", "get_order_status", json!({ "orderId": "A1" }))]),
        Step::text("Order A1 has shipped."),
        Step::text("You're welcome."),
    ])
    .await;
    let (order, _) = order_tool();
    let cfg = config(&server);
    let first = run_once(&cfg, std::slice::from_ref(&order), prompt("Status of A1?"))
        .await
        .unwrap();
    let mut messages = first.messages;
    messages.push(anthropic_tool_calling::engine::wire::protocol::user_text(
        "Thanks!",
    ));
    let second = run_once(&cfg, &[order], messages).await.unwrap();
    assert_eq!(second.text, "You're welcome.");
    assert!(second.tool_calls.is_empty());
    let last = &server.requests()[2];
    assert_eq!(last.messages().len(), 5);
    assert_eq!(
        last.messages()[4],
        json!({ "role": "user", "content": "Thanks!" })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn options_are_sent_as_given() {
    let server = Server::start([Step::text("Hi.")]).await;
    let (order, _) = order_tool();
    let mut cfg = config(&server);
    cfg.model = "claude-haiku-test".into();
    cfg.max_tokens = 321;
    cfg.system =
        Some(RawValue::from_string(r#"[{"type":"text","text":"Be brief."}]"#.into()).unwrap());
    cfg.temperature = Some(0.25);
    cfg.tool_choice = Some(ToolChoice::new(
        RawValue::from_string(r#"{"type":"auto","disable_parallel_tool_use":true}"#.into())
            .unwrap(),
    ));
    cfg.api.api_key = None;
    cfg.api.auth_token = Some("oauth-token-test".into());
    server.accept_credential("oauth-token-test");
    cfg.api.api_version = "2023-06-01".into();
    let out = run_once(&cfg, &[order], prompt("Hello")).await.unwrap();
    assert_eq!(out.text, "Hi.");
    let r = &server.requests()[0];
    assert_eq!(r.body["model"], "claude-haiku-test");
    assert_eq!(r.body["max_tokens"], 321);
    assert_eq!(
        r.body["system"],
        json!([{ "type": "text", "text": "Be brief." }])
    );
    assert_eq!(r.body["temperature"], 0.25);
    assert_eq!(
        r.body["tool_choice"],
        json!({ "type": "auto", "disable_parallel_tool_use": true })
    );
    assert_eq!(
        r.headers.get("authorization").map(String::as_str),
        Some("Bearer oauth-token-test")
    );
    assert!(!r.headers.contains_key("x-api-key"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_without_tools_sends_no_tools_field() {
    let server = Server::start([Step::text("Hello!")]).await;
    let out = run_once(&config(&server), &[], prompt("Hi")).await.unwrap();
    assert_eq!(out.text, "Hello!");
    assert!(server.requests()[0].body.get("tools").is_none());
}

/// Two tools that each wait for the other at a barrier: they only finish if they run at once.
#[tokio::test(flavor = "multi_thread")]
async fn parallel_tool_calls_run_concurrently_and_answer_in_tool_use_order() {
    let server = Server::start([
        Step::tool_uses(&[
            ("toolu_a", "slow_a", json!({ "n": 1 })),
            ("toolu_b", "fast_b", json!({ "n": 2 })),
        ]),
        Step::text("Both done."),
    ])
    .await;
    let barrier = Arc::new(Barrier::new(2));
    let meet = |name: &'static str, linger: u64| {
        let barrier = barrier.clone();
        tool(&any_input(name), move |_call: ToolInvocation| {
            let barrier = barrier.clone();
            async move {
                if tokio::time::timeout(Duration::from_secs(3), barrier.wait())
                    .await
                    .is_err()
                {
                    return ToolOutcome::Failed(format!(
                        "{name} never met the other tool: the calls did not run concurrently"
                    ));
                }
                // The first tool finishes last; its result must still come first.
                tokio::time::sleep(Duration::from_millis(linger)).await;
                ToolOutcome::Output {
                    content: format!("{name} done"),
                    json: false,
                }
            }
        })
    };
    let tools = [meet("slow_a", 40), meet("fast_b", 0)];

    let out = run_once(&config(&server), &tools, prompt("Do both"))
        .await
        .unwrap();

    assert_eq!(out.text, "Both done.");
    let names: Vec<&str> = out
        .tool_calls
        .iter()
        .map(|c| c.tool_name.as_str())
        .collect();
    assert_eq!(names, ["slow_a", "fast_b"]);
    // Each call's duration is its own: slow_a lingered 40 ms after the two met.
    assert!(
        out.tool_calls[0].duration_ms >= 40.0,
        "{}",
        out.tool_calls[0].duration_ms
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].full_body["messages"].as_array().unwrap().len(),
        3,
        "all results in one user message"
    );
    assert_eq!(requests[1].messages().len(), 1, "only the new turn");
    assert_eq!(
        requests[1].last_blocks(),
        vec![
            json!({ "type": "tool_result", "tool_use_id": "toolu_a", "content": "slow_a done" }),
            json!({ "type": "tool_result", "tool_use_id": "toolu_b", "content": "fast_b done" }),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn parallel_tool_calls_false_runs_them_one_by_one_in_order() {
    let server = Server::start([
        Step::tool_uses(&[
            ("toolu_a", "first", json!({})),
            ("toolu_b", "second", json!({})),
            ("toolu_c", "first", json!({ "again": true })),
        ]),
        Step::text("Done."),
    ])
    .await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let logged = |name: &'static str, pause: u64| {
        let events = events.clone();
        tool(&any_input(name), move |call: ToolInvocation| {
            let events = events.clone();
            async move {
                events
                    .lock()
                    .unwrap()
                    .push(format!("start {}", call.tool_use_id));
                tokio::time::sleep(Duration::from_millis(pause)).await;
                events
                    .lock()
                    .unwrap()
                    .push(format!("end {}", call.tool_use_id));
                ToolOutcome::Output {
                    content: call.tool_use_id.clone(),
                    json: false,
                }
            }
        })
    };
    let mut cfg = config(&server);
    cfg.parallel_tool_calls = false;

    let out = run_once(
        &cfg,
        &[logged("first", 30), logged("second", 0)],
        prompt("Go"),
    )
    .await
    .unwrap();

    assert_eq!(
        *events.lock().unwrap(),
        [
            "start toolu_a",
            "end toolu_a",
            "start toolu_b",
            "end toolu_b",
            "start toolu_c",
            "end toolu_c"
        ]
    );
    let ids: Vec<&str> = out
        .tool_calls
        .iter()
        .map(|c| c.tool_use_id.as_str())
        .collect();
    assert_eq!(ids, ["toolu_a", "toolu_b", "toolu_c"]);
    let results: Vec<String> = server.requests()[1]
        .last_blocks()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(results, ["toolu_a", "toolu_b", "toolu_c"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn several_rounds_accumulate_tool_calls_and_usage() {
    let server = Server::start([
        Step::tool_uses(&[("toolu_1", "get_order_status", json!({ "orderId": "A1" }))]),
        Step::tool_uses(&[("toolu_2", "get_order_status", json!({ "orderId": "B2" }))]),
        Step::text("A1 and B2 have shipped."),
    ])
    .await;
    let (order, calls) = order_tool();
    let out = run_once(&config(&server), &[order], prompt("A1 and B2?"))
        .await
        .unwrap();
    assert_eq!(count(&calls), 2);
    let ids: Vec<&str> = out
        .tool_calls
        .iter()
        .map(|c| c.tool_use_id.as_str())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2"]);
    assert_eq!((out.usage.input_tokens, out.usage.output_tokens), (30, 15));
    assert_eq!(out.messages.len(), 6);
    let last = &server.requests()[2];
    assert_eq!(last.full_body["messages"].as_array().unwrap().len(), 5);
    assert_eq!(last.messages().len(), 1, "only the new turn");
}

#[tokio::test(flavor = "multi_thread")]
async fn max_tool_iterations_exceeded_does_not_run_the_extra_round() {
    let server = Server::start([
        Step::tool_uses(&[("toolu_1", "get_order_status", json!({ "orderId": "A1" }))]),
        Step::tool_uses(&[("toolu_2", "get_order_status", json!({ "orderId": "A2" }))]),
    ])
    .await;
    let (order, calls) = order_tool();
    let mut cfg = config(&server);
    cfg.max_tool_iterations = 1;

    let err = run_once(&cfg, &[order], prompt("Loop")).await.unwrap_err();

    assert_eq!(err.code, ErrorCode::MaxIterationsExceeded);
    assert!(
        err.message.contains("get_order_status") && err.message.contains("maxToolIterations"),
        "{}",
        err.message
    );
    assert_eq!(count(&calls), 1, "the extra round's tool ran");
    assert_eq!(err.tool_calls.len(), 1);
    assert_eq!(err.tool_calls[0].tool_use_id, "toolu_1");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn zero_tool_iterations_runs_no_tool() {
    let server = Server::start([Step::tool_uses(&[(
        "toolu_1",
        "get_order_status",
        json!({ "orderId": "A1" }),
    )])])
    .await;
    let (order, calls) = order_tool();
    let mut cfg = config(&server);
    cfg.max_tool_iterations = 0;
    let err = run_once(&cfg, &[order], prompt("Loop")).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::MaxIterationsExceeded);
    assert_eq!(count(&calls), 0);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_while_a_tool_runs_drops_the_tool_and_ends_at_once() {
    struct Dropped(Arc<Mutex<bool>>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = true;
        }
    }
    let server = Server::start([Step::tool_uses(&[("toolu_1", "stuck", json!({}))])]).await;
    let dropped = Arc::new(Mutex::new(false));
    let flag = dropped.clone();
    let stuck = tool(&any_input("stuck"), move |_call: ToolInvocation| {
        let guard = Dropped(flag.clone());
        async move {
            let _guard = guard;
            std::future::pending::<ToolOutcome>().await
        }
    });
    let cancel = CancellationToken::new();
    let client = ApiClient::new();
    let cfg = config(&server);
    let tools = [stuck];
    let canceller = async {
        server.wait_for_requests(1).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
        std::time::Instant::now()
    };
    let (result, cancelled_at) =
        tokio::join!(run(&client, &cfg, &tools, prompt("Go"), &cancel), canceller);
    assert!(cancelled_at.elapsed() < Duration::from_millis(500));
    let err = result.unwrap_err();
    assert_eq!(err.code, ErrorCode::Aborted);
    assert!(
        *dropped.lock().unwrap(),
        "the running tool's future was not dropped"
    );
}
