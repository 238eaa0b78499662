//! Names of the Messages API the tests use: its versions, the betas they need, and a block a
//! test puts in a history the way the API sent it.

use serde_json::{json, Value};

/// The API version of the SDKs before their 1.0; the engine sends it when pinned.
pub const LEGACY_VERSION: &str = "2023-06-01";

/// The API version the engine sends by default (the SDKs' since their 1.0).
pub const CURRENT_VERSION: &str = "2026-10-21";

/// The beta of server-side compaction (`compact_20260112`).
pub const COMPACT_BETA: &str = "compact-2026-01-12";

/// The beta the `thread` field needs.
pub const THREADS_BETA: &str = "message-threads-2026-08-12";

/// A compaction block (server-side compaction): `content` the summary (`None`: a failed
/// compaction), with this `encrypted_content`.
pub fn compaction_block(content: Option<&str>, encrypted_content: &str) -> Value {
    json!({ "type": "compaction", "content": content, "encrypted_content": encrypted_content })
}
