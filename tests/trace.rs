//! A traced run (`RunConfig::trace`) tells each request as it ends — timed where it happened,
//! with the reply's id, model and usage, or how it failed — and each settled call with what it
//! came to; an untraced run tells no request. Against the local stand-in, plain and streamed.

mod support;

use std::time::Duration;

use anthropic_tool_calling::engine::run::main_loop::run_observed;
use anthropic_tool_calling::engine::trace::events::CallOutcome;
use anthropic_tool_calling::engine::trace::events::Why;
use anthropic_tool_calling::engine::trace::request::{RequestTrace, Telemetry};
use anthropic_tool_calling::engine::{ApiClient, RunEvent};
use serde_json::json;
use support::*;
use tokio_util::sync::CancellationToken;

fn requests(events: &[RunEvent]) -> Vec<RequestTrace> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Request(t) => Some((**t).clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_request_is_told_as_it_ends_and_each_call_with_its_outcome() {
    for stream in [false, true] {
        let server = Server::start([
            Step::tool_uses(&[
                ("toolu_1", "get_order_status", json!({ "orderId": "1" })),
                ("toolu_2", "no_such_tool", json!({})),
            ])
            .usage(json!({ "input_tokens": 50, "output_tokens": 9, "cache_read_input_tokens": 4 })),
            Step::text("Shipped."),
        ])
        .await;
        let (order, _) = order_tool();
        let mut cfg = config(&server);
        cfg.stream = stream;
        cfg.model = "claude-traced".into();
        cfg.on_tool_error = anthropic_tool_calling::engine::OnToolError::Continue;
        cfg.trace = Some(Telemetry {
            record_content: true,
        });
        let (seen, sink) = recorder();
        let done = run_observed(
            &ApiClient::new(),
            &cfg,
            &[order],
            prompt("1?"),
            &CancellationToken::new(),
            Some(&sink),
        )
        .await
        .unwrap();
        assert_eq!(done.text, "Shipped.");
        let events = seen.lock().unwrap();
        let traced = requests(&events);
        assert_eq!(traced.len(), 2, "stream: {stream}");
        let first = &traced[0];
        assert_eq!((first.step, first.model.as_str()), (0, "claude-traced"));
        assert_eq!(first.max_tokens, cfg.max_tokens);
        let port = server
            .base_url()
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(first.server, Some(("127.0.0.1".to_owned(), port)));
        let answered = first.outcome.as_ref().unwrap();
        assert_eq!(
            answered.id,
            server.requests()[0].reply_id,
            "the reply's own id"
        );
        assert!(answered.id.is_some());
        assert_eq!(answered.model.as_deref(), Some("claude-sonnet-5-5"));
        assert_eq!(answered.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(answered.usage.cache_read_input_tokens, Some(4));
        assert!(first.ended > first.started);
        let content = first.content.as_ref().unwrap();
        assert!(content.input.contains("\"1?\""));
        assert!(content.output.as_deref().unwrap().contains("tool_call"));

        // In order: request 1 is told before the calls settle, and they before request 2 starts.
        let outcomes: Vec<(CallOutcome, std::time::Instant)> = events
            .iter()
            .filter_map(|e| match e {
                RunEvent::ToolResult { outcome, at, .. } => Some((*outcome, *at)),
                _ => None,
            })
            .collect();
        let mut kinds: Vec<CallOutcome> = outcomes.iter().map(|(o, _)| *o).collect();
        kinds.sort_by_key(|o| o.label());
        assert_eq!(kinds, [CallOutcome::Ok, CallOutcome::Why(Why::UnknownTool)]);
        assert!(outcomes
            .iter()
            .all(|(_, at)| *at >= first.ended && *at <= traced[1].started));
        assert!(!CallOutcome::Ok.failed() && CallOutcome::Why(Why::UnknownTool).failed());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_request_is_told_once_with_its_code_and_status_and_an_untraced_run_tells_none() {
    let server = Server::start([Step::error(500, "boom"), Step::error(500, "boom again")]).await;
    let mut cfg = config(&server);
    cfg.api.max_retries = 1;
    cfg.trace = Some(Telemetry::default());
    let (seen, sink) = recorder();
    let failed = run_observed(
        &ApiClient::new(),
        &cfg,
        &[],
        prompt("hi"),
        &CancellationToken::new(),
        Some(&sink),
    )
    .await
    .unwrap_err();
    let traced = requests(&seen.lock().unwrap());
    assert_eq!(traced.len(), 1, "one record for the request and its retry");
    let why = traced[0].outcome.as_ref().unwrap_err();
    assert_eq!((why.code, why.status), (failed.code.as_str(), Some(500)));
    assert!(traced[0].content.is_none(), "no content unless asked");

    let server = Server::start([Step::text("hi")]).await;
    let (seen, sink) = recorder();
    run_observed(
        &ApiClient::new(),
        &config(&server),
        &[],
        prompt("hi"),
        &CancellationToken::new(),
        Some(&sink),
    )
    .await
    .unwrap();
    assert!(requests(&seen.lock().unwrap()).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_cut_off_by_an_abort_is_told_as_aborted() {
    let server = Server::start([
        Step::text("a long answer, slowly").stream_delay(Duration::from_millis(200))
    ])
    .await;
    let mut cfg = config(&server);
    cfg.stream = true;
    cfg.trace = Some(Telemetry::default());
    let (seen, sink) = recorder();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        stop.cancel();
    });
    let error = run_observed(
        &ApiClient::new(),
        &cfg,
        &[],
        prompt("hi"),
        &cancel,
        Some(&sink),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code.as_str(), "aborted");
    let traced = requests(&seen.lock().unwrap());
    assert_eq!(traced.len(), 1);
    assert_eq!(traced[0].outcome.as_ref().unwrap_err().code, "aborted");
}
