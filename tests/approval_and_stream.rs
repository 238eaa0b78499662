//! The loop with approvals (pause, resume, decisions checked before anything runs) and with
//! streamed replies (events in order; the same result as without streaming), against the local
//! stand-in with Rust tools.

mod support;

use anthropic_tool_calling::engine::run::main_loop::run_observed;
use anthropic_tool_calling::engine::wire::protocol::RawMessage;
use anthropic_tool_calling::engine::{ApiClient, ErrorCode, RunEvent};
use serde_json::json;
use support::*;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread")]
async fn a_call_needing_approval_pauses_the_run_and_resumes_with_the_decision() {
    let server = Server::start([
        Step::tool_uses(&[
            ("toolu_look", "get_order_status", json!({ "orderId": "1" })),
            (
                "toolu_refund",
                "refund",
                json!({ "orderId": "1", "amount": 5 }),
            ),
        ]),
        Step::text("Refunded."),
    ])
    .await;
    let (order, order_calls) = order_tool();
    let (refund, refund_calls) = refund_needing_approval();
    let tools = [order, refund];
    let mut cfg = config(&server);
    cfg.signer = Some(signer());

    let paused = run_once(&cfg, &tools, prompt("Refund order 1"))
        .await
        .unwrap();
    assert_eq!(paused.stop_reason, "approval_required");
    assert_eq!(paused.pending_approvals.len(), 1);
    let pending = &paused.pending_approvals[0];
    assert_eq!(
        (pending.tool_use_id.as_str(), pending.tool_name.as_str()),
        ("toolu_refund", "refund")
    );
    assert_eq!((count(&order_calls), count(&refund_calls)), (1, 0));
    assert_eq!(
        server.requests().len(),
        1,
        "nothing goes to the model at the pause"
    );
    // The history: the tool_use turn, then the result of the call that ran.
    let last: serde_json::Value =
        serde_json::from_str(paused.messages.last().unwrap().get()).unwrap();
    assert_eq!(last["content"].as_array().unwrap().len(), 1);
    assert_eq!(last["content"][0]["tool_use_id"], "toolu_look");

    // A forged decision (the input changed in the posted history) runs nothing and sends nothing.
    let forged: Vec<_> = paused
        .messages
        .iter()
        .map(|m| {
            let edited = m.get().replace(r#""amount":5"#, r#""amount":500"#);
            RawMessage::from(serde_json::value::RawValue::from_string(edited).unwrap())
        })
        .collect();
    cfg.approvals = vec![decision(pending, true, None)];
    let err = run_once(&cfg, &tools, forged).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert!(err.message.contains("approvals[0]"), "{}", err.message);
    assert_eq!((count(&order_calls), count(&refund_calls)), (1, 0));
    assert_eq!(server.requests().len(), 1);

    let done = run_once(&cfg, &tools, paused.messages.clone())
        .await
        .unwrap();
    assert_eq!(done.text, "Refunded.");
    assert_eq!(
        (count(&order_calls), count(&refund_calls)),
        (1, 1),
        "each call ran once"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let ids: Vec<String> = requests[1]
        .last_blocks()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids,
        ["toolu_look", "toolu_refund"],
        "results in tool_use order"
    );
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denial_is_an_answer_even_in_stop_mode() {
    let server = Server::start([
        Step::tool_uses(&[("toolu_r", "refund", json!({ "amount": 5 }))]),
        Step::text("OK, no refund."),
    ])
    .await;
    let (refund, refund_calls) = refund_needing_approval();
    let tools = [refund];
    let mut cfg = config(&server);
    cfg.signer = Some(signer());
    let paused = run_once(&cfg, &tools, prompt("Refund")).await.unwrap();
    cfg.approvals = vec![decision(
        &paused.pending_approvals[0],
        false,
        Some("not this one"),
    )];
    let done = run_once(&cfg, &tools, paused.messages).await.unwrap();
    assert_eq!(done.text, "OK, no refund.");
    assert_eq!(count(&refund_calls), 0);
    let result = &server.requests()[1].last_blocks()[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(
        result["content"],
        "The user declined this call: not this one. Do not retry it."
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_secret_a_tool_needing_approval_is_refused_before_anything_is_sent() {
    let server = Server::start([Step::text("unused")]).await;
    let (refund, _) = refund_needing_approval();
    let tools = [refund];
    let err = run_once(&config(&server), &tools, prompt("x"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert!(
        err.message.contains("ANTHROPIC_TOOL_CALLING_SECRET")
            && err.message.contains("approvalSecret")
    );
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_run_tells_its_events_in_order_and_ends_as_the_plain_one() {
    let steps = || {
        [
            Step::tool_uses(&[(
                "toolu_s",
                "get_order_status",
                json!({ "orderId": "7", "z": 1 }),
            )]),
            Step::text("Order 7 has shipped, it should arrive soon."),
        ]
    };
    let plain_server = Server::start(steps()).await;
    let (order, _) = order_tool();
    let plain = run_once(
        &config(&plain_server),
        std::slice::from_ref(&order),
        prompt("7?"),
    )
    .await
    .unwrap();

    let server = Server::start(steps()).await;
    let mut cfg = config(&server);
    cfg.stream = true;
    let (seen, sink) = recorder();
    let streamed = run_observed(
        &ApiClient::new(),
        &cfg,
        &[order],
        prompt("7?"),
        &CancellationToken::new(),
        Some(&sink),
    )
    .await
    .unwrap();
    assert_eq!(streamed.text, plain.text);
    let bytes = |m: &[RawMessage]| m.iter().map(|r| r.get().to_owned()).collect::<Vec<_>>();
    assert_eq!(
        bytes(&streamed.messages),
        bytes(&plain.messages),
        "the same history byte for byte"
    );
    assert!(server.requests().iter().all(|r| r.body["stream"] == true));

    let events = seen.lock().unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            RunEvent::StepStart { .. } => "start",
            RunEvent::TextDelta(_) => "text",
            RunEvent::ReasoningDelta(_) => "reasoning",
            RunEvent::ToolInputStart { .. } => "input-start",
            RunEvent::ToolInputDelta { .. } => "input",
            RunEvent::ToolCall { .. } => "call",
            RunEvent::ToolStart { .. } => "tool-start",
            RunEvent::ToolResult { .. } => "result",
            RunEvent::StepFinish { .. } => "finish",
            RunEvent::Request(_) => "request",
        })
        .collect();
    let mut squeezed: Vec<&str> = kinds.clone();
    squeezed.dedup();
    assert_eq!(
        squeezed,
        [
            "start",
            "text",
            "input-start",
            "input",
            "call",
            "tool-start",
            "result",
            "finish",
            "start",
            "text",
            "finish"
        ],
        "{kinds:?}"
    );
    // The second step's text deltas add up to the answer.
    let second = events
        .iter()
        .position(|e| matches!(e, RunEvent::StepStart { step: 1, .. }))
        .unwrap();
    let text: String = events[second..]
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, streamed.text);
    assert!(
        kinds.iter().filter(|k| **k == "text").count() > 1,
        "the text came in deltas"
    );
}
