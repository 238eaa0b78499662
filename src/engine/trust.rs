//! What a posted history may not do. A browser posts the history, so it can hold anything; the
//! rules that keep it from making this server run a tool live in `resume.rs` (every call it
//! leaves waiting needs a decision this package signed) and here: no `tool_use` id appears twice,
//! so one decision can never cover two calls and no reply of a call can reach another.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::error::{ErrorCode, RunError};
use super::protocol::RawMessage;
use super::round::Requested;

#[derive(Deserialize)]
struct MessageView<'a> {
    #[serde(borrow)]
    content: &'a RawValue,
}

#[derive(Deserialize)]
struct BlockView<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
}

/// Whether a block of this type is a tool call with an id of its own: the client's `tool_use`,
/// and Anthropic's `server_tool_use` and `mcp_tool_use` (the API wants all of them unique).
fn is_call(kind: &str) -> bool {
    kind == "tool_use" || kind.ends_with("_tool_use")
}

/// Every tool call id of the history, checked to appear once. A message the engine cannot read
/// as blocks (a string content, or one the API will refuse) holds no call for it.
pub fn call_ids(messages: &[RawMessage]) -> Result<HashSet<String>, RunError> {
    let mut ids = HashSet::new();
    for (m, message) in messages.iter().enumerate() {
        let Ok(view) = serde_json::from_str::<MessageView>(message.get()) else {
            continue;
        };
        let Ok(blocks) = serde_json::from_str::<Vec<BlockView>>(view.content.get()) else {
            continue;
        };
        for (b, block) in blocks.iter().enumerate() {
            let (Some(kind), Some(id)) = (&block.kind, &block.id) else {
                continue;
            };
            if is_call(kind) && !ids.insert(id.clone().into_owned()) {
                return Err(RunError::invalid_request(format!(
                    "The prompt's history holds the {kind} id {id:?} a second time (messages[{m}].content[{b}]); \
                     each tool call has an id of its own. Send the history as the run returned it (data.messages). \
                     Nothing was sent and nothing ran."
                )));
            }
        }
    }
    Ok(ids)
}

/// A reply's calls join the run's ids; a reply that repeats an id (within itself or from
/// earlier) cannot be answered call by call, and is refused before anything of it runs.
pub fn add_reply_ids(ids: &mut HashSet<String>, calls: &[Requested]) -> Result<(), RunError> {
    for call in calls {
        if !ids.insert(call.id.clone()) {
            return Err(RunError::new(
                ErrorCode::UnknownError,
                format!(
                    "The model's reply has a tool_use id that is already in the conversation ({:?}, {}); none of its calls was run.",
                    call.id, call.name
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(json: &[&str]) -> Vec<RawMessage> {
        json.iter()
            .map(|m| RawMessage::from(RawValue::from_string((*m).to_owned()).unwrap()))
            .collect()
    }

    #[test]
    fn an_id_twice_anywhere_is_refused() {
        let ok = history(&[
            r#"{"role":"user","content":"hi"}"#,
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}},{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}"#,
        ]);
        let ids = call_ids(&ok).unwrap();
        assert!(ids.contains("a") && ids.contains("s"));

        let twice_in_one = history(&[
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}},{"type":"tool_use","id":"a","name":"t","input":{"x":1}}]}"#,
        ]);
        let e = call_ids(&twice_in_one).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidRequest);
        assert!(e.message.contains("\"a\"") && e.message.contains("messages[0].content[1]"));

        let twice_across = history(&[
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"again"},{"type":"tool_use","id":"a","name":"u","input":{}}]}"#,
        ]);
        assert!(call_ids(&twice_across).is_err());
    }

    #[test]
    fn a_reply_may_not_reuse_an_id() {
        let mut ids: HashSet<String> = ["a".to_owned()].into();
        let call = |id: &str| Requested {
            id: id.to_owned(),
            name: "t".to_owned(),
            input: RawValue::from_string("{}".to_owned()).unwrap(),
        };
        assert!(add_reply_ids(&mut ids, &[call("b")]).is_ok());
        assert!(add_reply_ids(&mut ids, &[call("a")]).is_err());
        assert!(add_reply_ids(&mut ids, &[call("c"), call("c")]).is_err());
    }
}
