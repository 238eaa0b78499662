//! One content block of a streamed reply while its deltas arrive: text and thinking appended,
//! citations added, a tool's input pieced together, a compaction's summary assigned, each
//! checked against the block's type.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{StreamEvent, StreamFailure};
use crate::engine::json::ordered_fields::{raw, Fields};

/// One content block while its deltas arrive. Appended text is kept aside and written back
/// once, so a long answer is not re-serialised per delta.
pub(super) struct Block {
    /// The block's members, in the order `content_block_start` gave them.
    pub(super) fields: Fields,
    /// Its `type`.
    pub(super) kind: String,
    /// `text` of a text block or `thinking` of a thinking block, once a delta touched it.
    grown: Option<String>,
    /// The `citations` of a text block, once a delta added one.
    citations: Option<Vec<Box<RawValue>>>,
    /// The `input_json_delta` pieces of a tool block, concatenated.
    input_json: Option<String>,
    /// The input did not parse at `content_block_stop`: fine only if the reply was cut.
    pub(super) cut_input: bool,
}

impl Block {
    /// A block as `message_start` or `content_block_start` gave it.
    pub(super) fn new(fields: Fields) -> Self {
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

    /// Whether deltas of its input may arrive (a client, server or MCP tool call).
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

    /// `content_block_stop`: the input's pieces, joined, become its `input` (or mark it cut),
    /// and what was kept aside is written back.
    pub(super) fn stop(&mut self) {
        if let Some(json) = self.input_json.take() {
            let json = json.trim();
            // Checked, then kept as the model wrote it: re-encoding could reorder keys.
            match RawValue::from_string(if json.is_empty() {
                "{}".into()
            } else {
                json.to_owned()
            }) {
                Ok(input) => self.fields.set("input", input),
                Err(_) => self.cut_input = true,
            }
        }
        self.settle();
    }

    /// Writes the kept-aside members back.
    pub(super) fn settle(&mut self) {
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

/// A `content_block_delta` payload, read loosely: which member matters depends on `type`.
#[derive(Deserialize)]
pub(super) struct Delta {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    partial_json: Option<String>,
    citation: Option<Box<RawValue>>,
    /// A `compaction_delta`'s `content`: a string, or `null` (a compaction that failed). Kept
    /// as written, `null` included, so a delta without it can be told apart.
    #[serde(default, deserialize_with = "present")]
    content: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "present")]
    encrypted_content: Option<Box<RawValue>>,
}

/// A member that is there, whatever its value (`null` too), as written.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// Applies one `content_block_delta` to block `index`, handing `emit` what the caller shows
/// while the reply arrives. A delta that does not fit the block is refused, and one of a type
/// we do not know is never dropped silently: data we cannot place would make the history
/// differ from the non-streamed reply.
pub(super) fn apply_delta(
    block: &mut Block,
    index: usize,
    delta: Delta,
    emit: &mut dyn FnMut(StreamEvent),
) -> Result<(), StreamFailure> {
    let wrong = |block: &Block, delta: &str| {
        StreamFailure::malformed(format!(
            "a {delta} for block {index}, a {} block",
            block.kind
        ))
    };
    let missing =
        |delta: &str, member: &str| StreamFailure::malformed(format!("a {delta} without {member}"));
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
        "compaction_delta" => {
            // The block's final values, not a piece of them: assigned, as the SDK does.
            let content = delta
                .content
                .ok_or_else(|| missing("compaction_delta", "content"))?;
            if block.kind != "compaction" {
                return Err(wrong(block, "compaction_delta"));
            }
            let text = content.get().trim_start();
            if !(text.starts_with('"') || text == "null") {
                return Err(StreamFailure::malformed(
                    "a compaction_delta whose content is neither a string nor null",
                ));
            }
            block.fields.set("content", content);
            if let Some(encrypted) = delta.encrypted_content {
                block.fields.set("encrypted_content", encrypted);
            }
        }
        // Never dropped silently: data we cannot place would make the history differ.
        _ => return Err(StreamFailure::UnknownDelta(delta.kind)),
    }
    Ok(())
}
