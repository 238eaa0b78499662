//! The betas a run's features need, sent in `anthropic-beta` beside the `betas` option's, each
//! once: compaction or clearing edits in `contextManagement`, system-role messages (tool
//! changes) in the prompt, a `task_budget` in `outputConfig`, and `mcpServers`.

use crate::engine::RunConfig;
use serde::Deserialize;

/// Server-side compaction (`compact_20260112` edits).
pub const COMPACTION: &str = "compact-2026-01-12";
/// Context editing (`clear_tool_uses_20250919`, `clear_thinking_20251015` edits).
pub const CONTEXT_EDITING: &str = "context-management-2025-06-27";
/// Mid-conversation tool changes (`role: "system"` messages).
pub const TOOL_CHANGES: &str = "mid-conversation-tool-changes-2026-07-01";

/// Task budgets (`output_config.task_budget`).
pub const TASK_BUDGETS: &str = "task-budgets-2026-03-13";
/// The MCP connector (`mcp_servers` and their `mcp_toolset` tools in `tools`). A newer
/// `mcp-client-2026-09-15` exists, but only for toolsets defined inline in a `tool_addition`,
/// which this loop never sends.
pub const MCP_CONNECTOR: &str = "mcp-client-2025-11-20";

/// The betas the run's features need, in a fixed order. `tool_changes`: the prompt has
/// system-role messages.
pub fn of_features(cfg: &RunConfig, tool_changes: bool) -> Vec<&'static str> {
    #[derive(Deserialize)]
    struct Edit {
        #[serde(rename = "type", default)]
        kind: String,
    }
    #[derive(Deserialize)]
    struct ContextManagement {
        #[serde(default)]
        edits: Vec<Edit>,
    }
    let sent = cfg.sent_field("context_management");
    let edits = sent
        .and_then(|raw| serde_json::from_str::<ContextManagement>(raw.get()).ok())
        .map(|cm| cm.edits)
        .unwrap_or_default();
    let mut out = Vec::new();
    if edits.iter().any(|e| e.kind.starts_with("compact_")) {
        out.push(COMPACTION);
    }
    if edits.iter().any(|e| e.kind.starts_with("clear_")) {
        out.push(CONTEXT_EDITING);
    }
    if tool_changes {
        out.push(TOOL_CHANGES);
    }
    #[derive(Deserialize)]
    struct OutputConfig<'a> {
        #[serde(borrow, default)]
        task_budget: Option<&'a serde_json::value::RawValue>,
    }
    let budgeted = cfg
        .sent_field("output_config")
        .and_then(|raw| serde_json::from_str::<OutputConfig>(raw.get()).ok())
        .is_some_and(|oc| oc.task_budget.is_some_and(|b| b.get() != "null"));
    if budgeted {
        out.push(TASK_BUDGETS);
    }
    if !cfg.mcp_servers.is_empty() {
        out.push(MCP_CONNECTOR);
    }
    out
}
