//! Long loops in the engine, against the local server, plain and streamed: a compaction pause is
//! continued (not a round) and joined to its continuation, its compaction_delta assembled, the
//! iterations billed; the token budget lowers max_tokens; identical calls are counted at dispatch.

mod support;

use anthropic_tool_calling::engine::run::main_loop::run_observed;
use anthropic_tool_calling::engine::{ApiClient, ErrorCode, RunEvent, RunOutput};
use serde_json::json;
use support::api::compaction_block;
use support::*;
use tokio_util::sync::CancellationToken;

/// Runs `steps` plain and streamed, returning each output, the step stop reasons told, and the
/// requests each server received.
async fn both_ways(
    steps: impl Fn() -> Vec<Step>,
    setup: impl Fn(&mut anthropic_tool_calling::engine::RunConfig),
) -> Vec<(RunOutput, Vec<String>, Vec<support::Recorded>)> {
    let mut out = Vec::new();
    for stream in [false, true] {
        let server = Server::start(steps()).await;
        let mut cfg = config(&server);
        cfg.stream = stream;
        setup(&mut cfg);
        let (order, _) = order_tool();
        let (seen, sink) = recorder();
        let output = run_observed(
            &ApiClient::new(),
            &cfg,
            &[order],
            prompt("Where is order 7?"),
            &CancellationToken::new(),
            Some(&sink),
        )
        .await
        .unwrap_or_else(|e| panic!("stream {stream}: {e:?}"));
        let steps = seen
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                RunEvent::StepFinish { stop_reason, .. } => Some(stop_reason.clone()),
                _ => None,
            })
            .collect();
        out.push((output, steps, server.requests()));
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_pause_is_continued_unchanged_joined_and_not_a_round() {
    let block = compaction_block(Some("Summary: order 7 was asked about."), "ZW5j");
    let runs = both_ways(
        || {
            vec![
                Step::compaction_pause(block.clone(), 4000, 250),
                Step::tool_uses(&[("toolu_1", "get_order_status", json!({ "orderId": "7" }))]),
                Step::text("Order 7 has shipped."),
            ]
        },
        |cfg| cfg.max_tool_iterations = 1,
    )
    .await;
    // The same history (as values: a streamed block's new members go last, as in the SDK).
    let history = |o: &RunOutput| o.messages.iter().map(value_of).collect::<Vec<_>>();
    assert_eq!(
        history(&runs[0].0),
        history(&runs[1].0),
        "the streamed compaction is assembled as the plain one"
    );
    for (output, steps, requests) in &runs {
        assert_eq!(output.text, "Order 7 has shipped.");
        assert_eq!(steps, &["compaction", "tool_use", "end_turn"]);
        // The continuation goes on from the history ending in the compaction reply, nothing
        // added: the API's thread holds it, so the request sends no message.
        assert_eq!(requests[1].messages(), &[] as &[serde_json::Value]);
        assert_eq!(requests[1].body["thread"]["type"], "continue");
        let second = requests[1].full_body["messages"].as_array().unwrap();
        assert_eq!(second.len(), 2);
        assert_eq!(
            second[1],
            json!({ "role": "assistant", "content": [block] })
        );
        // One assistant message for the turn: the compaction, then the reply that continued it.
        let turn = value_of(&output.messages[1]);
        assert_eq!(turn["content"][0], block);
        assert_eq!(turn["content"][2]["type"], "tool_use");
        // The compaction's iteration is billed: 4000 + 10 + 10 in, 250 + 5 + 5 out.
        assert_eq!(
            (output.usage.input_tokens, output.usage.output_tokens),
            (4020, 260)
        );
    }
}

fn value_of(m: &anthropic_tool_calling::engine::wire::protocol::RawMessage) -> serde_json::Value {
    serde_json::from_str(m.get()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_budget_lowers_max_tokens_and_ends_the_run_before_a_request_that_would_cross_it() {
    let server = Server::start([
        Step::tool_uses(&[("toolu_1", "get_order_status", json!({ "orderId": "7" }))]).usage(
            json!({ "input_tokens": 200, "output_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 }),
        ),
        Step::tool_uses(&[("toolu_2", "get_order_status", json!({ "orderId": "8" }))]).usage(
            json!({ "input_tokens": 260, "output_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 }),
        ),
    ])
    .await;
    let mut cfg = config(&server);
    cfg.max_total_tokens = Some(700);
    let (order, runs) = order_tool();
    let error = run_once(&cfg, &[order], prompt("7 and 8?"))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::BudgetExceeded);
    let requests = server.requests();
    // 700 at first; then 700 − 240 spent − 200 estimated; then 540 + 260 would leave nothing.
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body["max_tokens"], 700);
    assert_eq!(requests[1].body["max_tokens"], 260);
    assert_eq!(count(&runs), 2);
    assert_eq!(error.usage.map(|u| u.total()), Some(540));
    assert_eq!(error.tool_calls.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn identical_calls_are_counted_at_dispatch_across_parallel_calls() {
    let server = Server::start([
        Step::tool_uses(&[
            ("toolu_1", "get_order_status", json!({ "orderId": "7" })),
            ("toolu_2", "get_order_status", json!({ "orderId": "7" })),
            ("toolu_3", "get_order_status", json!({ "orderId": "8" })),
        ]),
        Step::text("Done."),
    ])
    .await;
    let mut cfg = config(&server);
    cfg.max_identical_calls = Some(1);
    let (order, runs) = order_tool();
    let out = run_once(&cfg, &[order], prompt("7, 7 and 8?"))
        .await
        .unwrap();
    assert_eq!(count(&runs), 2);
    let refused: Vec<&str> = out
        .tool_calls
        .iter()
        .filter(|c| c.is_error)
        .map(|c| c.tool_use_id.as_str())
        .collect();
    assert_eq!(refused, ["toolu_2"]);
    let results = server.requests()[1].messages().last().unwrap()["content"].clone();
    assert_eq!(results[1]["is_error"], true);
    assert!(results[1]["content"]
        .as_str()
        .unwrap()
        .contains("you have its result"));
}
