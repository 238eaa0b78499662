use super::*;

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

#[test]
fn keeps_every_given_part_as_given_and_extra_body_replaces() {
    let mut cfg = RunConfig::new(None, "http://127.0.0.1:1");
    cfg.model = "m".into();
    cfg.system = Some(raw(
        r#"[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}]"#,
    ));
    cfg.fields.push((
        "thinking",
        raw(r#"{"type":"enabled","budget_tokens":2048}"#),
    ));
    cfg.extra_body.push(("max_tokens".into(), raw("77")));
    cfg.extra_body
        .push(("zeta".into(), raw(r#"{"b":1,"a":2}"#)));
    let tool = raw(r#"{"name":"t","input_schema":{"type":"object"}}"#);
    cfg.server_tools
        .push(raw(r#"{"type":"web_search_20250305","name":"web_search"}"#));
    let messages: Vec<RawMessage> = vec![
        raw(r#"{"role":"user","content":[{"type":"text","text":"hi","z":1,"a":2}]}"#).into(),
        raw(r#"{"role":"assistant","content":"ok"}"#).into(),
    ];
    let choice = raw(r#"{"type":"tool","name":"t"}"#);
    let body = body(
        &cfg,
        &[&tool],
        &messages,
        &Turn {
            tool_choice: Some(&choice),
            container: Some("cont_1"),
            stream: true,
            max_tokens: 4096,
            thread: None,
        },
    );
    assert_eq!(body.len(), body.to_vec().len());
    assert_eq!(
        std::str::from_utf8(&body.to_vec()).unwrap(),
        r#"{"model":"m","system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"tool_choice":{"type":"tool","name":"t"},"tools":[{"name":"t","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],"thinking":{"type":"enabled","budget_tokens":2048},"container":"cont_1","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi","z":1,"a":2}]},{"role":"assistant","content":"ok"}],"max_tokens":77,"zeta":{"b":1,"a":2}}"#
    );
}

#[test]
fn mcp_servers_follow_the_tools_and_their_toolsets_end_the_tools() {
    use crate::engine::wire::api_mcp_servers::McpConnectorServer;
    let mut cfg = RunConfig::new(None, "http://127.0.0.1:1");
    cfg.model = "m".into();
    cfg.server_tools
        .push(raw(r#"{"type":"web_search_20250305","name":"web_search"}"#));
    cfg.mcp_servers = vec![
        McpConnectorServer {
            name: "docs".into(),
            url: "https://docs.example.com/mcp".into(),
            authorization_token: Some("tok-1".into()),
            tools: Some(vec!["search".into()]),
        },
        McpConnectorServer {
            name: "files".into(),
            url: "https://files.example.com/mcp".into(),
            authorization_token: None,
            tools: None,
        },
    ];
    let tool = raw(r#"{"name":"t","input_schema":{"type":"object"}}"#);
    let messages: Vec<RawMessage> = vec![raw(r#"{"role":"user","content":"hi"}"#).into()];
    let turn = Turn {
        tool_choice: None,
        container: None,
        stream: false,
        max_tokens: 9,
        thread: None,
    };
    let sent = body(&cfg, &[&tool], &messages, &turn).to_vec();
    assert_eq!(
        std::str::from_utf8(&sent).unwrap(),
        r#"{"model":"m","max_tokens":9,"tools":[{"name":"t","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"},{"type":"mcp_toolset","mcp_server_name":"docs","default_config":{"enabled":false},"configs":{"search":{"enabled":true}}},{"type":"mcp_toolset","mcp_server_name":"files"}],"mcp_servers":[{"type":"url","url":"https://docs.example.com/mcp","name":"docs","authorization_token":"tok-1"},{"type":"url","url":"https://files.example.com/mcp","name":"files"}],"messages":[{"role":"user","content":"hi"}]}"#
    );
    // Without client or server tools, the toolsets are the tools.
    cfg.server_tools.clear();
    let sent = body(&cfg, &[], &messages, &turn).to_vec();
    let sent = std::str::from_utf8(&sent).unwrap().to_owned();
    assert!(
        sent.contains(r#""tools":[{"type":"mcp_toolset","mcp_server_name":"docs""#),
        "{sent}"
    );
}

#[test]
fn a_continue_leaves_out_system_and_tools_and_a_create_says_so() {
    let mut cfg = RunConfig::new(None, "http://127.0.0.1:1");
    cfg.model = "m".into();
    cfg.system = Some(raw(r#""be brief""#));
    cfg.extra_body
        .push(("system".into(), raw(r#""from extraBody""#)));
    cfg.extra_body.push(("zeta".into(), raw("1")));
    cfg.server_tools
        .push(raw(r#"{"type":"web_search_20250305","name":"web_search"}"#));
    let tool = raw(r#"{"name":"t","input_schema":{"type":"object"}}"#);
    let messages: Vec<RawMessage> = vec![raw(r#"{"role":"user","content":"hi"}"#).into()];
    let mut turn = Turn {
        tool_choice: None,
        container: None,
        stream: false,
        max_tokens: 9,
        thread: Some(ThreadField::Continue("msg_1")),
    };
    let sent = body(&cfg, &[&tool], &messages, &turn).to_vec();
    assert_eq!(
        std::str::from_utf8(&sent).unwrap(),
        r#"{"model":"m","max_tokens":9,"thread":{"type":"continue","previous_message_id":"msg_1"},"messages":[{"role":"user","content":"hi"}],"zeta":1}"#
    );
    turn.thread = Some(ThreadField::Create);
    let sent = body(&cfg, &[&tool], &messages, &turn).to_vec();
    assert_eq!(
        std::str::from_utf8(&sent).unwrap(),
        r#"{"model":"m","max_tokens":9,"tools":[{"name":"t","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],"thread":{"type":"create"},"messages":[{"role":"user","content":"hi"}],"system":"from extraBody","zeta":1}"#
    );
}
