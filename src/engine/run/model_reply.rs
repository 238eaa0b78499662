//! Reading the model's reply: its text, its thinking and the client tool calls it asks for. The
//! rule of a complete `tool_use` (an id, a name, an input) lives here, for the reply and for a
//! posted history alike; each reader says in its own words what is wrong.

use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::report::usage::ApiUsage;
use crate::engine::report::usage::Usage;
use crate::engine::run::stop::StopReason;
use crate::engine::tools::changes::{self, ToolChange};
use crate::engine::wire::protocol::ContentBlock;

/// A `tool_use` block: the client tool call the model asks for.
#[derive(Clone)]
pub struct Requested {
    /// The block's `id`, which its `tool_result` names.
    pub id: String,
    /// The tool asked for.
    pub name: String,
    /// The model's input, verbatim.
    pub input: Box<RawValue>,
}

/// The field a `tool_use` block lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// No (string) `id`.
    Id,
    /// No (string) `name`.
    Name,
    /// No `input`.
    Input,
}

impl Requested {
    /// The call a `tool_use` block asks for, if it has all three of an id, a name and an input;
    /// else the first of them it lacks.
    pub fn of<S: Into<String>>(
        id: Option<S>,
        name: Option<S>,
        input: Option<&RawValue>,
    ) -> Result<Requested, Missing> {
        let id = id.ok_or(Missing::Id)?;
        let name = name.ok_or(Missing::Name)?;
        let input = input.ok_or(Missing::Input)?;
        Ok(Requested {
            id: id.into(),
            name: name.into(),
            input: input.to_owned(),
        })
    }
}

/// One reply of the model, read.
pub struct Reply {
    /// Its content blocks, verbatim (a paused server-tool turn's blocks first).
    pub content: Box<RawValue>,
    /// Its text blocks, joined.
    pub text: String,
    /// Its non-empty thinking blocks (the conversation moves them into the run's reasoning).
    pub thinking: Vec<String>,
    /// How many non-empty thinking blocks it has (set by the conversation once it took them).
    pub thoughts: usize,
    /// It holds a compaction block with a summary: the history before it is summarised away.
    pub compacted: bool,
    /// Its own response (not a paused part before it) paused after a compaction that
    /// summarised the history (set by the conversation).
    pub fresh_summary: bool,
    /// Its client tool calls, in order.
    pub requested: Vec<Requested>,
    /// The tool changes its `compaction` blocks carry, in order.
    pub tool_changes: Vec<ToolChange>,
    /// What the loop does next.
    pub stop: StopReason,
    /// `stop_reason` as the API wrote it, `""` without one.
    pub stop_reason: String,
    /// The tokens of this reply alone.
    pub usage: Usage,
}

impl Reply {
    /// Reads a reply's `content`, with the `stop_reason` and usage of its response.
    pub fn read(
        content: Box<RawValue>,
        stop_reason: Option<String>,
        usage: &ApiUsage,
    ) -> Result<Reply, RunError> {
        let (blocks, requested) = read_content(&content)?;
        let mut text = String::new();
        let mut thinking = Vec::new();
        let mut changes = Vec::new();
        let mut compacted = false;
        for block in blocks {
            match block.kind.as_ref() {
                "compaction" => {
                    compacted |= block.content.is_some_and(|c| c.get() != "null");
                    changes.extend(changes::of_compaction(block.tool_changes));
                }
                "text" => text.push_str(block.text.as_deref().unwrap_or_default()),
                "thinking" => {
                    if let Some(t) = block.thinking.filter(|t| !t.is_empty()) {
                        thinking.push(t);
                    }
                }
                _ => {}
            }
        }
        let mut step_usage = Usage::default();
        step_usage.add(usage);
        Ok(Reply {
            text,
            thinking,
            requested,
            tool_changes: changes,
            thoughts: 0,
            compacted,
            fresh_summary: false,
            stop: StopReason::of(stop_reason.as_deref()),
            stop_reason: stop_reason.unwrap_or_default(),
            usage: step_usage,
            content,
        })
    }

    /// Whether the reply asks for client tools.
    pub fn asks_for_tools(&self) -> bool {
        !self.requested.is_empty()
    }
}

/// Whether a content array holds a compaction block with a summary (content not null).
pub fn summarises(content: &RawValue) -> bool {
    serde_json::from_str::<Vec<ContentBlock>>(content.get()).is_ok_and(|blocks| {
        blocks
            .iter()
            .any(|b| b.kind == "compaction" && b.content.is_some_and(|c| c.get() != "null"))
    })
}

/// The names of the tools `calls` ask for, for messages.
pub fn tool_names(calls: &[Requested]) -> String {
    let names: Vec<&str> = calls.iter().map(|r| r.name.as_str()).collect();
    names.join(", ")
}

/// Reads a reply's content: its blocks, and the `tool_use` calls among them.
pub(crate) fn read_content(
    content: &RawValue,
) -> Result<(Vec<ContentBlock<'_>>, Vec<Requested>), RunError> {
    let blocks: Vec<ContentBlock> = serde_json::from_str(content.get()).map_err(|e| {
        RunError::unknown(
            // Where, not what: serde's message can quote the reply's text, which is the API's.
            format!(
                "The model's reply has content blocks that cannot be read ({:?} error at line {}, column {}).",
                e.classify(),
                e.line(),
                e.column()
            ),
        )
    })?;
    let requested = tool_uses(&blocks)?;
    Ok((blocks, requested))
}

/// The client `tool_use` blocks of a reply, each complete. (`server_tool_use` blocks are
/// Anthropic's to run and get no result from us.)
fn tool_uses(blocks: &[ContentBlock]) -> Result<Vec<Requested>, RunError> {
    let mut out = Vec::new();
    for (i, block) in blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.kind == "tool_use")
    {
        let call = Requested::of(block.id.as_deref(), block.name.as_deref(), block.input)
            .map_err(|_| {
                RunError::unknown(
                    format!("The model's reply has a tool_use block (content.{i}) without an id, a name or an input."),
                )
            })?;
        out.push(call);
    }
    Ok(out)
}
