//! Shared by the integration tests: the strict stand-in of the API (`stand-in/`, run by node) with
//! its script, and helpers to define tools and run the engine against it.
#![allow(dead_code)] // each test crate uses a different part

pub mod api;
pub mod stand_in;
pub mod step;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anthropic_tool_calling::engine::tools::approval::{Always, Decision, PendingApproval, Signer};
use anthropic_tool_calling::engine::wire::protocol::{self, RawMessage};
use anthropic_tool_calling::engine::{
    run, ApiClient, RunConfig, RunError, RunEvent, RunOutput, Secret, Tool, ToolExecutor,
    ToolInvocation, ToolOutcome,
};
use serde_json::value::RawValue;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[allow(unused_imports)]
pub use stand_in::{Recorded, Server};
pub use step::Step;

/// The key every test sends; it must never show up in an error.
pub const API_KEY: &str = "sk-ant-api03-TEST-SECRET-KEY-do-not-leak";

/// The order-status tool the tests register (one string `orderId`, required).
pub const ORDER_TOOL: &str = r#"{"name":"get_order_status","description":"Look up the status of an order by its ID","input_schema":{"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}}"#;

/// `POST {base_url}/v1/messages` with the headers the API requires; the body is the caller's.
pub fn messages_request(client: &reqwest::Client, base_url: &str) -> reqwest::RequestBuilder {
    client
        .post(format!("{base_url}/v1/messages"))
        .header("x-api-key", API_KEY)
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
}

/// The engine's default settings, talking to `server` with [`API_KEY`].
pub fn config(server: &Server) -> RunConfig {
    RunConfig::new(Some(API_KEY.into()), server.base_url())
}

/// A one-message history from a string prompt.
pub fn prompt(text: &str) -> Vec<RawMessage> {
    vec![protocol::user_text(text)]
}

/// A tool from its definition JSON and an executor.
pub fn tool(definition: &str, executor: impl ToolExecutor + 'static) -> Tool {
    Tool::new(definition, Arc::new(executor)).expect("a valid tool definition")
}

/// The definition of a tool that takes any object.
pub fn any_input(name: &str) -> String {
    format!(
        r#"{{"name":"{name}","description":"test tool {name}","input_schema":{{"type":"object"}}}}"#
    )
}

/// A JSON result.
pub fn json_output(value: Value) -> ToolOutcome {
    ToolOutcome::Output {
        content: value.to_string(),
        json: true,
    }
}

/// A tool that counts its calls and answers `answer` (as JSON).
pub fn counting(definition: &str, answer: Value) -> (Tool, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let t = tool(definition, move |_call: ToolInvocation| {
        seen.fetch_add(1, Ordering::SeqCst);
        let answer = answer.clone();
        async move { json_output(answer) }
    });
    (t, calls)
}

/// The seed tool, counting its calls: `{"status":"shipped"}` for any order.
pub fn order_tool() -> (Tool, Arc<AtomicUsize>) {
    counting(ORDER_TOOL, serde_json::json!({ "status": "shipped" }))
}

/// Runs the engine once with a fresh client and no cancellation.
pub async fn run_once(
    cfg: &RunConfig,
    tools: &[Tool],
    messages: Vec<RawMessage>,
) -> Result<RunOutput, RunError> {
    let client = ApiClient::new();
    let result = run(&client, cfg, tools, messages, &CancellationToken::new()).await;
    if let Err(error) = &result {
        assert_no_key(error);
    }
    result
}

/// The API key appears nowhere in the error.
pub fn assert_no_key(error: &RunError) {
    assert!(
        !error.message.contains(API_KEY),
        "the API key leaked into: {}",
        error.message
    );
    let debug = format!("{error:?}");
    assert!(!debug.contains(API_KEY), "the API key leaked into: {debug}");
    let json = serde_json::to_string(error).expect("RunError serialises");
    assert!(!json.contains(API_KEY), "the API key leaked into: {json}");
}

/// A raw JSON value as a `Value`.
pub fn value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).expect("raw JSON parses")
}

/// The number of calls a counter saw.
pub fn count(counter: &AtomicUsize) -> usize {
    counter.load(Ordering::SeqCst)
}

/// The approval signer of the tests (a secret long enough, ids valid for a minute).
pub fn signer() -> Signer {
    Signer {
        secret: Secret::new("approval-test-secret-0123456789abcdef"),
        ttl: Duration::from_secs(60),
    }
}

/// A person's answer to a pending approval, as the resumed run is given it.
pub fn decision(pending: &PendingApproval, approved: bool, reason: Option<&str>) -> Decision {
    Decision {
        approval_id: pending.approval_id.clone(),
        approved,
        reason: reason.map(str::to_owned),
    }
}

/// A `refund` tool (any input, answers "refunded") that always waits for a person, with its call
/// counter.
pub fn refund_needing_approval() -> (Tool, Arc<AtomicUsize>) {
    let (refund, calls) = counting(&any_input("refund"), serde_json::json!("refunded"));
    (refund.with_approval(Arc::new(Always)), calls)
}

/// The events of a run, as the binding would forward them: the list, and the sink that fills it.
pub fn recorder() -> (Arc<Mutex<Vec<RunEvent>>>, impl Fn(RunEvent) + Send + Sync) {
    let seen: Arc<Mutex<Vec<RunEvent>>> = Arc::default();
    let sink = seen.clone();
    (seen, move |e| sink.lock().unwrap().push(e))
}
