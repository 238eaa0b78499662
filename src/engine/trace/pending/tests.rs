use serde_json::value::RawValue;

use super::content;
use super::server_of;
use crate::engine::wire::protocol::RawMessage;

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).unwrap()
}

#[test]
fn the_server_is_the_base_urls_host_and_port() {
    assert_eq!(
        server_of("https://api.anthropic.com"),
        Some(("api.anthropic.com".to_owned(), 443))
    );
    assert_eq!(
        server_of("http://127.0.0.1:8123/proxy"),
        Some(("127.0.0.1".to_owned(), 8123))
    );
    assert_eq!(server_of("not a url"), None);
}

#[test]
fn messages_become_the_conventions_parts() {
    let history = [
        RawMessage::from(raw(r#"{"role":"user","content":"Where is order 4821?"}"#)),
        RawMessage::from(raw(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"look it up","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"get_order","input":{"id":"4821"}}]}"#,
        )),
        RawMessage::from(raw(
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"shipped"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}"#,
        )),
        RawMessage::from(raw(
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}"#,
        )),
    ];
    let input: serde_json::Value = serde_json::from_str(&content::input(&history)).unwrap();
    assert_eq!(
        input,
        serde_json::json!([
            {"role":"user","parts":[{"type":"text","content":"Where is order 4821?"}]},
            {"role":"assistant","parts":[
                {"type":"reasoning","content":"look it up"},
                {"type":"tool_call","id":"toolu_1","name":"get_order","arguments":{"id":"4821"}}
            ]},
            {"role":"user","parts":[
                {"type":"tool_call_response","id":"toolu_1","response":"shipped"},
                {"type":"uri","modality":"image","uri":"https://x/y.png"}
            ]},
            {"role":"tool","parts":[{"type":"tool_call_response","id":"toolu_1","response":"ok"}]}
        ])
    );
    let output: serde_json::Value = serde_json::from_str(&content::output(
        &raw(r#"[{"type":"text","text":"It shipped."},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}]"#),
        Some("end_turn"),
    ))
    .unwrap();
    assert_eq!(
        output,
        serde_json::json!([{"role":"assistant","parts":[
            {"type":"text","content":"It shipped."},
            {"type":"server_tool_call_response","id":"srvtoolu_1","server_tool_call_response":{"type":"web_search_tool_result"}}
        ],"finish_reason":"end_turn"}])
    );
    let system: serde_json::Value =
        serde_json::from_str(&content::system(&raw(r#""Be brief.""#))).unwrap();
    assert_eq!(
        system,
        serde_json::json!([{"type": "text", "content": "Be brief."}])
    );
}
