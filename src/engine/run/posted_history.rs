//! What a posted history may not do. A browser posts the history, so it can hold anything; the
//! rules that keep it from making this server run a tool live in `resume.rs` (every call it
//! leaves waiting needs a decision this package signed) and here: the history is read strictly,
//! one block at a time (a block that cannot be read is refused, never skipped), and no call id
//! appears twice, so one decision can never cover two calls and no reply of a call can reach
//! another.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::run::model_reply::Requested;
use crate::engine::tools::changes::{self, ToolChange, CHANGE_BLOCKS};
use crate::engine::wire::protocol::RawMessage;

#[derive(Deserialize)]
struct MessageView<'a> {
    #[serde(borrow, default)]
    role: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// The fields of a block that calls are made of, each as raw JSON (any type reads).
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: Option<&'a RawValue>,
    /// The tool a `tool_addition` / `tool_removal` block changes.
    #[serde(borrow, default)]
    tool: Option<&'a RawValue>,
    /// The tool changes a `compaction` block stands in for.
    #[serde(borrow, default)]
    tool_changes: Option<&'a RawValue>,
}

/// One content block of the history, as far as calls and their results go.
pub struct Block<'a> {
    /// The block, verbatim.
    pub raw: &'a RawValue,
    /// Its `type`.
    pub kind: String,
    /// `messages[m].content[b]`, for messages.
    pub at: String,
    fields: Fields<'a>,
}

/// One message of the history: its role and, when its content is an array, its blocks.
pub struct Message<'a> {
    /// Its `role`.
    pub role: String,
    /// Its content blocks (none for a string content).
    pub blocks: Vec<Block<'a>>,
}

fn string(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str::<Cow<str>>(raw?.get())
        .ok()
        .map(Cow::into_owned)
}

fn unreadable(at: &str, what: &str) -> RunError {
    RunError::invalid_request(format!(
        "The prompt's history has {what} at {at}. Send the history as the run returned it (data.messages). \
         Nothing was sent and nothing ran."
    ))
}

/// Whether a block of this type is a tool call with an id of its own: the client's `tool_use`,
/// and Anthropic's `server_tool_use` and `mcp_tool_use` (the API wants all of them unique).
fn is_call(kind: &str) -> bool {
    kind == "tool_use" || kind.ends_with("_tool_use")
}

/// Reads message `m` of the history. A string content holds no blocks.
pub fn read(m: usize, message: &RawMessage) -> Result<Message<'_>, RunError> {
    let at = format!("messages[{m}]");
    let view: MessageView = serde_json::from_str(message.get())
        .map_err(|_| unreadable(&at, "a message that cannot be read"))?;
    let role = string(view.role).ok_or_else(|| unreadable(&at, "a message without a role"))?;
    let Some(content) = view.content.filter(|c| !c.get().starts_with('"')) else {
        return Ok(Message {
            role,
            blocks: Vec::new(),
        });
    };
    let raw_blocks: Vec<&RawValue> = serde_json::from_str(content.get()).map_err(|_| {
        unreadable(
            &at,
            "content that is neither a string nor an array of blocks",
        )
    })?;
    let mut blocks = Vec::with_capacity(raw_blocks.len());
    for (b, raw) in raw_blocks.into_iter().enumerate() {
        let at = format!("{at}.content[{b}]");
        let fields: Fields = serde_json::from_str(raw.get())
            .map_err(|_| unreadable(&at, "a content block that cannot be read"))?;
        let kind = string(fields.kind)
            .ok_or_else(|| unreadable(&at, "a content block without a string type"))?;
        blocks.push(Block {
            raw,
            kind,
            at,
            fields,
        });
    }
    Ok(Message { role, blocks })
}

impl Block<'_> {
    /// The id of a call block, which must be a string.
    fn call_id(&self) -> Result<Option<String>, RunError> {
        if !is_call(&self.kind) {
            return Ok(None);
        }
        string(self.fields.id)
            .map(Some)
            .ok_or_else(|| unreadable(&self.at, &format!("a {} without a string id", self.kind)))
    }

    /// A `tool_use` block as the call it asks for: it needs a string id, a string name and an
    /// input. `None` for any other block.
    pub fn tool_use(&self) -> Result<Option<Requested>, RunError> {
        if self.kind != "tool_use" {
            return Ok(None);
        }
        Requested::of(
            string(self.fields.id),
            string(self.fields.name),
            self.fields.input,
        )
        .map(Some)
        .map_err(|_| {
            unreadable(
                &self.at,
                "a tool_use without a string id, a string name or an input",
            )
        })
    }

    /// The call a `tool_result` block answers. `None` for any other block.
    pub fn result_for(&self) -> Result<Option<String>, RunError> {
        if self.kind != "tool_result" {
            return Ok(None);
        }
        string(self.fields.tool_use_id)
            .map(Some)
            .ok_or_else(|| unreadable(&self.at, "a tool_result without a string tool_use_id"))
    }
}

/// The history, read once: its tool call ids, and its last two messages (where a run paused for
/// approval leaves its calls), for `resume.rs` to look at without reading them again.
pub struct CheckedHistory<'a> {
    /// Every tool call id of the history, each a string that appears once.
    pub call_ids: HashSet<String>,
    /// The last message, with its index.
    pub last: Option<(usize, Message<'a>)>,
    /// The message before it, with its index.
    pub before_last: Option<(usize, Message<'a>)>,
    /// The tool changes of its system-role messages and compaction blocks, in order, each with
    /// where it is.
    pub tool_changes: Vec<(String, ToolChange)>,
}

/// Reads the whole history strictly, checking every tool call id to be a string and to appear
/// once.
pub fn read_history(messages: &[RawMessage]) -> Result<CheckedHistory<'_>, RunError> {
    let mut ids = HashSet::new();
    let mut last = None;
    let mut before_last = None;
    let mut changes = Vec::new();
    for (m, message) in messages.iter().enumerate() {
        let message = read(m, message)?;
        read_changes(m, &message, &mut changes)?;
        for block in &message.blocks {
            let Some(id) = block.call_id()? else {
                continue;
            };
            if ids.contains(&id) {
                return Err(RunError::invalid_request(format!(
                    "The prompt's history holds the {} id {id:?} a second time ({}); \
                     each tool call has an id of its own. Send the history as the run returned it (data.messages). \
                     Nothing was sent and nothing ran.",
                    block.kind, block.at
                )));
            }
            ids.insert(id);
        }
        before_last = last.replace((m, message));
    }
    Ok(CheckedHistory {
        call_ids: ids,
        last,
        before_last,
        tool_changes: changes,
    })
}

/// The tool changes message `m` makes. A system-role message holds tool changes and nothing
/// else (instructions go in the `system` option), each readable; an assistant's `compaction`
/// block may carry the changes of the turns it summarised.
fn read_changes(
    m: usize,
    message: &Message,
    out: &mut Vec<(String, ToolChange)>,
) -> Result<(), RunError> {
    if message.role != "system" {
        for block in message.blocks.iter().filter(|b| b.kind == "compaction") {
            let changes =
                changes::of_history_compaction(block.fields.tool_changes).map_err(|what| {
                    unreadable(&block.at, &format!("a compaction block with {what}"))
                })?;
            let at = format!("{}.tool_changes", block.at);
            out.extend(changes.into_iter().map(|c| (at.clone(), c)));
        }
        return Ok(());
    }
    let refuse = |what: String| {
        RunError::invalid_request(format!(
            "The prompt's messages[{m}] has role \"system\", which may only hold tool changes \
             ({} blocks), but {what}. Put instructions in the system option. Nothing was sent.",
            CHANGE_BLOCKS.join(" / ")
        ))
    };
    if message.blocks.is_empty() {
        return Err(refuse(
            "its content is not an array of such blocks".to_owned(),
        ));
    }
    for block in &message.blocks {
        match changes::of_block(&block.kind, block.fields.tool) {
            Ok(Some(change)) => out.push((block.at.clone(), change)),
            Ok(None) if CHANGE_BLOCKS.contains(&block.kind.as_str()) => {}
            Ok(None) => return Err(refuse(format!("{} is a {:?} block", block.at, block.kind))),
            Err(changes::Unreadable) => {
                return Err(unreadable(
                    &block.at,
                    &format!("a {} whose tool cannot be read", block.kind),
                ))
            }
        }
    }
    Ok(())
}

/// A reply's calls join the run's ids; a reply that repeats an id (within itself or from
/// earlier) cannot be answered call by call, and is refused before anything of it runs.
pub fn add_reply_ids(ids: &mut HashSet<String>, calls: &[Requested]) -> Result<(), RunError> {
    for call in calls {
        if !ids.insert(call.id.clone()) {
            return Err(RunError::unknown(
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
        let ids = read_history(&ok).unwrap().call_ids;
        assert!(ids.contains("a") && ids.contains("s"));

        let twice_in_one = history(&[
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}},{"type":"tool_use","id":"a","name":"t","input":{"x":1}}]}"#,
        ]);
        let e = read_history(&twice_in_one).err().unwrap();
        assert_eq!(e.code.as_str(), "invalid_request");
        assert!(e.message.contains("\"a\"") && e.message.contains("messages[0].content[1]"));

        let twice_across = history(&[
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"again"},{"type":"tool_use","id":"a","name":"u","input":{}}]}"#,
        ]);
        assert!(read_history(&twice_across).is_err());
    }

    #[test]
    fn a_block_that_cannot_be_read_is_refused_not_skipped() {
        // A junk block beside a duplicate id must not hide the duplicate.
        for junk in [
            r#"{"type":"text","text":".","id":0}"#,
            r#"{"type":"text","text":".","id":true}"#,
            r#"{"type":"tool_use","id":{},"name":"t","input":{}}"#,
            r#"{"type":7}"#,
            r#"{"type":"text","type":"tool_use","id":"b","name":"t","input":{}}"#,
            r#""a string block""#,
        ] {
            let messages = history(&[&format!(
                r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"a","name":"t","input":{{}}}},{{"type":"tool_use","id":"a","name":"t","input":{{"x":1}}}},{junk}]}}"#
            )]);
            let e = read_history(&messages).err().unwrap();
            assert_eq!(e.code.as_str(), "invalid_request", "{junk}");
        }
        // A text block's id of another type is not a call id, but it must still be readable.
        let text_with_id =
            history(&[r#"{"role":"user","content":[{"type":"text","text":"x","id":0}]}"#]);
        assert!(read_history(&text_with_id).is_ok());
    }

    #[test]
    fn a_tool_use_must_have_an_id_a_name_and_an_input() {
        for bad in [
            r#"{"type":"tool_use","id":"a","name":"t"}"#,
            r#"{"type":"tool_use","id":"a","input":{}}"#,
            r#"{"type":"tool_use","name":"t","input":{}}"#,
            r#"{"type":"tool_use","id":"a","name":5,"input":{}}"#,
        ] {
            let messages = history(&[&format!(r#"{{"role":"assistant","content":[{bad}]}}"#)]);
            let message = read(0, &messages[0]).unwrap();
            assert!(message.blocks[0].tool_use().is_err(), "{bad}");
        }
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
