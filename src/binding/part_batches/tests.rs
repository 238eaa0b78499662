use std::sync::{Arc, Mutex};

use super::*;

#[test]
fn an_output_no_js_tool_holds_is_sent_as_it_is() {
    let call = ToolCall {
        tool_name: "mcp_t".into(),
        input: RawValue::from_string("{}".into()).unwrap(),
        output: ToolOutput::Json(r#"[{"type":"text","text":"a"}]"#.into()),
        is_error: false,
        error: None,
        duration_ms: 1.0,
        tool_use_id: "toolu_2".into(),
        interrupted: false,
        output_held: false,
    };
    let json = batch_json(
        vec![
            RunEvent::ToolResult {
                call: call.clone(),
                model_text: Some("told".into()),
                outcome: CallOutcome::Ok,
                at: std::time::Instant::now(),
            },
            RunEvent::StepFinish {
                step: 0,
                stop_reason: "tool_use".into(),
                usage: Usage::default(),
                tool_calls: vec![call],
            },
        ],
        None,
    );
    let parts: serde_json::Value = serde_json::from_str(&json).unwrap();
    let value = serde_json::json!([{ "type": "text", "text": "a" }]);
    assert_eq!(parts[0]["output"], value);
    assert_eq!(parts[1]["toolCalls"][0]["output"], value);
}

#[test]
fn joins_adjacent_deltas_and_blanks_successful_outputs() {
    let call = |ok: bool| ToolCall {
        tool_name: "t".into(),
        input: RawValue::from_string(r#"{"b":1,"a":2}"#.into()).unwrap(),
        output: if ok {
            ToolOutput::Text("big".into())
        } else {
            ToolOutput::None
        },
        is_error: !ok,
        error: (!ok).then(|| "dev words".to_owned()),
        duration_ms: 1.5,
        tool_use_id: "toolu_1".into(),
        interrupted: false,
        output_held: ok,
    };
    let json = batch_json(
        vec![
            RunEvent::StepStart {
                step: 0,
                run_id: None,
            },
            RunEvent::TextDelta("Hel".into()),
            RunEvent::TextDelta("lo".into()),
            RunEvent::ToolInputStart {
                id: "toolu_1".into(),
                name: "t".into(),
            },
            RunEvent::ToolInputDelta {
                id: "toolu_1".into(),
                delta: "{\"b\":".into(),
            },
            RunEvent::ToolInputDelta {
                id: "toolu_1".into(),
                delta: "1}".into(),
            },
            RunEvent::ToolResult {
                call: call(false),
                model_text: Some("for the model".into()),
                outcome: CallOutcome::Why(Why::Threw),
                at: std::time::Instant::now(),
            },
            RunEvent::StepFinish {
                step: 0,
                stop_reason: "tool_use".into(),
                usage: Usage::default(),
                tool_calls: vec![call(true)],
            },
        ],
        None,
    );
    assert_eq!(
        json,
        concat!(
            r#"[{"type":"start-step","step":0},{"type":"text-delta","text":"Hello"},"#,
            r#"{"type":"tool-input-start","toolUseId":"toolu_1","toolName":"t"},"#,
            r#"{"type":"tool-input-delta","toolUseId":"toolu_1","delta":"{\"b\":1}"},"#,
            r#"{"type":"tool-result","toolUseId":"toolu_1","toolName":"t","output":"for the model","isError":true,"error":"dev words","durationMs":1.5},"#,
            r#"{"type":"finish-step","step":0,"stopReason":"tool_use","usage":{"inputTokens":0,"outputTokens":0,"cacheReadInputTokens":0,"cacheCreationInputTokens":0},"toolCalls":[{"toolName":"t","input":{"b":1,"a":2},"output":null,"durationMs":1.5,"toolUseId":"toolu_1"}]}]"#
        )
    );
}

#[tokio::test(start_paused = true)]
async fn batches_what_comes_within_the_window_and_says_last() {
    let (tx, rx) = mpsc::unbounded_channel();
    let calls: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let seen = calls.clone();
    let forwarder = tokio::spawn(forward(rx, None, move |json, last| {
        seen.lock().unwrap().push((json, last))
    }));
    tx.send(RunEvent::StepStart {
        step: 0,
        run_id: None,
    })
    .unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    tx.send(RunEvent::TextDelta("a".into())).unwrap();
    tokio::time::sleep(Duration::from_millis(1)).await;
    for t in ["b", "c", "d"] {
        tx.send(RunEvent::TextDelta(t.into())).unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(BATCH_WINDOW * 2).await;
    drop(tx);
    forwarder.await.unwrap();
    let calls = calls.lock().unwrap().clone();
    assert_eq!(
            calls,
            [
                (
                    r#"[{"type":"start-step","step":0},{"type":"text-delta","text":"a"}]"#.to_owned(),
                    false
                ),
                (r#"[{"type":"text-delta","text":"bcd"}]"#.to_owned(), false),
                ("[]".to_owned(), true),
            ],
            "the step's start waits for its first text, which goes at once; the next three share one call"
        );
}
