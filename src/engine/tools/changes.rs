//! Mid-conversation tool changes: a `role: "system"` message of `tool_addition` /
//! `tool_removal` blocks changes the tools the model has from that point on, without sending
//! `tools` again (and a `compaction` block's `tool_changes` stand in for the system messages of
//! the turns it summarised). A tool that a change removed is not offered any more: the model
//! calling it is the unknown-tool case. An addition only brings back one of the run's own tools
//! (the `tools` option): the history may have been written by a browser, and never widens what
//! this server runs.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::engine::error::RunError;

/// One change of the tool set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChange {
    /// `tool_addition`: the tool is offered again (if it is one of the run's).
    Added(String),
    /// `tool_removal`: the tool is withdrawn.
    Removed(String),
    /// A `tool_addition` of something other than a reference by name (an inline definition, an
    /// MCP toolset …): this server never runs it, and never lets a history give the API one.
    Foreign(String),
}

/// The block types of a tool change, the only ones a system-role message may hold.
pub const CHANGE_BLOCKS: [&str; 2] = ["tool_addition", "tool_removal"];

/// The `tool` of a change block: a reference by name, or (`tool_addition`) a whole definition.
#[derive(Deserialize)]
struct ChangedTool {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    definition: Option<Definition>,
}

#[derive(Deserialize)]
struct Definition {
    #[serde(default)]
    name: Option<String>,
}

/// A change block whose `tool` cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable;

/// The change a block of type `kind` with this `tool` makes: `Ok(None)` for a block that is
/// not a change, or a change of something that never runs here (an MCP tool reference).
pub fn of_block(kind: &str, tool: Option<&RawValue>) -> Result<Option<ToolChange>, Unreadable> {
    if !CHANGE_BLOCKS.contains(&kind) {
        return Ok(None);
    }
    let tool: ChangedTool =
        serde_json::from_str(tool.ok_or(Unreadable)?.get()).map_err(|_| Unreadable)?;
    let name = match tool.kind.as_str() {
        "tool_reference" => tool.name.ok_or(Unreadable)?,
        _ if kind == "tool_addition" => {
            let what = match tool.definition.and_then(|d| d.name) {
                Some(name) => format!("a {} of {name:?}", tool.kind),
                None => format!("a {:?} tool", tool.kind),
            };
            return Ok(Some(ToolChange::Foreign(what)));
        }
        // Removing what never runs here (an MCP tool …) changes nothing.
        _ => return Ok(None),
    };
    Ok(Some(if kind == "tool_removal" {
        ToolChange::Removed(name)
    } else {
        ToolChange::Added(name)
    }))
}

/// One entry of a compaction block's `tool_changes`: its change (`None`: a change of something
/// that never runs here), or `Unreadable` when it is not a readable `tool_addition` /
/// `tool_removal` block.
fn of_entry(entry: &RawValue) -> Result<Option<ToolChange>, Unreadable> {
    #[derive(Deserialize)]
    struct Change<'a> {
        #[serde(rename = "type")]
        kind: String,
        #[serde(borrow, default)]
        tool: Option<&'a RawValue>,
    }
    let change: Change = serde_json::from_str(entry.get()).map_err(|_| Unreadable)?;
    if !CHANGE_BLOCKS.contains(&change.kind.as_str()) {
        return Err(Unreadable);
    }
    of_block(&change.kind, change.tool)
}

/// The entries of a compaction block's `tool_changes`, or `None` when it is not a list.
fn entries(tool_changes: &RawValue) -> Option<Vec<&RawValue>> {
    serde_json::from_str(tool_changes.get()).ok()
}

/// The changes a `compaction` block's `tool_changes` carry, in order; what cannot be read
/// changes nothing (the block is the API's, sent back as it came).
pub fn of_compaction(tool_changes: Option<&RawValue>) -> Vec<ToolChange> {
    tool_changes
        .and_then(entries)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|e| of_entry(e).ok().flatten())
        .collect()
}

/// A history may change the run's own tools only: an addition must name, by reference, a tool
/// the run offers (`offered`: a client or server tool of this run), else it is refused before
/// anything is sent — the API would take it from the history and offer what this server does
/// not. `changes` are the history's, each with where it is.
pub fn check_history(
    changes: &[(String, ToolChange)],
    offered: impl Fn(&str) -> bool,
) -> Result<(), RunError> {
    for (at, change) in changes {
        let what = match change {
            ToolChange::Added(name) if !offered(name) => {
                format!("adds the tool {name:?}, which this run does not offer")
            }
            ToolChange::Foreign(what) => format!(
                "adds {what}; only a tool_reference to one of this run's tools may be added"
            ),
            _ => continue,
        };
        return Err(RunError::invalid_request(format!(
            "The prompt's history at {at} {what}: a history may only change this run's own tools (the tools and serverTools options). \
             Nothing was sent and nothing ran."
        )));
    }
    Ok(())
}

/// The changes a posted history's `compaction` block carries, read strictly (the history may
/// have been written by a browser): `tool_changes` must be a list of readable
/// `tool_addition` / `tool_removal` blocks; else the error says which entry is not.
pub fn of_history_compaction(tool_changes: Option<&RawValue>) -> Result<Vec<ToolChange>, String> {
    let Some(raw) = tool_changes else {
        return Ok(Vec::new());
    };
    let entries = entries(raw).ok_or_else(|| "tool_changes, which is not a list".to_owned())?;
    let mut out = Vec::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let change = of_entry(entry).map_err(|_| {
            format!("tool_changes[{i}], which is not a readable tool_addition or tool_removal")
        })?;
        out.extend(change);
    }
    Ok(out)
}

/// The tools the conversation's changes have withdrawn so far. Only the run's own tools are
/// ever offered (`round.rs` filters them by this), so a name outside them changes nothing, and
/// an addition can only bring one of them back.
#[derive(Debug, Default)]
pub struct Withdrawn(HashSet<String>);

impl Withdrawn {
    /// Applies `changes`, in order: a removal withdraws a tool, an addition brings it back.
    pub fn apply(&mut self, changes: &[ToolChange]) {
        for change in changes {
            match change {
                ToolChange::Removed(name) => {
                    self.0.insert(name.clone());
                }
                ToolChange::Added(name) => {
                    self.0.remove(name);
                }
                ToolChange::Foreign(_) => {}
            }
        }
    }

    /// Whether the tool was withdrawn.
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn reads_references_and_definitions() {
        let reference = raw(r#"{"type":"tool_reference","name":"a"}"#);
        assert_eq!(
            of_block("tool_removal", Some(&reference)),
            Ok(Some(ToolChange::Removed("a".into())))
        );
        let definition =
            raw(r#"{"type":"tool_definition","definition":{"name":"b","input_schema":{}}}"#);
        assert_eq!(
            of_block("tool_addition", Some(&definition)),
            Ok(Some(ToolChange::Foreign(
                r#"a tool_definition of "b""#.into()
            )))
        );
        let mcp = raw(r#"{"type":"mcp_tool_reference","name":"x"}"#);
        assert_eq!(of_block("tool_removal", Some(&mcp)), Ok(None));
        assert!(matches!(
            of_block("tool_addition", Some(&mcp)),
            Ok(Some(ToolChange::Foreign(_)))
        ));
        assert_eq!(of_block("text", None), Ok(None));
        assert!(of_block("tool_removal", None).is_err());
        assert!(of_block("tool_removal", Some(&raw(r#"{"type":"tool_reference"}"#))).is_err());
        assert!(of_block("tool_addition", Some(&raw("7"))).is_err());
    }

    #[test]
    fn a_history_may_add_only_the_runs_own_tools_by_reference() {
        let ours = |n: &str| n == "a" || n == "web_search";
        let at = |c: ToolChange| vec![("messages[2].content[0]".to_owned(), c)];
        assert!(check_history(&at(ToolChange::Added("a".into())), ours).is_ok());
        assert!(check_history(&at(ToolChange::Added("web_search".into())), ours).is_ok());
        assert!(check_history(&at(ToolChange::Removed("gone".into())), ours).is_ok());
        let e = check_history(&at(ToolChange::Added("web_fetch".into())), ours).unwrap_err();
        assert!(
            e.message.contains("messages[2].content[0]") && e.message.contains("\"web_fetch\""),
            "{}",
            e.message
        );
        let e = check_history(
            &at(ToolChange::Foreign("a tool_definition of \"a\"".into())),
            ours,
        )
        .unwrap_err();
        assert!(e.message.contains("tool_reference"), "{}", e.message);
    }

    #[test]
    fn a_posted_compaction_s_tool_changes_are_read_strictly() {
        let read = |s: &str| of_history_compaction(Some(&raw(s)));
        assert_eq!(
            read(r#"[{"type":"tool_removal","tool":{"type":"tool_reference","name":"a"}}]"#),
            Ok(vec![ToolChange::Removed("a".into())])
        );
        for bad in [
            r#"{"type":"tool_addition"}"#,
            r#"[7]"#,
            r#"[{"type":"text","text":"x"}]"#,
            r#"[{"type":"tool_addition","tool":{"type":"tool_definition","definition":null,"definition":{"name":"evil"}}}]"#,
            r#"[{"type":"tool_addition","tool":{"type":"tool_reference","name":1}}]"#,
            r#"[{"type":"tool_addition","type":"tool_removal","tool":{"type":"tool_reference","name":"a"}}]"#,
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
        assert_eq!(of_history_compaction(None), Ok(Vec::new()));
    }

    #[test]
    fn an_addition_never_widens_the_runs_tools() {
        let mut w = Withdrawn::default();
        w.apply(&[
            ToolChange::Removed("a".into()),
            ToolChange::Removed("b".into()),
            ToolChange::Added("b".into()),
            ToolChange::Added("evil".into()),
        ]);
        assert!(w.contains("a"));
        assert!(!w.contains("b"));
        assert!(!w.contains("evil"));
        let compacted = raw(
            r#"[{"type":"tool_addition","tool":{"type":"tool_reference","name":"a"}},{"type":"junk"},7]"#,
        );
        // Junk beside a change is left out rather than failing the reply.
        assert_eq!(
            of_compaction(Some(&compacted)),
            vec![ToolChange::Added("a".into())]
        );
        assert!(of_compaction(Some(&raw(r#"{"not":"a list"}"#))).is_empty());
        w.apply(&of_compaction(Some(&compacted)));
        assert!(!w.contains("a"));
    }
}
