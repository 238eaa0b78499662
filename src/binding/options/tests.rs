//! The option parser's tests: defaults, refusals naming the option, raw JSON kept as given.
use std::time::Duration;

use super::*;
use crate::engine::Secret;

fn parse(json: &str) -> Result<RunRequest, RunError> {
    parse_request(json)
}

/// `options` are refused with `invalid_request` naming `expected`.
fn refused(options: &str, expected: &str) -> RunError {
    let err = parse(&format!(r#"{{"prompt":"hi","options":{options}}}"#))
        .err()
        .expect(options);
    assert_eq!(err.code, crate::engine::ErrorCode::InvalidRequest);
    assert!(err.message.contains(expected), "{options}: {}", err.message);
    err
}

#[test]
fn defaults_and_env() {
    let r = parse(r#"{"prompt":"hi","env":{"ANTHROPIC_API_KEY":"k","ANTHROPIC_MODEL":"m","ANTHROPIC_BASE_URL":"http://127.0.0.1:9/"}}"#)
        .unwrap();
    assert_eq!(r.config.model, "m");
    assert_eq!(r.config.api.api_key.as_ref().map(Secret::expose), Some("k"));
    assert_eq!(r.config.api.base_url, "http://127.0.0.1:9");
    assert_eq!(r.config.max_tokens, 4096);
    assert_eq!(r.config.max_tool_iterations, 5);
    assert_eq!(r.config.api.max_retries, 2);
    assert_eq!(r.config.api.timeout, Duration::from_secs(600));
    assert!(r.config.parallel_tool_calls);
    assert_eq!(r.messages.len(), 1);
    assert_eq!(r.messages[0].get(), r#"{"role":"user","content":"hi"}"#);
    let r = parse(r#"{"prompt":"hi","options":{"model":"o","apiKey":"ok"},"env":{"ANTHROPIC_API_KEY":"k","ANTHROPIC_MODEL":"m"}}"#).unwrap();
    assert_eq!(r.config.model, "o");
    assert_eq!(
        r.config.api.api_key.as_ref().map(Secret::expose),
        Some("ok")
    );
    assert_eq!(r.config.api.base_url, "https://api.anthropic.com");
}

#[test]
fn bad_options_name_the_option() {
    let cases = [
        (r#"{"maxTokens":0}"#, "maxTokens"),
        (r#"{"maxTokens":1.5}"#, "maxTokens"),
        (r#"{"maxTokens":"9"}"#, "maxTokens"),
        (
            r#"{"temperature":3,"apiVersion":"2023-06-01"}"#,
            "Option temperature must be a number from 0 to 1",
        ),
        (r#"{"onToolError":"ignore"}"#, "onToolError"),
        (r#"{"maxToolIterations":-1}"#, "maxToolIterations"),
        (r#"{"toolChoice":{"type":"tool"}}"#, "toolChoice"),
        (r#"{"tools":"get_order_status"}"#, "tools"),
        (r#"{"baseURL":"ftp://x"}"#, "baseURL"),
        (r#"{"baseURL":"http://127.0.0.1:1/v1"}"#, "/v1"),
        (r#"{"timeoutMs":0}"#, "timeoutMs"),
        (r#"{"parallelToolCalls":"yes"}"#, "parallelToolCalls"),
        (r#"{"system":{"text":"x"}}"#, "system"),
        (r#"{"maxToken":5}"#, "Unknown option \"maxToken\""),
    ];
    for (options, expected) in cases {
        refused(options, expected);
    }
}

#[test]
fn bad_prompts_are_refused() {
    for prompt in [
        r#""""#,
        "[]",
        "5",
        r#"[{"role":"developer","content":"x"}]"#,
        r#"[{"role":"user"}]"#,
    ] {
        let err = parse(&format!(r#"{{"prompt":{prompt}}}"#))
            .err()
            .expect(prompt);
        assert!(err.message.contains("prompt"), "{prompt}: {}", err.message);
    }
    let r = parse(r#"{"prompt":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}"#).unwrap();
    assert_eq!(r.messages.len(), 3);
}

#[test]
fn secrets_are_never_shown() {
    let err = parse(r#"{"prompt":"hi","options":{"apiKey":12345}}"#)
        .err()
        .unwrap();
    assert!(!err.message.contains("12345"), "{}", err.message);
}

#[test]
fn explicit_credentials_win_and_then_the_environment_is_not_read() {
    let env = r#""env":{"ANTHROPIC_API_KEY":"env-key","ANTHROPIC_AUTH_TOKEN":"env-token"}"#;
    let r = parse(&format!(
        r#"{{"prompt":"hi","options":{{"authToken":"gw"}},{env}}}"#
    ))
    .unwrap();
    assert!(
        r.config.api.api_key.is_none(),
        "the env key must not go to the gateway"
    );
    assert_eq!(
        r.config.api.auth_token.as_ref().map(Secret::expose),
        Some("gw")
    );
    let r = parse(&format!(
        r#"{{"prompt":"hi","options":{{"apiKey":"mine"}},{env}}}"#
    ))
    .unwrap();
    assert_eq!(
        r.config.api.api_key.as_ref().map(Secret::expose),
        Some("mine")
    );
    assert!(r.config.api.auth_token.is_none());
    let r = parse(&format!(r#"{{"prompt":"hi",{env}}}"#)).unwrap();
    assert_eq!(
        r.config.api.api_key.as_ref().map(Secret::expose),
        Some("env-key")
    );
    assert_eq!(
        r.config.api.auth_token.as_ref().map(Secret::expose),
        Some("env-token")
    );
    // Debug of the whole config never shows a credential.
    let printed = format!("{:?}", r.config);
    assert!(
        !printed.contains("env-key") && !printed.contains("env-token"),
        "{printed}"
    );
}

#[test]
fn prompt_system_and_tool_choice_are_kept_byte_for_byte() {
    let json = r#"{"prompt":[{"role":"user","content":[{"type":"text","text":"a","zz":1,"aa":{"y":2,"b":3}}]},{"content":"b","role":"assistant"},{"role":"user","content":"c"}],"options":{"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"toolChoice":{"type":"any","disable_parallel_tool_use":true}}}"#;
    let r = parse(json).unwrap();
    assert_eq!(
        r.messages[0].get(),
        r#"{"role":"user","content":[{"type":"text","text":"a","zz":1,"aa":{"y":2,"b":3}}]}"#
    );
    assert_eq!(r.messages[1].get(), r#"{"content":"b","role":"assistant"}"#);
    assert_eq!(
        r.config.system.as_ref().unwrap().get(),
        r#"[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}]"#
    );
    let choice = r.config.tool_choice.as_ref().unwrap();
    assert_eq!(
        choice.raw.get(),
        r#"{"type":"any","disable_parallel_tool_use":true}"#
    );
    assert!(choice.forcing);
    assert_eq!(
        choice.after_first.get(),
        r#"{"type":"auto","disable_parallel_tool_use":true}"#
    );
}

#[test]
fn pass_through_fields_keep_their_json_and_wire_names() {
    let r = parse(r#"{"prompt":"hi","options":{"thinking":{"type":"enabled","budget_tokens":2048},"stopSequences":["END"],"apiVersion":"2023-06-01","topP":0.9,"topK":5,"metadata":{"user_id":"u1"},"serviceTier":"auto","cacheControl":{"type":"ephemeral"},"outputConfig":{"effort":"low"},"contextManagement":{"edits":[]},"container":"cont_1","serverTools":[{"type":"web_search_20250305","name":"web_search","max_uses":2}],"betas":["a-1","b-2"],"headers":{"X-Trace":"t"},"extraBody":{"inference_geo":"us","z":1}}}"#).unwrap();
    let fields: Vec<(&str, &str)> = r.config.fields.iter().map(|(k, v)| (*k, v.get())).collect();
    assert_eq!(
        fields,
        [
            ("thinking", r#"{"type":"enabled","budget_tokens":2048}"#),
            ("stop_sequences", r#"["END"]"#),
            ("top_p", "0.9"),
            ("top_k", "5"),
            ("metadata", r#"{"user_id":"u1"}"#),
            ("service_tier", r#""auto""#),
            ("cache_control", r#"{"type":"ephemeral"}"#),
            ("output_config", r#"{"effort":"low"}"#),
            ("context_management", r#"{"edits":[]}"#),
        ]
    );
    assert_eq!(r.config.container.as_deref(), Some("cont_1"));
    assert_eq!(
        r.config.server_tools[0].get(),
        r#"{"type":"web_search_20250305","name":"web_search","max_uses":2}"#
    );
    let headers: Vec<(String, &str)> = r
        .config
        .api
        .headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap()))
        .collect();
    assert_eq!(
        headers,
        [
            ("anthropic-beta".to_owned(), "a-1,b-2"),
            ("x-trace".to_owned(), "t")
        ]
    );
    let extra: Vec<(&str, &str)> = r
        .config
        .extra_body
        .iter()
        .map(|(k, v)| (k.as_str(), v.get()))
        .collect();
    assert_eq!(extra, [("inference_geo", r#""us""#), ("z", "1")]);
}

#[test]
fn bad_types_and_refused_keys_name_the_option() {
    let cases = [
        (r#"{"thinking":"on"}"#, "Option thinking must be an object"),
        (
            r#"{"stopSequences":"END"}"#,
            "Option stopSequences must be an array of strings",
        ),
        (
            r#"{"topP":"0.9","apiVersion":"2023-06-01"}"#,
            "Option topP must be a number",
        ),
        (
            r#"{"topK":1.5,"apiVersion":"2023-06-01"}"#,
            "Option topK must be an integer",
        ),
        (r#"{"metadata":[]}"#, "Option metadata must be an object"),
        (
            r#"{"serviceTier":1}"#,
            "Option serviceTier must be a string",
        ),
        (
            r#"{"cacheControl":true}"#,
            "Option cacheControl must be an object",
        ),
        (
            r#"{"outputConfig":"low"}"#,
            "Option outputConfig must be an object",
        ),
        (
            r#"{"contextManagement":1}"#,
            "Option contextManagement must be an object",
        ),
        (r#"{"betas":"x"}"#, "Option betas must be"),
        (r#"{"betas":[1]}"#, "Option betas must be"),
        (r#"{"headers":["x"]}"#, "Option headers must be"),
        (
            r#"{"headers":{"x-a":1}}"#,
            "headers[\"x-a\"] must be a string",
        ),
        (
            r#"{"headers":{"X-Api-Key":"k"}}"#,
            "may not set \"X-Api-Key\"",
        ),
        (
            r#"{"headers":{"authorization":"Bearer k"}}"#,
            "may not set \"authorization\"",
        ),
        (
            r#"{"headers":{"anthropic-version":"2"}}"#,
            "may not set \"anthropic-version\"",
        ),
        (
            r#"{"headers":{"Content-Type":"text/plain"}}"#,
            "may not set \"Content-Type\"",
        ),
        (
            r#"{"extraBody":{"model":"x"}}"#,
            "extraBody may not set \"model\"",
        ),
        (
            r#"{"extraBody":{"messages":[]}}"#,
            "extraBody may not set \"messages\"",
        ),
        (
            r#"{"extraBody":{"tools":[]}}"#,
            "extraBody may not set \"tools\"",
        ),
        (
            r#"{"extraBody":{"stream":true}}"#,
            "extraBody may not set \"stream\"",
        ),
        (
            r#"{"extraBody":{"thread":{"type":"create"}}}"#,
            "extraBody may not set \"thread\"",
        ),
        (r#"{"apiThreads":"yes"}"#, "Option apiThreads must be"),
        (r#"{"extraBody":[1]}"#, "Option extraBody must be an object"),
        (
            r#"{"serverTools":{"type":"x"}}"#,
            "Option serverTools must be",
        ),
        (
            r#"{"serverTools":[{"name":"web_search"}]}"#,
            "serverTools[0] must be",
        ),
        (r#"{"container":5}"#, "Option container must be"),
        (
            r#"{"onMaxIterations":"ask"}"#,
            "Option onMaxIterations must be \"error\" or \"answer\"",
        ),
        (
            r#"{"toolChoice":{"type":"none","disable_parallel_tool_use":true}}"#,
            "cannot carry disable_parallel_tool_use",
        ),
    ];
    for (options, expected) in cases {
        let err = refused(options, expected);
        assert!(
            err.message.contains("Nothing was sent"),
            "{options}: {}",
            err.message
        );
    }
}

#[test]
fn an_approval_secret_shorter_than_32_characters_is_refused_naming_both() {
    let short = "s".repeat(31);
    let long = "s".repeat(32);
    for (options, env) in [
        (
            format!(r#"{{"approvalSecret":"{short}"}}"#),
            "{}".to_owned(),
        ),
        (
            "{}".to_owned(),
            format!(r#"{{"ANTHROPIC_TOOL_CALLING_SECRET":"{short}"}}"#),
        ),
        // 31 characters, more bytes: characters are counted.
        (
            format!(r#"{{"approvalSecret":"{}é"}}"#, "s".repeat(30)),
            "{}".to_owned(),
        ),
    ] {
        let err = parse(&format!(
            r#"{{"prompt":"hi","options":{options},"env":{env}}}"#
        ))
        .err()
        .expect("a short secret is refused");
        assert_eq!(err.code, crate::engine::ErrorCode::InvalidRequest);
        for part in [
            "is 31 characters long",
            "approvalSecret",
            "ANTHROPIC_TOOL_CALLING_SECRET",
            "openssl rand -hex 32",
            "Nothing was sent",
        ] {
            assert!(err.message.contains(part), "{part:?}: {}", err.message);
        }
        assert!(!err.message.contains(&"s".repeat(30)), "{}", err.message);
    }
    let from_env = parse(&format!(
        r#"{{"prompt":"hi","env":{{"ANTHROPIC_TOOL_CALLING_SECRET":"{short}"}}}}"#
    ))
    .err()
    .unwrap();
    assert!(from_env
        .message
        .starts_with("ANTHROPIC_TOOL_CALLING_SECRET is 31"));

    let r = parse(&format!(
        r#"{{"prompt":"hi","options":{{"approvalSecret":"{long}"}}}}"#
    ))
    .unwrap();
    let signer = r.config.signer.expect("a signer");
    assert_eq!(signer.secret.expose(), long);
    // Never sent, yet taken out of what the API says back.
    assert_eq!(r.config.api.unsent_secrets, [Secret::new(long)]);
}

#[test]
fn header_values_are_marked_sensitive_and_never_shown() {
    let r = parse(r#"{"prompt":"hi","options":{"betas":["b-1"],"headers":{"x-gateway-key":"gk-0123456789"}}}"#)
        .unwrap();
    let sensitive: Vec<(String, bool)> = r
        .config
        .api
        .headers
        .iter()
        .map(|(name, value)| (name.to_string(), value.is_sensitive()))
        .collect();
    assert_eq!(
        sensitive,
        [
            ("anthropic-beta".to_owned(), false),
            ("x-gateway-key".to_owned(), true)
        ]
    );
    for options in [
        r#"{"headers":{"x-gateway-key":"gk-0123456789\n"}}"#,
        r#"{"headers":{"x-gateway-key":1234567890123}}"#,
        r#"{"headers":["gk-0123456789"]}"#,
    ] {
        let err = refused(options, "Option headers");
        for secret in ["gk-0123456789", "1234567890123"] {
            assert!(!err.message.contains(secret), "{options}: {}", err.message);
        }
    }
}

/// The keys of `interface RunOptions` in index.d.ts, in order.
fn run_options_in_index_d_ts() -> Vec<&'static str> {
    let dts = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/index.d.ts"));
    let start = dts
        .find("export interface RunOptions")
        .expect("index.d.ts declares RunOptions");
    let body = &dts[start..];
    let body = &body[..body.find("\n}").expect("RunOptions ends")];
    body.lines()
        .skip(1)
        .filter_map(|line| {
            let key = line.strip_prefix("  ")?;
            let end = key.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            (end > 0 && key[end..].starts_with(['?', ':'])).then(|| &key[..end])
        })
        .collect()
}

#[test]
fn the_options_listed_are_those_of_index_d_ts() {
    let mut listed: Vec<&str> = list::all_names().collect();
    let count = listed.len();
    listed.sort_unstable();
    listed.dedup();
    assert_eq!(listed.len(), count, "an option is listed twice");
    let mut declared = run_options_in_index_d_ts();
    declared.sort_unstable();
    assert_eq!(listed, declared);
}

#[test]
fn an_unknown_option_is_told_every_known_one() {
    let err = refused(
        r#"{"zeta":1,"maxToken":5,"approvalz":true}"#,
        "Unknown option",
    );
    assert_eq!(
        err.message,
        "Unknown option \"approvalz\". Did you mean \"approvals\"? Known options: model, maxTokens, system, temperature, \
         toolChoice, tools, maxToolIterations, onMaxIterations, onToolError, maxToolFailures, \
         toolTimeoutMs, parallelToolCalls, maxTotalTokens, maxIdenticalCalls, apiKey, authToken, baseURL, provider, apiVersion, maxRetries, \
         timeoutMs, serverTools, mcpServers, betas, headers, extraBody, apiThreads, container, approvals, approvalSecret, \
         approvalTtlMs, approvalScope, thinking, stopSequences, topP, topK, metadata, serviceTier, \
         cacheControl, outputConfig, contextManagement, output, telemetry, store, thread, signal, context, onToolCall, \
         onToolResult, onStepFinish. Nothing was sent."
    );
    // Only a close name is offered.
    for (typo, near) in [
        ("maxToken", "maxTokens"),
        ("max_tokens", "maxTokens"),
        ("maxtokens", "maxTokens"),
        ("base_url", "baseURL"),
        ("onToolCal", "onToolCall"),
    ] {
        let err = refused(&format!(r#"{{"{typo}":1}}"#), "Unknown option");
        assert!(
            err.message.starts_with(&format!(
                "Unknown option {typo:?}. Did you mean {near:?}? Known options: model, "
            )),
            "{}",
            err.message
        );
    }
    let far = refused(r#"{"zeta":1}"#, "Unknown option");
    assert!(far
        .message
        .starts_with("Unknown option \"zeta\". Known options: model, "));
    // A key with escapes is read too, and names no option.
    refused(
        r#"{"max\u0054okens":5,"a\"b":1}"#,
        "Unknown option \"a\\\"b\"",
    );
}

#[test]
fn output_joins_output_config_in_its_place_and_nothing_else_may_set_the_format() {
    let schema = r#"{"type":"object","properties":{"id":{"type":"string","minLength":2}},"required":["id"]}"#;
    let sent = r#"{"type":"json_schema","schema":{"type":"object","properties":{"id":{"type":"string","description":"{minLength: 2}"}},"additionalProperties":false,"required":["id"]}}"#;
    let r = parse(&format!(
        r#"{{"prompt":"hi","options":{{"thinking":{{"type":"adaptive"}},"outputConfig":{{"effort":"low","task_budget":{{"type":"tokens","total":9000}}}},"contextManagement":{{"edits":[]}},"output":{schema}}}}}"#
    ))
    .unwrap();
    let fields: Vec<(&str, &str)> = r.config.fields.iter().map(|(k, v)| (*k, v.get())).collect();
    let config = format!(
        r#"{{"effort":"low","task_budget":{{"type":"tokens","total":9000}},"format":{sent}}}"#
    );
    assert_eq!(
        fields,
        [
            ("thinking", r#"{"type":"adaptive"}"#),
            ("output_config", config.as_str()),
            ("context_management", r#"{"edits":[]}"#),
        ]
    );
    assert!(r.config.output.is_some());
    let betas: Vec<String> = r
        .config
        .api
        .headers
        .iter()
        .filter(|(n, _)| n == "anthropic-beta")
        .map(|(_, v)| v.to_str().unwrap().to_owned())
        .collect();
    assert_eq!(betas, ["task-budgets-2026-03-13"]);
    // Without outputConfig the format is output_config's only key.
    let r = parse(&format!(
        r#"{{"prompt":"hi","options":{{"output":{schema}}}}}"#
    ))
    .unwrap();
    assert_eq!(
        r.config.fields[0].1.get(),
        format!(r#"{{"format":{sent}}}"#)
    );
    assert!(r
        .config
        .api
        .headers
        .iter()
        .all(|(n, _)| n != "anthropic-beta"));
    refused(
        &format!(
            r#"{{"output":{schema},"outputConfig":{{"format":{{"type":"json_schema","schema":{{}}}}}}}}"#
        ),
        "Options output and outputConfig.format both set the answer's format",
    );
    refused(
        &format!(r#"{{"output":{schema},"extraBody":{{"output_config":{{}}}}}}"#),
        "Option extraBody sets \"output_config\"",
    );
    refused(
        r#"{"output":true}"#,
        "Option output must be a JSON Schema object",
    );
    refused(
        r#"{"output":{"type":"object","properties":{"a":{"$ref":"other.json"}}}}"#,
        "points outside the schema",
    );
    // outputConfig.format without output goes as given, unchecked.
    let r = parse(r#"{"prompt":"hi","options":{"outputConfig":{"format":{"type":"json_schema","schema":{"type":"object"}}}}}"#).unwrap();
    assert!(r.config.output.is_none());
    assert_eq!(
        r.config.fields[0].1.get(),
        r#"{"format":{"type":"json_schema","schema":{"type":"object"}}}"#
    );
}

#[test]
fn api_threads_is_on_unless_turned_off() {
    let on = parse(r#"{"prompt":"hi","options":{}}"#).unwrap();
    assert!(on.config.api_threads);
    let off = parse(r#"{"prompt":"hi","options":{"apiThreads":false}}"#).unwrap();
    assert!(!off.config.api_threads);
}

#[test]
fn provider_picks_the_platform_and_its_settings_from_options_or_env() {
    use crate::engine::wire::platform::Platform;
    // The Anthropic API by default; a platform never reads ANTHROPIC_* credentials or base URL.
    let env = r#""env":{"ANTHROPIC_API_KEY":"sk-1","ANTHROPIC_BASE_URL":"http://gw","AWS_REGION":"eu-west-1","AWS_BEARER_TOKEN_BEDROCK":"absk-1"}"#;
    let r = parse(&format!(r#"{{"prompt":"hi","options":{{}},{env}}}"#)).unwrap();
    assert_eq!(r.config.api.platform, Platform::Anthropic);
    let r = parse(&format!(
        r#"{{"prompt":"hi","options":{{"provider":"bedrock","model":"us.anthropic.claude-x-v1:0"}},{env}}}"#
    ))
    .unwrap();
    assert_eq!(
        r.config.api.platform,
        Platform::Bedrock {
            model: "us.anthropic.claude-x-v1:0".into()
        }
    );
    assert_eq!(
        r.config.api.base_url,
        "https://bedrock-runtime.eu-west-1.amazonaws.com"
    );
    assert_eq!(r.config.api.api_key.as_ref().unwrap().expose(), "absk-1");
    let r = parse(
        r#"{"prompt":"hi","options":{"provider":{"type":"foundry","resource":"acme"}},"env":{"ANTHROPIC_API_KEY":"sk-1"}}"#,
    )
    .unwrap();
    assert_eq!(r.config.api.base_url, "https://acme.services.ai.azure.com");
    assert!(r.config.api.api_key.is_none());
    let r = parse(
        r#"{"prompt":"hi","options":{"provider":{"type":"google-cloud","projectId":"p","workspaceId":"w"},"authToken":"ya29"}}"#,
    )
    .unwrap();
    assert_eq!(
        r.config.api.platform,
        Platform::GoogleCloud {
            project: "p".into(),
            location: "global".into(),
            workspace: "w".into()
        }
    );
}

#[test]
fn provider_settings_that_are_missing_or_unknown_are_refused() {
    let e = refused(r#"{"provider":"bedrock"}"#, "needs an AWS region");
    assert!(
        e.message
            .contains("provider.region or AWS_REGION / AWS_DEFAULT_REGION"),
        "{}",
        e.message
    );
    // With baseURL and a key the host needs no region; without a key, signing does.
    assert!(parse(
        r#"{"prompt":"hi","options":{"provider":"bedrock","apiKey":"k","baseURL":"http://127.0.0.1:1"}}"#
    )
    .is_ok());
    refused(
        r#"{"provider":"bedrock","baseURL":"http://127.0.0.1:1"}"#,
        "needs an AWS region",
    );
    refused(
        r#"{"provider":{"type":"aws"},"apiKey":"k","baseURL":"http://127.0.0.1:1"}"#,
        "provider.workspaceId or ANTHROPIC_AWS_WORKSPACE_ID",
    );
    refused(
        r#"{"provider":"foundry"}"#,
        "provider.resource or ANTHROPIC_FOUNDRY_RESOURCE",
    );
    refused(
        r#"{"provider":{"type":"vertex","region":"global"}}"#,
        "provider.projectId or ANTHROPIC_VERTEX_PROJECT_ID",
    );
    refused(r#"{"provider":"azure"}"#, "Option provider must be");
    refused(
        r#"{"provider":{"type":"foundry","region":"x"}}"#,
        "no setting \"region\" for \"foundry\"",
    );
    refused(r#"{"provider":"vertex","apiKey":"k"}"#, "takes no apiKey");
}

/// One row of the table of options, `options.json`, as far as the code checks it.
#[derive(serde::Deserialize)]
struct Row {
    name: String,
    default: String,
    #[serde(default)]
    js: Option<String>,
}

fn table() -> Vec<Row> {
    serde_json::from_str(include_str!("options.json")).expect("options.json is a table")
}

#[test]
fn the_code_lists_the_options_of_the_table_in_its_order() {
    let rows = table();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(list::all_names().collect::<Vec<_>>(), names);
    let marked: Vec<(&str, &str)> = rows
        .iter()
        .filter_map(|r| Some((r.name.as_str(), r.js.as_deref()?)))
        .collect();
    let kept: Vec<(&str, &str)> = list::JS_ONLY
        .iter()
        .map(|o| {
            let kind = match o.kind {
                list::JsKind::Any => "any",
                list::JsKind::AbortSignal => "abort_signal",
                list::JsKind::Hook => "hook",
            };
            (o.name, kind)
        })
        .collect();
    assert_eq!(kept, marked);
}

#[test]
fn the_defaults_of_the_table_are_the_ones_applied() {
    let rows = table();
    // The first `code` of a default: the value itself, where it is one.
    let default = |name: &str| -> String {
        let row = rows.iter().find(|r| r.name == name).expect(name);
        let text = row.default.split('`').nth(1).unwrap_or(&row.default);
        text.to_owned()
    };
    let r = parse(r#"{"prompt":"hi","env":{"ANTHROPIC_API_KEY":"k"}}"#).unwrap();
    let c = &r.config;
    assert_eq!(default("maxTokens"), c.max_tokens.to_string());
    assert_eq!(
        default("maxToolIterations"),
        c.max_tool_iterations.to_string()
    );
    assert_eq!(default("maxToolFailures"), c.max_tool_failures.to_string());
    assert_eq!(default("maxRetries"), c.api.max_retries.to_string());
    assert_eq!(default("timeoutMs"), c.api.timeout.as_millis().to_string());
    assert_eq!(
        default("parallelToolCalls"),
        c.parallel_tool_calls.to_string()
    );
    assert_eq!(default("apiThreads"), c.api_threads.to_string());
    assert_eq!(default("apiVersion"), format!("{:?}", c.api.api_version));
    let on_tool_error = match c.on_tool_error {
        OnToolError::Stop => "\"stop\"",
        OnToolError::Continue => "\"continue\"",
    };
    assert_eq!(default("onToolError"), on_tool_error);
    let on_max_iterations = match c.on_max_iterations {
        OnMaxIterations::Error => "\"error\"",
        OnMaxIterations::Answer => "\"answer\"",
    };
    assert_eq!(default("onMaxIterations"), on_max_iterations);
    let ttl = crate::engine::tools::approval::DEFAULT_APPROVAL_TTL.as_millis();
    assert_eq!(default("approvalTtlMs"), ttl.to_string());
    assert_eq!(c.model, DEFAULT_MODEL);
    assert_eq!(default("model"), "ANTHROPIC_MODEL");
    let base_url = rows.iter().find(|r| r.name == "baseURL").unwrap();
    assert!(base_url.default.contains(&format!("`{DEFAULT_BASE_URL}`")));
    assert_eq!(default("approvalSecret"), "ANTHROPIC_TOOL_CALLING_SECRET");
}
