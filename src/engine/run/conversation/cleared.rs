//! What context editing cleared: the `clear_tool_uses_…` edits of a reply's
//! `context_management.applied_edits` say how many tool uses, oldest first, the API cleared from
//! the request; their calls no longer count as ones whose result the model has.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::engine::run::posted_history;
use crate::engine::wire::protocol::RawMessage;

/// How many tool uses the applied edits cleared.
pub(super) fn cleared_tool_uses(edits: &[Box<RawValue>]) -> usize {
    #[derive(Deserialize)]
    struct Edit<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: std::borrow::Cow<'a, str>,
        #[serde(default)]
        cleared_tool_uses: Option<u64>,
    }
    edits
        .iter()
        .filter_map(|e| serde_json::from_str::<Edit>(e.get()).ok())
        .filter(|e| e.kind.starts_with("clear_tool_uses"))
        .map(|e| e.cleared_tool_uses.unwrap_or(0) as usize)
        .fold(0, usize::saturating_add)
}

/// The ids of the first `n` `tool_use` blocks of the history sent: the ones the API cleared.
pub(super) fn oldest_calls(messages: &[RawMessage], n: usize) -> HashSet<String> {
    let mut out = HashSet::new();
    for (m, message) in messages.iter().enumerate() {
        let Ok(message) = posted_history::read(m, message) else {
            continue;
        };
        for block in &message.blocks {
            if out.len() >= n {
                return out;
            }
            if let Ok(Some(call)) = block.tool_use() {
                out.insert(call.id);
            }
        }
    }
    out
}
