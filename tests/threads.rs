//! Sending only the new turn (the API's Threads): the first request of a run starts a thread with
//! the whole history, each later one sends only what came after the previous reply, without
//! `system` and `tools`; every way the API refuses a thread is recovered from, streamed or not,
//! and the history the run returns is the same as without Threads.

mod support;

use anthropic_tool_calling::engine::run::main_loop::run_observed;
use anthropic_tool_calling::engine::{ApiClient, RunConfig, RunError, RunOutput, Tool};
use serde_json::{json, Value};
use support::api;
use support::api::THREADS_BETA;
use support::step::ThreadState;
use support::Recorded;
use support::*;
use tokio_util::sync::CancellationToken;

/// Runs `tools` on `messages` against a server scripted with `steps`, streamed or not, with
/// `cfg` changed by `setup`.
async fn run_on(
    steps: Vec<Step>,
    stream: bool,
    tools: &[Tool],
    messages: Vec<protocol_message::Raw>,
    setup: impl Fn(&mut RunConfig, &Server),
) -> (Server, Result<RunOutput, RunError>) {
    let server = Server::start(steps).await;
    let mut cfg = config(&server);
    cfg.stream = stream;
    cfg.system = Some(serde_json::value::RawValue::from_string(r#""Be brief.""#.into()).unwrap());
    setup(&mut cfg, &server);
    let (_, sink) = recorder();
    let result = run_observed(
        &ApiClient::new(),
        &cfg,
        tools,
        messages,
        &CancellationToken::new(),
        Some(&sink),
    )
    .await;
    (server, result)
}

mod protocol_message {
    pub type Raw = anthropic_tool_calling::engine::wire::protocol::RawMessage;
}

/// Two tool rounds, then the answer.
fn two_rounds() -> Vec<Step> {
    vec![
        Step::tool_uses(&[("toolu_a", "get_order_status", json!({ "orderId": "1" }))]),
        Step::tool_uses(&[("toolu_b", "get_order_status", json!({ "orderId": "2" }))]),
        Step::text("Both shipped."),
    ]
}

fn thread_of(r: &Recorded) -> &Value {
    &r.body["thread"]
}

fn has_threads_beta(r: &Recorded) -> bool {
    r.betas.iter().any(|b| b == THREADS_BETA)
}

/// The run's history as text, to hold two runs' `data.messages` to each other byte for byte.
fn history(out: &RunOutput) -> Vec<String> {
    out.messages.iter().map(|m| m.get().to_owned()).collect()
}

/// The same run without Threads: its history is the one every threaded run must return.
async fn unthreaded_history(steps: Vec<Step>, stream: bool) -> Vec<String> {
    let (order, _) = order_tool();
    let (_, out) = run_on(steps, stream, &[order], prompt("1 and 2?"), |cfg, _| {
        cfg.api_threads = false
    })
    .await;
    history(&out.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_request_starts_a_thread_and_each_later_one_sends_only_the_new_turn() {
    for stream in [false, true] {
        let steps = two_rounds();
        let ids: Vec<String> = steps.iter().map(Step::id).collect();
        let (order, calls) = order_tool();
        let (server, out) = run_on(
            steps.clone(),
            stream,
            &[order],
            prompt("1 and 2?"),
            |_, _| {},
        )
        .await;
        let out = out.unwrap();
        assert_eq!((out.text.as_str(), count(&calls)), ("Both shipped.", 2));
        let r = server.requests();
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(has_threads_beta), "stream: {stream}");
        assert_eq!(thread_of(&r[0]), &json!({ "type": "create" }));
        assert_eq!(r[0].body["system"], "Be brief.");
        assert_eq!(r[0].body["tools"][0]["name"], "get_order_status");
        assert_eq!(r[0].messages().len(), 1);
        for (i, previous) in [(1, &ids[0]), (2, &ids[1])] {
            assert_eq!(
                thread_of(&r[i]),
                &json!({ "type": "continue", "previous_message_id": previous }),
                "stream: {stream}"
            );
            assert!(r[i].body.get("system").is_none() && r[i].body.get("tools").is_none());
            assert_eq!(r[i].messages().len(), 1, "only the results");
            assert_eq!(r[i].last_blocks()[0]["type"], "tool_result");
            assert_eq!(r[i].body["stream"].as_bool().unwrap_or(false), stream);
        }
        assert_eq!(r[2].full_body["messages"].as_array().unwrap().len(), 5);
        assert_eq!(history(&out), unthreaded_history(steps, stream).await);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn api_threads_off_sends_the_whole_history_every_request_without_the_beta() {
    let (order, _) = order_tool();
    let (server, out) = run_on(
        two_rounds(),
        false,
        &[order],
        prompt("1 and 2?"),
        |cfg, _| cfg.api_threads = false,
    )
    .await;
    out.unwrap();
    let r = server.requests();
    for (i, request) in r.iter().enumerate() {
        assert!(request.body.get("thread").is_none());
        assert!(!has_threads_beta(request));
        assert_eq!(request.body["system"], "Be brief.");
        assert_eq!(request.messages().len(), 1 + 2 * i);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_turn_and_a_compaction_pause_continue_with_no_message() {
    for stream in [false, true] {
        let search = json!({ "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": { "query": "q" } });
        let result =
            json!({ "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [] });
        let steps = vec![
            Step::reply(json!([search]), "pause_turn"),
            Step::reply(
                json!([result, { "type": "text", "text": "Found it." }]),
                "end_turn",
            ),
        ];
        let (server, out) = run_on(steps, stream, &[], prompt("search"), |cfg, _| {
            cfg.server_tools = vec![serde_json::value::RawValue::from_string(
                r#"{"type":"web_search_20250305","name":"web_search"}"#.into(),
            )
            .unwrap()];
        })
        .await;
        let out = out.unwrap();
        let r = server.requests();
        assert_eq!(r[1].messages(), &[] as &[Value], "stream: {stream}");
        assert_eq!(thread_of(&r[1])["type"], "continue");
        assert_eq!(
            out.messages.len(),
            2,
            "the paused turn and its continuation are one message"
        );
        assert_eq!(
            server
                .held_conversation(r[1].reply_id.as_deref().unwrap())
                .unwrap()["messages"],
            json!(out
                .messages
                .iter()
                .map(|m| serde_json::from_str::<Value>(m.get()).unwrap())
                .collect::<Vec<_>>()),
            "the API holds what the run returns"
        );

        // A compaction pause: the same, and it is no tool round.
        let block = api::compaction_block(Some("Summary."), "ZW5j");
        let steps = vec![
            Step::compaction_pause(block, 1000, 10),
            Step::text("Answered."),
        ];
        let (server, out) = run_on(steps, stream, &[], prompt("go"), |cfg, _| {
            cfg.max_tool_iterations = 0;
            cfg.fields.push((
                "context_management",
                serde_json::value::RawValue::from_string(
                    r#"{"edits":[{"type":"compact_20260112","pause_after_compaction":true}]}"#
                        .into(),
                )
                .unwrap(),
            ));
            cfg.api.headers.push((
                reqwest::header::HeaderName::from_static("anthropic-beta"),
                reqwest::header::HeaderValue::from_static(api::COMPACT_BETA),
            ));
        })
        .await;
        let out = out.unwrap();
        let r = server.requests();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].messages(), &[] as &[Value]);
        assert_eq!(
            thread_of(&r[1])["previous_message_id"],
            r[0].reply_id.as_deref().unwrap()
        );
        assert!(r[1].betas.iter().any(|b| b == api::COMPACT_BETA) && has_threads_beta(&r[1]));
        assert_eq!(out.messages.len(), 2);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replayed_step_is_one_traced_request() {
    use anthropic_tool_calling::engine::trace::request::Telemetry;
    use anthropic_tool_calling::engine::RunEvent;
    let mut steps = two_rounds();
    steps[0] = steps[0].clone().thread_state(ThreadState::Lost);
    let server = Server::start(steps).await;
    let mut cfg = config(&server);
    cfg.trace = Some(Telemetry {
        record_content: false,
    });
    let (seen, sink) = recorder();
    let (order, _) = order_tool();
    run_observed(
        &ApiClient::new(),
        &cfg,
        &[order],
        prompt("1 and 2?"),
        &CancellationToken::new(),
        Some(&sink),
    )
    .await
    .unwrap();
    assert_eq!(server.requests().len(), 4, "one refused continue, replayed");
    let events = seen.lock().unwrap();
    let traced: Vec<Option<Option<String>>> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Request(t) => Some(t.outcome.as_ref().ok().map(|o| o.id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(traced.len(), 3, "a span per step, its replay inside it");
    assert_eq!(traced[1], Some(server.requests()[2].reply_id.clone()));
    let starts = events
        .iter()
        .filter(|e| matches!(e, RunEvent::StepStart { .. }))
        .count();
    assert_eq!(starts, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_spent_or_busy_thread_is_replayed_whole_once_and_the_run_goes_on() {
    for stream in [false, true] {
        for (state, code) in [
            (ThreadState::Lost, "thread_not_found"),
            (ThreadState::Continued, "thread_already_continued"),
            (ThreadState::InFlight, "thread_continue_in_flight"),
        ] {
            let mut steps = two_rounds();
            steps[0] = steps[0].clone().thread_state(state);
            let ids: Vec<String> = steps.iter().map(Step::id).collect();
            let (order, calls) = order_tool();
            let (server, out) = run_on(
                steps.clone(),
                stream,
                &[order],
                prompt("1 and 2?"),
                |_, _| {},
            )
            .await;
            let out = out.unwrap_or_else(|e| panic!("{code}: {e}"));
            assert_eq!(count(&calls), 2, "no tool runs twice");
            let r = server.requests();
            assert_eq!(r.len(), 4, "{code}: the refused continue, then its replay");
            assert_eq!(thread_of(&r[1])["previous_message_id"], ids[0].as_str());
            assert_eq!(thread_of(&r[2]), &json!({ "type": "create" }), "{code}");
            assert_eq!(r[2].messages().len(), 3, "the whole history");
            assert_eq!(r[2].body["system"], "Be brief.");
            assert!(r[2].body["tools"].is_array());
            assert_eq!(
                thread_of(&r[3]),
                &json!({ "type": "continue", "previous_message_id": ids[1] }),
                "the replay's reply is continued"
            );
            assert_eq!(
                history(&out),
                unthreaded_history(two_rounds(), stream).await
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_lost_again_right_after_its_replay_is_given_up() {
    let mut steps = two_rounds();
    steps[0] = steps[0].clone().thread_state(ThreadState::Lost);
    steps[1] = steps[1].clone().thread_state(ThreadState::Lost);
    let (order, _) = order_tool();
    let (server, out) = run_on(steps, false, &[order], prompt("1 and 2?"), |_, _| {}).await;
    out.unwrap();
    let r = server.requests();
    let threads: Vec<&Value> = r.iter().map(|r| &r.body["thread"]["type"]).collect();
    assert_eq!(
        threads,
        [
            &json!("create"),
            &json!("continue"),
            &json!("create"),
            &json!("continue"),
            &Value::Null
        ]
    );
    assert_eq!(r[4].messages().len(), 5);
    assert!(!has_threads_beta(&r[4]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_the_api_cannot_thread_goes_on_whole_without_a_thread() {
    for stream in [false, true] {
        let (order, _) = order_tool();
        let (server, out) = run_on(
            two_rounds(),
            stream,
            &[order],
            prompt("1 and 2?"),
            |_, server| {
                server.refuse_in_threads(&["hipaa"]);
            },
        )
        .await;
        let out = out.unwrap();
        let r = server.requests();
        assert_eq!(r.len(), 4);
        assert_eq!(thread_of(&r[0])["type"], "create");
        for (i, request) in r.iter().enumerate().skip(1) {
            assert!(request.body.get("thread").is_none() && !has_threads_beta(request));
            assert_eq!(request.messages().len(), 1 + 2 * (i - 1));
            assert_eq!(request.body["system"], "Be brief.");
        }
        assert_eq!(
            history(&out),
            unthreaded_history(two_rounds(), stream).await
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_once_its_reply_began_is_retried_in_a_new_thread() {
    let mut steps = two_rounds();
    // message_start and a ping, then the connection is cut: nothing was shown, so it is retried.
    // (A pause before the ping, so the client has read message_start when the cut comes.)
    steps.insert(
        1,
        steps[1]
            .clone()
            .sse_cut_after(2)
            .stream_delay(std::time::Duration::from_millis(50)),
    );
    let (order, calls) = order_tool();
    let (server, out) = run_on(steps, true, &[order], prompt("1 and 2?"), |_, _| {}).await;
    out.unwrap();
    assert_eq!(count(&calls), 2);
    let r = server.requests();
    let sent: Vec<(&Value, usize, Option<u32>)> = r
        .iter()
        .map(|r| (&r.body["thread"]["type"], r.messages().len(), r.retry_count))
        .collect();
    assert_eq!(
        sent,
        [
            (&json!("create"), 1, Some(0)),
            (&json!("continue"), 1, Some(0)),
            (&json!("create"), 3, Some(1)),
            (&json!("continue"), 1, Some(0)),
        ]
    );
    assert_eq!(
        thread_of(&r[3])["previous_message_id"],
        r[2].reply_id.as_deref().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retried_request_keeps_its_thread() {
    let mut steps = two_rounds();
    steps.insert(1, Step::error(529, "Overloaded"));
    let (order, _) = order_tool();
    let (server, out) = run_on(steps, false, &[order], prompt("1 and 2?"), |_, _| {}).await;
    out.unwrap();
    let r = server.requests();
    assert_eq!(r.len(), 4);
    assert_eq!(r[1].retry_count, Some(0));
    assert_eq!(r[2].retry_count, Some(1));
    assert_eq!(
        r[1].raw_body, r[2].raw_body,
        "the same continue, byte for byte"
    );
    assert_eq!(thread_of(&r[2])["type"], "continue");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replay_leaves_out_the_cache_markers_of_answered_messages_only() {
    let marked = |text: &str| {
        serde_json::value::RawValue::from_string(
            json!({ "role": "user", "content": [{ "type": "text", "text": text, "cache_control": { "type": "ephemeral" } }] }).to_string(),
        )
        .unwrap()
        .into()
    };
    let mut steps = two_rounds();
    steps[0] = steps[0].clone().thread_state(ThreadState::Lost);
    let (order, _) = order_tool();
    let (server, out) = run_on(steps, false, &[order], vec![marked("1 and 2?")], |_, _| {}).await;
    let out = out.unwrap();
    let r = server.requests();
    assert_eq!(
        r[0].messages()[0]["content"][0]["cache_control"]["type"],
        "ephemeral"
    );
    assert_eq!(thread_of(&r[2])["type"], "create");
    assert!(
        r[2].messages()[0]["content"][0]
            .get("cache_control")
            .is_none(),
        "answered: left out"
    );
    assert!(!r[2].raw_body.contains("cache_control"));
    assert_eq!(
        out.messages[0].get(),
        marked("1 and 2?").get(),
        "the history keeps them"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_a_fallback_model_wrote_is_continued_in_a_new_thread() {
    let mut steps = two_rounds();
    steps[0] = steps[0].clone().iterations(json!([
        { "type": "fallback_message", "input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0 }
    ]));
    let (order, _) = order_tool();
    let (server, out) = run_on(steps, false, &[order], prompt("1 and 2?"), |_, _| {}).await;
    out.unwrap();
    let types: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["thread"]["type"].clone())
        .collect();
    assert_eq!(types, [json!("create"), json!("create"), json!("continue")]);
}

#[tokio::test(flavor = "multi_thread")]
async fn extra_body_system_is_left_out_of_a_continue_too() {
    let (order, _) = order_tool();
    let (server, out) = run_on(
        two_rounds(),
        false,
        &[order],
        prompt("1 and 2?"),
        |cfg, _| {
            cfg.system = None;
            cfg.extra_body.push((
                "system".into(),
                serde_json::value::RawValue::from_string(r#""From extraBody.""#.into()).unwrap(),
            ));
        },
    )
    .await;
    out.unwrap();
    let r = server.requests();
    assert_eq!(r[0].body["system"], "From extraBody.");
    assert!(r[1].body.get("system").is_none());
    assert_eq!(r[1].full_body["system"], "From extraBody.");
}
