//! The test server is only worth as much as its strictness: these prove it refuses what the
//! real API refuses, and that a refused request fails the test that sent it.

mod support;

use serde_json::{json, Value};
use support::rules::{
    check_body, check_body_with_betas, check_pairing, redacted_thinking_block, server_tool_use,
    thinking_block, web_search_result, CONTAINER_REQUIRED, CONTEXT_MANAGEMENT_BETA,
};
use support::*;

fn user(content: Value) -> Value {
    json!({ "role": "user", "content": content })
}

fn assistant(content: Value) -> Value {
    json!({ "role": "assistant", "content": content })
}

fn tool_use(id: &str) -> Value {
    json!({ "type": "tool_use", "id": id, "name": "t", "input": {} })
}

fn tool_result(id: &str) -> Value {
    json!({ "type": "tool_result", "tool_use_id": id, "content": "ok" })
}

fn text(t: &str) -> Value {
    json!({ "type": "text", "text": t })
}

#[test]
fn pairing_rules_accept_a_well_formed_conversation() {
    let messages = [
        user(json!("hi")),
        assistant(json!([
            text("checking"),
            tool_use("toolu_1"),
            tool_use("toolu_2")
        ])),
        user(json!([
            tool_result("toolu_2"),
            tool_result("toolu_1"),
            text("and also…")
        ])),
        assistant(json!([text("done")])),
        user(json!("thanks")),
    ];
    assert_eq!(check_pairing(&messages), Ok(()));
}

#[test]
fn pairing_rules_refuse_every_breach_with_the_api_message() {
    let cases = [
        (vec![user(json!("hi")), assistant(json!([tool_use("toolu_1")]))], "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."),
        (
            vec![user(json!("hi")), assistant(json!([tool_use("toolu_1")])), user(json!("no results"))],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1.",
        ),
        (
            vec![
                user(json!("hi")),
                assistant(json!([tool_use("toolu_1"), tool_use("toolu_2")])),
                user(json!([tool_result("toolu_1")])),
                user(json!([tool_result("toolu_2")])),
            ],
            "immediately after: toolu_2.",
        ),
        (
            vec![user(json!("hi")), assistant(json!([tool_use("toolu_1")])), user(json!([text("first"), tool_result("toolu_1")]))],
            "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message.",
        ),
        (
            vec![user(json!("hi")), assistant(json!([text("no tools")])), user(json!([tool_result("toolu_9")]))],
            "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9.",
        ),
        (
            vec![
                user(json!("hi")),
                assistant(json!([tool_use("toolu_1")])),
                user(json!([tool_result("toolu_1"), tool_result("toolu_1")])),
            ],
            "`tool_result` ids must be unique",
        ),
        (
            vec![
                user(json!("hi")),
                assistant(json!([tool_use("toolu_1")])),
                user(json!([tool_result("toolu_1")])),
                assistant(json!([tool_use("toolu_1")])),
                user(json!([tool_result("toolu_1")])),
            ],
            "`tool_use` ids must be unique",
        ),
    ];
    for (messages, expected) in cases {
        let why = check_pairing(&messages).expect_err(expected);
        assert!(why.contains(expected), "expected {expected:?}, got {why:?}");
    }
}

#[test]
fn body_rules_refuse_bad_fields_tools_and_blocks() {
    let good = json!({ "model": "m", "max_tokens": 10, "messages": [user(json!("hi"))],
        "tools": [{ "name": "get_order_status", "input_schema": { "type": "object" } }] });
    assert!(check_body(&good).is_empty(), "{:?}", check_body(&good));
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut body = good.clone();
        edit(&mut body);
        check_body(&body).join("; ")
    };
    assert!(broken(&|b| b["max_tokens"] = json!(0)).contains("max_tokens"));
    assert!(broken(&|b| b["max_tokens"] = json!(1.5)).contains("max_tokens"));
    assert!(broken(&|b| b["model"] = json!(null)).contains("model"));
    assert!(broken(&|b| b["messages"] = json!([])).contains("messages"));
    assert!(broken(&|b| b["tools"][0]["name"] = json!("bad name")).contains("tools.0.custom.name"));
    assert!(
        broken(&|b| b["tools"][0]["input_schema"]["type"] = json!("array"))
            .contains("input_schema.type")
    );
    assert!(
        broken(&|b| b["tools"] = json!([b["tools"][0].clone(), b["tools"][0].clone()]))
            .contains("unique")
    );
    assert!(
        broken(&|b| b["messages"] = json!([{ "role": "system", "content": "x" }])).contains("role")
    );
    assert!(
        broken(&|b| b["messages"] = json!([user(json!([tool_use("toolu_1")]))]))
            .contains("cannot hold")
    );
    let bad_flag = json!({ "type": "tool_result", "tool_use_id": "toolu_1", "content": "x", "is_error": "yes" });
    let breach = broken(&|b| {
        b["messages"] = json!([
            user(json!("hi")),
            assistant(json!([tool_use("toolu_1")])),
            user(json!([bad_flag.clone()]))
        ])
    });
    assert!(breach.contains("is_error"), "{breach}");
    let empty_error =
        json!({ "type": "tool_result", "tool_use_id": "toolu_1", "content": "", "is_error": true });
    let breach = broken(&|b| {
        b["messages"] = json!([
            user(json!("hi")),
            assistant(json!([tool_use("toolu_1")])),
            user(json!([empty_error.clone()]))
        ])
    });
    assert!(
        breach.contains("content cannot be empty if `is_error` is true"),
        "{breach}"
    );
}

/// A client that breaks the rules gets the API's 400, and the test that let it happen fails.
#[tokio::test(flavor = "multi_thread")]
#[should_panic(expected = "the engine broke the API's rules")]
async fn a_breach_is_answered_400_and_fails_the_test() {
    let server = Server::start([Step::text("never sent")]).await;
    let body = json!({ "model": "m", "max_tokens": 10,
        "messages": [user(json!("hi")), assistant(json!([tool_use("toolu_1")])), user(json!("forgot the result"))] });
    let response = messages_request(&reqwest::Client::new(), &server.base_url())
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let error: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap_or_default();
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("without `tool_result` blocks"),
        "{error}"
    );
    assert_eq!(server.violations().len(), 1);
}

fn body(messages: Value) -> Value {
    json!({ "model": "m", "max_tokens": 4096, "messages": messages })
}

fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

/// The problems of a body, joined (empty when it passes).
fn problems(body: &Value) -> String {
    check_body(body).join("; ")
}

#[test]
fn empty_messages_are_refused_except_a_final_assistant_one() {
    let empty =
        "all messages must have non-empty content except for the optional final assistant message";
    assert!(problems(&body(json!([user(json!(""))]))).contains(&format!("messages.0: {empty}")));
    assert!(problems(&body(json!([user(json!([]))]))).contains(&format!("messages.0: {empty}")));
    let middle = body(json!([
        user(json!("hi")),
        assistant(json!("")),
        user(json!("again"))
    ]));
    assert!(problems(&middle).contains(&format!("messages.1: {empty}")));
    assert_eq!(
        problems(&body(json!([user(json!("hi")), assistant(json!(""))]))),
        ""
    );
    assert_eq!(
        problems(&body(json!([user(json!("hi")), assistant(json!([]))]))),
        ""
    );
    assert!(problems(&body(json!([user(json!([text("")]))])))
        .contains("text content blocks must be non-empty"));
}

#[test]
fn thinking_blocks_must_come_back_unchanged() {
    let round = |first: Value| {
        body(json!([
            user(json!("hi")),
            assistant(json!([first, tool_use("toolu_1")])),
            user(json!([tool_result("toolu_1")]))
        ]))
    };
    assert_eq!(problems(&round(thinking_block("plan"))), "");
    assert_eq!(problems(&round(redacted_thinking_block("secret"))), "");
    let mut edited = thinking_block("plan");
    edited["thinking"] = json!("plan, edited");
    assert!(problems(&round(edited))
        .contains("messages.1.content.0: Invalid `signature` in `thinking` block"));
    let mut forged = redacted_thinking_block("secret");
    forged["data"] = json!(format!("00{}", &forged["data"].as_str().unwrap()[2..]));
    assert!(problems(&round(forged))
        .contains("messages.1.content.0: Invalid `data` in `redacted_thinking` block"));
    assert!(
        problems(&round(json!({ "type": "thinking", "thinking": "plan" })))
            .contains("Invalid `signature`")
    );
}

#[test]
fn thinking_on_needs_a_thinking_block_first_and_rules_out_sampling_and_forced_tools() {
    let enabled = json!({ "type": "enabled", "budget_tokens": 1024 });
    let round = |content: Value| {
        with(
            body(json!([
                user(json!("hi")),
                assistant(content),
                user(json!([tool_result("toolu_1")]))
            ])),
            "thinking",
            enabled.clone(),
        )
    };
    let expected = "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking";
    assert_eq!(
        problems(&round(json!([text("looking"), tool_use("toolu_1")]))),
        expected
    );
    assert!(problems(&round(json!([tool_use("toolu_1")]))).contains("but found `tool_use`"));
    assert_eq!(
        problems(&round(json!([thinking_block("t"), tool_use("toolu_1")]))),
        ""
    );
    let adaptive = with(
        round(json!([tool_use("toolu_1")])),
        "thinking",
        json!({ "type": "adaptive" }),
    );
    assert!(problems(&adaptive).contains("Expected `thinking`"));
    let disabled = with(
        round(json!([tool_use("toolu_1")])),
        "thinking",
        json!({ "type": "disabled" }),
    );
    assert_eq!(problems(&disabled), "");
    let paused = with(
        body(json!([
            user(json!("hi")),
            assistant(json!([server_tool_use(
                "srvtoolu_1",
                "web_search",
                json!({ "query": "q" })
            )]))
        ])),
        "thinking",
        enabled.clone(),
    );
    assert!(problems(&paused).contains("but found `server_tool_use`"));

    let on = with(
        body(json!([user(json!("hi"))])),
        "thinking",
        enabled.clone(),
    );
    assert!(
        problems(&with(on.clone(), "temperature", json!(0.5))).contains(
            "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode."
        )
    );
    assert!(problems(&with(on.clone(), "top_k", json!(5)))
        .contains("`top_k` must be unset when thinking is enabled."));
    assert!(problems(&with(on.clone(), "top_p", json!(0.5)))
        .contains("`top_p` must be greater than or equal to 0.95"));
    let forced = with(
        with(
            on.clone(),
            "tools",
            json!([{ "name": "t", "input_schema": { "type": "object" } }]),
        ),
        "tool_choice",
        json!({ "type": "any" }),
    );
    assert!(
        problems(&forced).contains("Thinking may not be enabled when tool_choice forces tool use.")
    );
    assert_eq!(problems(&with(on.clone(), "temperature", json!(1))), "");
    let low = with(
        on.clone(),
        "thinking",
        json!({ "type": "enabled", "budget_tokens": 1000 }),
    );
    assert!(problems(&low)
        .contains("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"));
    let over = with(
        on.clone(),
        "thinking",
        json!({ "type": "enabled", "budget_tokens": 4096 }),
    );
    assert!(problems(&over).contains("`max_tokens` must be greater than `thinking.budget_tokens`"));
    let bad = with(on, "thinking", json!({ "type": "auto" }));
    assert!(problems(&bad).contains("thinking: Input tag 'auto'"));

    let final_thinking = body(json!([
        user(json!("hi")),
        assistant(json!([
            thinking_block("t"),
            server_tool_use("srvtoolu_1", "web_search", json!({}))
        ]))
    ]));
    assert_eq!(
        problems(&final_thinking),
        "messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
    );
    assert_eq!(problems(&with(final_thinking, "thinking", enabled)), "");
}

#[test]
fn server_tools_definitions_and_blocks() {
    let tools = json!([
        { "type": "web_search_20250305", "name": "web_search", "max_uses": 3, "allowed_domains": ["a.test"], "user_location": { "type": "approximate", "city": "Madrid" } },
        { "type": "web_fetch_20250910", "name": "web_fetch", "citations": { "enabled": true } },
        { "type": "code_execution_20250825", "name": "code_execution" },
        { "type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25" },
        { "type": "bash_20250124", "name": "bash" },
        { "type": "text_editor_20250728", "name": "str_replace_based_edit_tool", "max_characters": 1000 },
        { "type": "memory_20250818", "name": "memory" },
        { "type": "custom", "name": "get_order_status", "input_schema": { "type": "object" } },
    ]);
    assert_eq!(
        problems(&with(body(json!([user(json!("hi"))])), "tools", tools)),
        ""
    );
    let one = |tool: Value| {
        problems(&with(
            body(json!([user(json!("hi"))])),
            "tools",
            json!([tool]),
        ))
    };
    assert!(
        one(json!({ "type": "web_search_20250305", "name": "search" }))
            .contains("tools.0.web_search_20250305.name: Input should be 'web_search'")
    );
    assert!(one(
        json!({ "type": "web_search_20250305", "name": "web_search", "input_schema": {} })
    )
    .contains("input_schema: Extra inputs are not permitted"));
    assert!(
        one(json!({ "type": "web_search_19990101", "name": "web_search" }))
            .contains("Input tag 'web_search_19990101'")
    );

    let search = server_tool_use("srvtoolu_1", "web_search", json!({ "query": "q" }));
    let found = web_search_result("srvtoolu_1", &[("https://a.test", "A")]);
    let whole = body(json!([
        user(json!("q")),
        assistant(json!([search.clone(), found.clone(), text("done")])),
        user(json!("thanks"))
    ]));
    assert_eq!(problems(&whole), "");
    let paused = body(json!([
        user(json!("q")),
        assistant(json!([search.clone()]))
    ]));
    assert_eq!(problems(&paused), "", "a paused turn sent back last");
    let left = body(json!([
        user(json!("q")),
        assistant(json!([search.clone()])),
        user(json!("and?"))
    ]));
    assert!(problems(&left).contains(
        "messages.1: `server_tool_use` ids were found without their result blocks: srvtoolu_1."
    ));
    let orphan = body(json!([user(json!("q")), assistant(json!([found]))]));
    assert!(problems(&orphan).contains("matches no `server_tool_use` block before it"));
    let answered = body(json!([
        user(json!("q")),
        assistant(json!([search])),
        user(json!([tool_result("srvtoolu_1")]))
    ]));
    assert!(problems(&answered)
        .contains("unexpected `tool_use_id` found in `tool_result` blocks: srvtoolu_1."));
    let compaction =
        json!({ "type": "compaction", "content": "summary", "encrypted_content": "ZW5j" });
    let future = json!({ "type": "x_future_block", "anything": [1, 2] });
    let kept = body(json!([
        user(json!("q")),
        assistant(json!([compaction, future])),
        user(json!("go on"))
    ]));
    assert_eq!(problems(&kept), "");
    let unknown = body(json!([
        user(json!("q")),
        assistant(json!([{ "type": "hologram" }])),
        user(json!("go on"))
    ]));
    assert!(problems(&unknown).contains("cannot hold a block of type Some(\"hologram\")"));
}

#[test]
fn tool_results_may_hold_documents_search_results_and_tool_references() {
    let items = json!([
        text("x"),
        { "type": "document", "source": { "type": "text", "media_type": "text/plain", "data": "policy" } },
        { "type": "search_result", "source": "https://kb.test/1", "title": "KB", "content": [text("30 days")] },
        { "type": "tool_reference", "tool_name": "get_order_status" },
    ]);
    let result = json!({ "type": "tool_result", "tool_use_id": "toolu_1", "content": items });
    let ok = body(json!([
        user(json!("q")),
        assistant(json!([tool_use("toolu_1")])),
        user(json!([result]))
    ]));
    assert_eq!(problems(&ok), "");
    let bad = json!({ "type": "tool_result", "tool_use_id": "toolu_1", "content": [{ "type": "search_result", "source": "s", "content": [] }] });
    let refused = body(json!([
        user(json!("q")),
        assistant(json!([tool_use("toolu_1")])),
        user(json!([bad]))
    ]));
    assert!(problems(&refused)
        .contains("messages.2.content.0.content.0: a malformed search_result block"));
}

#[test]
fn newer_top_level_fields_are_type_checked_and_unknown_ones_refused() {
    let base = body(json!([user(json!("hi"))]));
    let good = [
        ("stop_sequences", json!(["END"])),
        ("top_p", json!(0.9)),
        ("top_k", json!(5)),
        ("metadata", json!({ "user_id": "u" })),
        ("service_tier", json!("standard_only")),
        ("cache_control", json!({ "type": "ephemeral", "ttl": "1h" })),
        ("output_config", json!({ "effort": "max" })),
        ("container", json!("cont_1")),
        ("inference_geo", json!("us")),
        ("stream", json!(true)),
    ];
    for (key, value) in good {
        assert_eq!(problems(&with(base.clone(), key, value)), "", "{key}");
    }
    let edits = json!({ "edits": [{ "type": "clear_tool_uses_20250919" }] });
    let managed = with(base.clone(), "context_management", edits);
    assert_eq!(
        check_body_with_betas(&managed, &[CONTEXT_MANAGEMENT_BETA.to_owned()]),
        Vec::<String>::new()
    );
    assert!(problems(&managed).contains("requires the `context-management-2025-06-27` beta"));
    let bad = [
        ("stop_sequences", json!("END"), "stop_sequences"),
        ("top_k", json!(0.5), "top_k"),
        ("metadata", json!({ "user": "u" }), "metadata"),
        (
            "service_tier",
            json!("priority"),
            "service_tier: Input should be 'auto' or 'standard_only'",
        ),
        (
            "cache_control",
            json!({ "type": "ephemeral", "ttl": "2h" }),
            "cache_control.ttl: Input should be '5m' or '1h'",
        ),
        (
            "output_config",
            json!({ "effort": "extreme" }),
            "output_config",
        ),
        (
            "container",
            json!(7),
            "container: Input should be a valid string",
        ),
        (
            "stream",
            json!("yes"),
            "stream: Input should be a valid boolean",
        ),
        ("zeta", json!(1), "zeta: Extra inputs are not permitted"),
    ];
    for (key, value, expected) in bad {
        let found = problems(&with(base.clone(), key, value));
        assert!(found.contains(expected), "{key}: {found}");
    }
    let none = with(
        with(
            base,
            "tools",
            json!([{ "name": "t", "input_schema": { "type": "object" } }]),
        ),
        "tool_choice",
        json!({ "type": "none", "disable_parallel_tool_use": true }),
    );
    assert!(problems(&none)
        .contains("tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted"));
}

#[test]
fn results_for_code_called_tools_need_the_container() {
    let exec = server_tool_use("srvtoolu_e", "code_execution", json!({ "code": "x" }));
    let call = json!({ "type": "tool_use", "id": "toolu_c", "name": "t", "input": {}, "caller": { "type": "code_execution_20250825", "tool_id": "srvtoolu_e" } });
    let pending = body(json!([
        user(json!("q")),
        assistant(json!([exec, call])),
        user(json!([tool_result("toolu_c")]))
    ]));
    assert_eq!(problems(&pending), CONTAINER_REQUIRED);
    assert_eq!(problems(&with(pending, "container", json!("cont_1"))), "");
}

// --- the server: streaming and step options ---------------------------------------------------

async fn post(server: &Server, body: &Value, beta: Option<&str>) -> reqwest::Response {
    let mut request = messages_request(&reqwest::Client::new(), &server.base_url());
    if let Some(beta) = beta {
        request = request.header("anthropic-beta", beta);
    }
    request.body(body.to_string()).send().await.unwrap()
}

fn rich_reply() -> Step {
    Step::reply(
        json!([
            thinking_block("The user wants order 4821 — ¿dónde está? 📦"),
            redacted_thinking_block("hidden"),
            server_tool_use("srvtoolu_1", "web_search", json!({ "query": "order 4821" })),
            web_search_result("srvtoolu_1", &[("https://shop.test/4821", "Order 4821")]),
            { "type": "text", "text": "It ships soon — on its way.", "citations": [{ "type": "char_location", "cited_text": "soon", "document_index": 0, "start_char_index": 0, "end_char_index": 4 }] },
            { "type": "x_future_block", "payload": { "deep": [1, 2] } },
            { "type": "tool_use", "id": "toolu_1", "name": "get_order_status", "input": { "orderId": "4821", "options": { "fields": ["eta"] } } },
            { "type": "tool_use", "id": "toolu_2", "name": "get_order_status", "input": {} },
        ]),
        "tool_use",
    )
    .usage(json!({ "input_tokens": 321, "output_tokens": 89, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 }))
    .container("cont_1", "2026-12-01T00:00:00Z")
    .stop_details(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_reply_reassembles_into_the_json_reply() {
    // One reply twice (the same id), so the streamed one reassembles to the plain one.
    let reply = rich_reply();
    let server = Server::start([reply.clone(), reply]).await;
    let request = body(json!([user(json!("Where is #4821?"))]));
    let plain: Value =
        serde_json::from_str(&post(&server, &request, None).await.text().await.unwrap()).unwrap();
    let response = post(
        &server,
        &with(request, "stream", json!(true)),
        Some("a-1, b-2"),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    assert!(response.headers().contains_key("request-id"));
    let events = support::server::sse::parse(&response.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(&names[..2], ["message_start", "ping"]);
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    assert_eq!(events[0].1["message"]["content"], json!([]));
    assert_eq!(events[0].1["message"]["stop_reason"], Value::Null);
    let starts: Vec<&Value> = events
        .iter()
        .filter(|(n, _)| n == "content_block_start")
        .map(|(_, d)| &d["content_block"])
        .collect();
    assert_eq!(
        starts[0],
        &json!({ "type": "thinking", "thinking": "", "signature": "" })
    );
    assert_eq!(starts[2]["input"], json!({}));
    assert_eq!(
        starts[3], &plain["content"][3],
        "a result block comes whole"
    );
    assert_eq!(
        starts[5], &plain["content"][5],
        "an unknown block comes whole"
    );
    let first_json = events
        .iter()
        .find(|(_, d)| d["delta"]["type"] == "input_json_delta")
        .unwrap();
    assert_eq!(first_json.1["delta"]["partial_json"], "");
    assert!(
        events
            .iter()
            .filter(|(_, d)| d["delta"]["type"] == "text_delta")
            .count()
            > 3
    );
    assert_eq!(support::server::sse::reassemble(&events), Ok(plain));
    let recorded = server.requests();
    assert!(!recorded[0].streamed && recorded[1].streamed && !recorded[1].client_closed);
    assert_eq!(recorded[1].betas, ["a-1", "b-2"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn stream_faults_error_event_cut_and_unknown_delta() {
    let server = Server::start([
        Step::text("cut by an error").sse_error_after(3, "overloaded_error", "Overloaded"),
        Step::text("never finished").sse_cut_after(4),
        Step::text("odd")
            .unknown_delta("x_delta")
            .stream_delay(std::time::Duration::from_millis(2)),
    ])
    .await;
    let request = with(body(json!([user(json!("hi"))])), "stream", json!(true));
    let errored =
        support::server::sse::parse(&post(&server, &request, None).await.text().await.unwrap());
    let names: Vec<&str> = errored.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["message_start", "ping", "content_block_start", "error"]
    );
    assert_eq!(
        errored[3].1,
        json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } })
    );
    assert!(
        post(&server, &request, None).await.text().await.is_err(),
        "the connection is reset mid-stream"
    );
    let odd =
        support::server::sse::parse(&post(&server, &request, None).await.text().await.unwrap());
    assert!(odd
        .iter()
        .any(|(_, d)| d["delta"] == json!({ "type": "x_delta" })));
    assert_eq!(
        support::server::sse::reassemble(&odd),
        Err("unknown delta type \"x_delta\"".into())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scripted_redirect_carries_its_location() {
    let server = Server::start([Step::redirect("http://127.0.0.1:1/elsewhere")]).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = messages_request(&client, &server.base_url())
        .body(body(json!([user(json!("hi"))])).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 307);
    assert_eq!(
        response.headers()["location"],
        "http://127.0.0.1:1/elsewhere"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn require_container_is_met_by_the_right_id() {
    let server = Server::start([Step::text("continued").require_container("cont_1")]).await;
    let request = with(
        body(json!([user(json!("hi"))])),
        "container",
        json!("cont_1"),
    );
    assert_eq!(post(&server, &request, None).await.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
#[should_panic(
    expected = "container_id is required when there are pending tool uses generated by code execution with tools."
)]
async fn require_container_refuses_a_request_without_it() {
    let server = Server::start([Step::text("continued").require_container("cont_1")]).await;
    let response = post(&server, &body(json!([user(json!("hi"))])), None).await;
    assert_eq!(response.status(), 400);
    drop(server);
}
