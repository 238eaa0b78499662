//! The API versions (`anthropic-version`) this server speaks, and what the newer one refuses
//! that the older one takes: the sampling fields `temperature`, `top_p` and `top_k`, a
//! `document` block directly in an assistant message, and a text block with non-empty
//! `citations` anywhere in a user message (in a `search_result`, a `tool_result`'s content, a
//! document's own content). Documents nested in other blocks (a web fetch result the model sent)
//! and `citations: { enabled: true }` on documents and search results stay accepted.

use serde_json::Value;

/// The version before the removals.
pub const LEGACY: &str = "2023-06-01";

/// The version that made the removals, which the official SDKs send since their 1.0.
pub const CURRENT: &str = "2026-10-21";

/// The versions this server answers; the API refuses any other with a 400.
pub const VERSIONS: &[&str] = &[LEGACY, CURRENT];

/// The request fields [`CURRENT`] removed.
pub const REMOVED_FIELDS: &[&str] = &["temperature", "top_p", "top_k"];

/// Whether `version` made the removals.
pub fn has_removals(version: &str) -> bool {
    version == CURRENT
}

/// The refusal of a version this server does not speak.
pub fn unknown_version(version: &str) -> String {
    format!(
        "anthropic-version: \"{version}\" is not a valid version (this test server speaks {})",
        VERSIONS.join(" and ")
    )
}

/// A removed top-level field, in the words the API refuses any field it does not take.
pub fn removed_field(key: &str) -> String {
    format!("{key}: Extra inputs are not permitted")
}

/// A block at `at` that an assistant message may not hold directly under `version`.
pub fn assistant_block_problem(block: &Value, at: &str, version: &str) -> Option<String> {
    (has_removals(version) && block["type"] == "document")
        .then(|| format!("{at}: `document` blocks can only be in `user` messages"))
}

/// Every text block with non-empty `citations` in a user message's `blocks` (message `n`),
/// refused under `version` when it made the removals.
pub fn user_citations(blocks: &[Value], n: usize, version: &str) -> Vec<String> {
    if !has_removals(version) {
        return Vec::new();
    }
    let mut found = Vec::new();
    for (m, block) in blocks.iter().enumerate() {
        cited(block, &format!("messages.{n}.content.{m}"), &mut found);
    }
    found
        .into_iter()
        .map(|at| {
            format!(
                "{at}.citations: `citations` on `text` blocks can only be in `assistant` messages"
            )
        })
        .collect()
}

/// The places, within `block` at `at`, of text blocks with non-empty `citations`.
fn cited(block: &Value, at: &str, found: &mut Vec<String>) {
    let inner = |key: &str| block[key].as_array().cloned().unwrap_or_default();
    match block["type"].as_str() {
        Some("text") if block["citations"].as_array().is_some_and(|c| !c.is_empty()) => {
            found.push(at.to_owned());
        }
        Some("search_result" | "tool_result") => {
            for (k, item) in inner("content").iter().enumerate() {
                cited(item, &format!("{at}.content.{k}"), found);
            }
        }
        Some("document") => {
            let own = block["source"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for (k, item) in own.iter().enumerate() {
                cited(item, &format!("{at}.source.content.content.{k}"), found);
            }
        }
        _ => {}
    }
}
