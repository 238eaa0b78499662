//! The reply built from its stream events, the way the official SDK's `MessageStream` builds it,
//! so the assembled content is the same JSON as the non-streamed reply.
//!
//! Each block is kept as its members in the order `content_block_start` gave them (values as
//! written), and deltas only replace or append members. We do not turn on serde_json's
//! `preserve_order` for this: that feature is crate-graph-wide and would change the key order of
//! every `serde_json::Map` in the engine and the test server.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::{to_raw_value, RawValue};

use super::{Failure, StreamEvent};
use crate::engine::protocol::{ApiUsage, Container, MessageResponse};

/// A JSON object as its members in order, each value kept as written.
struct Fields(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Fields;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(member);
                }
                Ok(Fields(members))
            }
        }
        deserializer.deserialize_map(Members)
    }
}

impl Fields {
    fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| &**v)
    }

    /// Replaces a member in place, or appends it (a new key goes last, as in the SDK).
    fn set(&mut self, key: &str, value: Box<RawValue>) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key.to_owned(), value)),
        }
    }

    fn string(&self, key: &str) -> Option<String> {
        self.get(key)
            .and_then(|v| serde_json::from_str(v.get()).ok())
    }

    fn write(&self, out: &mut String) {
        out.push('{');
        for (i, (key, value)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(key).expect("a string serialises"));
            out.push(':');
            out.push_str(value.get());
        }
        out.push('}');
    }
}

/// One content block while its deltas arrive. Appended text is kept aside and written back
/// once, so a long answer is not re-serialised per delta.
struct Block {
    fields: Fields,
    kind: String,
    /// `text` of a text block or `thinking` of a thinking block, once a delta touched it.
    grown: Option<String>,
    citations: Option<Vec<Box<RawValue>>>,
    /// The `input_json_delta` pieces of a tool block, concatenated.
    input_json: Option<String>,
    /// The input did not parse at `content_block_stop`: fine only if the reply was cut.
    cut_input: bool,
}

impl Block {
    fn new(fields: Fields) -> Self {
        let kind = fields.string("type").unwrap_or_default();
        Block {
            fields,
            kind,
            grown: None,
            citations: None,
            input_json: None,
            cut_input: false,
        }
    }

    fn is_tool(&self) -> bool {
        matches!(
            self.kind.as_str(),
            "tool_use" | "server_tool_use" | "mcp_tool_use"
        )
    }

    /// The text member a delta appends to, started from what `content_block_start` gave.
    fn grow(&mut self, key: &str, more: &str) {
        let fields = &self.fields;
        self.grown
            .get_or_insert_with(|| fields.string(key).unwrap_or_default())
            .push_str(more);
    }

    /// Writes the kept-aside members back.
    fn settle(&mut self) {
        if let Some(text) = self.grown.take() {
            let key = if self.kind == "thinking" {
                "thinking"
            } else {
                "text"
            };
            self.fields.set(key, raw(&text));
        }
        if let Some(citations) = self.citations.take() {
            self.fields.set("citations", raw(&citations));
        }
    }
}

fn raw<T: serde::Serialize + ?Sized>(value: &T) -> Box<RawValue> {
    to_raw_value(value).expect("strings and raw JSON always serialise")
}

/// A `content_block_delta` payload, read loosely: which member matters depends on `type`.
#[derive(Deserialize)]
struct Delta {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    partial_json: Option<String>,
    citation: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(rename = "type")]
    kind: String,
    role: String,
    #[serde(default)]
    content: Vec<Fields>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: ApiUsage,
    #[serde(default)]
    container: Option<Container>,
}

/// The `delta` member of `message_delta`.
#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    container: Option<Container>,
}

/// The reply so far.
#[derive(Default)]
pub(super) struct Assembly {
    message: Option<StartMessage>,
    blocks: Vec<Block>,
    /// `message_stop` arrived.
    pub(super) done: bool,
}

fn malformed(what: impl std::fmt::Display) -> Failure {
    Failure::Malformed(what.to_string())
}

fn parse<'a, T: Deserialize<'a>>(event: &str, data: &'a str) -> Result<T, Failure> {
    serde_json::from_str(data).map_err(|e| {
        malformed(format!(
            "the {event} event is not what the Messages API sends ({e})"
        ))
    })
}

impl Assembly {
    /// Applies one event; `emit` gets what the caller forwards while the reply arrives.
    pub(super) fn apply(
        &mut self,
        event: &str,
        data: &str,
        emit: &mut dyn FnMut(StreamEvent),
    ) -> Result<(), Failure> {
        if self.message.is_none() && event != "message_start" {
            return Err(malformed(format!(
                "the stream sent {event} before message_start"
            )));
        }
        match event {
            "message_start" => {
                #[derive(Deserialize)]
                struct Start {
                    message: StartMessage,
                }
                let mut start: Start = parse(event, data)?;
                self.blocks = std::mem::take(&mut start.message.content)
                    .into_iter()
                    .map(Block::new)
                    .collect();
                self.message = Some(start.message);
            }
            "content_block_start" => {
                #[derive(Deserialize)]
                struct Start {
                    index: usize,
                    content_block: Fields,
                }
                let start: Start = parse(event, data)?;
                if start.index != self.blocks.len() {
                    return Err(malformed(format!(
                        "content_block_start has index {} where block {} was next",
                        start.index,
                        self.blocks.len()
                    )));
                }
                let block = Block::new(start.content_block);
                if matches!(block.kind.as_str(), "tool_use" | "server_tool_use") {
                    emit(StreamEvent::ToolInputStart {
                        index: start.index,
                        id: block.fields.string("id").unwrap_or_default(),
                        name: block.fields.string("name").unwrap_or_default(),
                        server: block.kind == "server_tool_use",
                    });
                }
                self.blocks.push(block);
            }
            "content_block_delta" => {
                #[derive(Deserialize)]
                struct Event {
                    index: usize,
                    delta: Delta,
                }
                let Event { index, delta } = parse(event, data)?;
                let block = self.block(index)?;
                apply_delta(block, index, delta, emit)?;
            }
            "content_block_stop" => {
                #[derive(Deserialize)]
                struct Stop {
                    index: usize,
                }
                let Stop { index } = parse(event, data)?;
                let block = self.block(index)?;
                if let Some(json) = block.input_json.take() {
                    let json = json.trim();
                    // Checked, then kept as the model wrote it: re-encoding could reorder keys.
                    match RawValue::from_string(if json.is_empty() {
                        "{}".into()
                    } else {
                        json.to_owned()
                    }) {
                        Ok(input) => block.fields.set("input", input),
                        Err(_) => block.cut_input = true,
                    }
                }
                block.settle();
                emit(StreamEvent::BlockStop { index });
            }
            "message_delta" => {
                #[derive(Deserialize)]
                struct Event {
                    delta: MessageDelta,
                    #[serde(default)]
                    usage: Option<ApiUsage>,
                }
                let Event { delta, usage } = parse(event, data)?;
                let message = self.message.as_mut().expect("checked above");
                if delta.stop_reason.is_some() {
                    message.stop_reason = delta.stop_reason;
                }
                if delta.container.is_some() {
                    message.container = delta.container;
                }
                if let Some(usage) = usage {
                    // Cumulative counts: each one sent replaces ours; one not sent is kept.
                    let u = &mut message.usage;
                    u.input_tokens = usage.input_tokens.or(u.input_tokens);
                    u.output_tokens = usage.output_tokens.or(u.output_tokens);
                    u.cache_creation_input_tokens = usage
                        .cache_creation_input_tokens
                        .or(u.cache_creation_input_tokens);
                    u.cache_read_input_tokens =
                        usage.cache_read_input_tokens.or(u.cache_read_input_tokens);
                }
            }
            "message_stop" => self.done = true,
            _ => {}
        }
        Ok(())
    }

    fn block(&mut self, index: usize) -> Result<&mut Block, Failure> {
        self.blocks
            .get_mut(index)
            .ok_or_else(|| malformed(format!("an event for block {index}, which never started")))
    }

    /// The reply, once `message_stop` has arrived.
    pub(super) fn finish(mut self, request_id: Option<String>) -> Result<MessageResponse, Failure> {
        let message = self
            .message
            .take()
            .ok_or_else(|| malformed("no message_start"))?;
        if message.kind != "message" || message.role != "assistant" {
            return Err(malformed(format!(
                "message_start has type {:?} and role {:?}, expected \"message\" and \"assistant\"",
                message.kind, message.role
            )));
        }
        let truncated = matches!(
            message.stop_reason.as_deref(),
            Some("max_tokens" | "model_context_window_exceeded")
        );
        let mut content = String::from("[");
        for (i, block) in self.blocks.iter_mut().enumerate() {
            if block.cut_input {
                // A reply cut mid-input: the loop never runs such a call and ends with
                // output_truncated, so `{}` (what the SDK's partial parse yields at worst) will do.
                if !truncated {
                    return Err(malformed(format!(
                        "the input of block {i} ({}) is not valid JSON",
                        block.kind
                    )));
                }
                block.fields.set("input", raw(&serde_json::Map::new()));
            }
            // A block left open (no content_block_stop) still gets its deltas.
            block.settle();
            if i > 0 {
                content.push(',');
            }
            block.fields.write(&mut content);
        }
        content.push(']');
        Ok(MessageResponse {
            kind: message.kind,
            role: message.role,
            content: RawValue::from_string(content).map_err(malformed)?,
            stop_reason: message.stop_reason,
            usage: message.usage,
            container: message.container,
            request_id,
        })
    }
}

fn apply_delta(
    block: &mut Block,
    index: usize,
    delta: Delta,
    emit: &mut dyn FnMut(StreamEvent),
) -> Result<(), Failure> {
    let wrong = |block: &Block, delta: &str| {
        malformed(format!(
            "a {delta} for block {index}, a {} block",
            block.kind
        ))
    };
    let missing = |delta: &str, member: &str| malformed(format!("a {delta} without {member}"));
    match delta.kind.as_str() {
        "text_delta" => {
            let text = delta.text.ok_or_else(|| missing("text_delta", "text"))?;
            if block.kind != "text" {
                return Err(wrong(block, "text_delta"));
            }
            block.grow("text", &text);
            if !text.is_empty() {
                emit(StreamEvent::TextDelta { index, text });
            }
        }
        "thinking_delta" => {
            let text = delta
                .thinking
                .ok_or_else(|| missing("thinking_delta", "thinking"))?;
            if block.kind != "thinking" {
                return Err(wrong(block, "thinking_delta"));
            }
            block.grow("thinking", &text);
            if !text.is_empty() {
                emit(StreamEvent::ReasoningDelta { index, text });
            }
        }
        "signature_delta" => {
            let signature = delta
                .signature
                .ok_or_else(|| missing("signature_delta", "signature"))?;
            if block.kind != "thinking" {
                return Err(wrong(block, "signature_delta"));
            }
            block.fields.set("signature", raw(&signature));
        }
        "citations_delta" => {
            let citation = delta
                .citation
                .ok_or_else(|| missing("citations_delta", "citation"))?;
            if block.kind != "text" {
                return Err(wrong(block, "citations_delta"));
            }
            let fields = &block.fields;
            block
                .citations
                .get_or_insert_with(|| {
                    fields
                        .get("citations")
                        .and_then(|c| serde_json::from_str(c.get()).ok())
                        .unwrap_or_default()
                })
                .push(citation);
        }
        "input_json_delta" => {
            let partial = delta
                .partial_json
                .ok_or_else(|| missing("input_json_delta", "partial_json"))?;
            if !block.is_tool() {
                return Err(wrong(block, "input_json_delta"));
            }
            block
                .input_json
                .get_or_insert_with(String::new)
                .push_str(&partial);
            if !partial.is_empty() {
                emit(StreamEvent::ToolInputDelta {
                    index,
                    id: block.fields.string("id").unwrap_or_default(),
                    partial_json: partial,
                });
            }
        }
        // Never dropped silently: data we cannot place would make the history differ.
        _ => return Err(Failure::UnknownDelta(delta.kind)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies `(event, data)` pairs and returns the assembled content, or the failure.
    fn assemble(events: &[(&str, String)]) -> Result<MessageResponse, Failure> {
        let mut reply = Assembly::default();
        for (name, data) in events {
            reply.apply(name, data, &mut |_| {})?;
        }
        reply.finish(None)
    }

    fn start() -> (&'static str, String) {
        (
            "message_start",
            r#"{"message":{"type":"message","role":"assistant","content":[],"usage":{"input_tokens":3}}}"#.into(),
        )
    }

    fn ev(name: &'static str, data: &str) -> (&'static str, String) {
        (name, data.to_owned())
    }

    #[test]
    fn deltas_replace_members_in_place_and_new_ones_go_last() {
        let reply = assemble(&[
            start(),
            ev("content_block_start", r#"{"index":0,"content_block":{"type":"thinking","thinking":"","signature":"","z":1}}"#),
            ev("content_block_delta", r#"{"index":0,"delta":{"type":"thinking_delta","thinking":"a \"b\""}}"#),
            ev("content_block_delta", r#"{"index":0,"delta":{"type":"signature_delta","signature":"s1"}}"#),
            ev("content_block_stop", r#"{"index":0}"#),
            ev("content_block_start", r#"{"index":1,"content_block":{"type":"text","text":"pre-"}}"#),
            ev("content_block_delta", r#"{"index":1,"delta":{"type":"text_delta","text":"é"}}"#),
            ev("content_block_delta", r#"{"index":1,"delta":{"type":"citations_delta","citation":{"n":1}}}"#),
            ev("content_block_delta", r#"{"index":1,"delta":{"type":"citations_delta","citation":{"n":2}}}"#),
            ev("content_block_stop", r#"{"index":1}"#),
            ev("message_delta", r#"{"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#),
            ev("message_stop", "{}"),
        ])
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            reply.content.get(),
            r#"[{"type":"thinking","thinking":"a \"b\"","signature":"s1","z":1},{"type":"text","text":"pre-é","citations":[{"n":1},{"n":2}]}]"#
        );
        assert_eq!(reply.usage.input_tokens, Some(3));
        assert_eq!(reply.usage.output_tokens, Some(9));
        assert_eq!(reply.stop_reason.as_deref(), Some("end_turn"));
    }

    #[test]
    fn a_delta_that_does_not_fit_its_block_is_refused() {
        let failure = assemble(&[
            start(),
            ev(
                "content_block_start",
                r#"{"index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ev(
                "content_block_delta",
                r#"{"index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
            ),
        ]);
        assert!(matches!(failure, Err(Failure::Malformed(_))));
        let failure = assemble(&[
            start(),
            ev(
                "content_block_delta",
                r#"{"index":0,"delta":{"type":"text_delta","text":"x"}}"#,
            ),
        ]);
        assert!(matches!(failure, Err(Failure::Malformed(_))));
        let failure = assemble(&[
            start(),
            ev(
                "content_block_start",
                r#"{"index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ev(
                "content_block_delta",
                r#"{"index":0,"delta":{"type":"compaction_delta","content":"x"}}"#,
            ),
        ]);
        assert!(matches!(failure, Err(Failure::UnknownDelta(k)) if k == "compaction_delta"));
    }

    #[test]
    fn events_before_message_start_are_refused() {
        let mut reply = Assembly::default();
        let failure = reply.apply("content_block_stop", r#"{"index":0}"#, &mut |_| {});
        assert!(matches!(failure, Err(Failure::Malformed(_))));
        // Unknown event names and pings are ignored once the message started.
        reply
            .apply("message_start", &start().1, &mut |_| {})
            .unwrap();
        reply.apply("ping", "{}", &mut |_| {}).unwrap();
        reply
            .apply("x_future_event", "not even JSON", &mut |_| {})
            .unwrap();
    }
}
