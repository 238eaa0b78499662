//! The answer's schema in the engine, against the local server, plain and streamed: every request
//! carries the format in the form the API takes, the final answer is checked against the full
//! schema (what the API was only told in words included), a cut answer is `output_truncated`, a
//! refusal has no output.

mod support;

use anthropic_tool_calling::engine::output::answer_format::{Json, OutputFormat};
use anthropic_tool_calling::engine::run::main_loop::run_observed;
use anthropic_tool_calling::engine::{ApiClient, ErrorCode, RunConfig, RunError, RunOutput, Tool};
use serde_json::json;
use serde_json::value::RawValue;
use support::*;
use tokio_util::sync::CancellationToken;

const SCHEMA: &str = r#"{"type":"object","properties":{"status":{"type":"string","enum":["shipped","lost"]},"note":{"type":"string","maxLength":12}},"required":["status","note"]}"#;

/// Runs the engine with an observer (a streamed run tells its deltas to one).
async fn run_with(cfg: &RunConfig, tools: &[Tool]) -> Result<RunOutput, RunError> {
    let (_, sink) = recorder();
    let cancel = CancellationToken::new();
    run_observed(
        &ApiClient::new(),
        cfg,
        tools,
        prompt("Order 7?"),
        &cancel,
        Some(&sink),
    )
    .await
}

/// The run failed with `output_validation_error`, its message beginning with `start`.
fn invalid_answer(error: &RunError, start: &str) {
    assert_eq!(error.code, ErrorCode::OutputValidationError);
    assert!(error.message.starts_with(start), "{}", error.message);
}

fn with_output(server: &Server, stream: bool) -> RunConfig {
    let mut cfg = config(server);
    cfg.stream = stream;
    let schema: Json = serde_json::from_str(SCHEMA).unwrap();
    cfg.set_output(OutputFormat::new(&schema).unwrap());
    cfg
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_round_then_the_checked_answer_with_the_format_on_every_request() {
    for stream in [false, true] {
        let server = Server::start(vec![
            Step::tool_uses(&[("toolu_1", "get_order_status", json!({ "orderId": "7" }))]),
            Step::text(r#"{"status":"shipped","note":"on its way"}"#),
        ])
        .await;
        let (order, calls) = order_tool();
        let output = run_with(&with_output(&server, stream), &[order])
            .await
            .unwrap();
        assert_eq!(count(&calls), 1);
        assert_eq!(
            output.output.as_deref().map(RawValue::get),
            Some(r#"{"status":"shipped","note":"on its way"}"#)
        );
        // An enum needs no type beside it (as the official SDK writes it).
        let format = json!({"type":"json_schema","schema":{"type":"object","properties":{
            "status":{"enum":["shipped","lost"]},
            "note":{"type":"string","description":"{maxLength: 12}"}},
            "additionalProperties":false,"required":["status","note"]}});
        for request in server.requests() {
            assert_eq!(
                request.body["output_config"],
                json!({ "format": format }),
                "stream {stream}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_the_api_was_only_told_in_words_is_checked_here() {
    for stream in [false, true] {
        let answer = r#"{"status":"lost","note":"far too long a note"}"#;
        let server = Server::start(vec![Step::text(answer)]).await;
        let error = run_with(&with_output(&server, stream), &[])
            .await
            .unwrap_err();
        invalid_answer(
            &error,
            "The model's answer does not match output:\nnote: \"far too long a note\" is longer than 12 characters\n",
        );
        assert_eq!(error.text.as_deref(), Some(answer));
        assert_eq!(
            error.cause,
            Some(
                json!([{ "message": "\"far too long a note\" is longer than 12 characters", "path": ["note"] }])
            )
        );
        assert_eq!(error.usage.map(|u| u.output_tokens), Some(5));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_answer_is_output_truncated_and_a_refusal_has_no_output() {
    for stream in [false, true] {
        let server = Server::start(vec![
            Step::reply(
                json!([{ "type": "text", "text": "{\"status\":\"sh" }]),
                "max_tokens",
            ),
            Step::reply(
                json!([{ "type": "text", "text": "I can't help with that." }]),
                "refusal",
            ),
        ])
        .await;
        let cfg = with_output(&server, stream);
        let cut = run_with(&cfg, &[]).await.unwrap_err();
        assert_eq!(cut.code, ErrorCode::OutputTruncated, "{}", cut.message);
        assert_eq!(cut.code, ErrorCode::OutputTruncated);
        assert!(
            cut.message.contains("raise maxTokens (now 4096)"),
            "{}",
            cut.message
        );
        let refused = run_with(&cfg, &[]).await.unwrap();
        assert_eq!(refused.stop_reason, "refusal");
        assert!(refused.output.is_none());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_is_not_json_keeps_the_answer_and_the_calls_made() {
    for stream in [false, true] {
        let server = Server::start(vec![
            Step::tool_uses(&[("toolu_1", "get_order_status", json!({ "orderId": "7" }))]),
            Step::text("Order 7 has shipped.").ignoring_format(),
        ])
        .await;
        let (order, _) = order_tool();
        let error = run_with(&with_output(&server, stream), &[order])
            .await
            .unwrap_err();
        invalid_answer(
            &error,
            "The model's answer is not JSON (expected value at line 1 column 1)",
        );
        assert_eq!(error.text.as_deref(), Some("Order 7 has shipped."));
        assert_eq!(error.tool_calls.len(), 1);
    }
}
