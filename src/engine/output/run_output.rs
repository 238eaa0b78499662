//! What a run hands back: the answer, every tool call, the summed usage and the history.

use serde::Serialize;
use serde_json::value::RawValue;

use crate::engine::report::calls::ToolCall;
use crate::engine::report::usage::Usage;
use crate::engine::tools::approval::PendingApproval;
use crate::engine::wire::protocol::{Container, RawMessage};

/// A run that reached an answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutput {
    /// The text blocks of the final reply, joined.
    pub text: String,
    /// The thinking text of the run's replies, in order, joined by a blank line.
    pub reasoning: String,
    /// Every tool call of the run, in order.
    pub tool_calls: Vec<ToolCall>,
    /// The last reply's `stop_reason`, or `approval_required` when calls wait for a person.
    pub stop_reason: String,
    /// Summed over every request.
    pub usage: Usage,
    /// The whole conversation, the final reply included, ready to send again.
    pub messages: Vec<RawMessage>,
    /// Set when `onMaxIterations: "answer"` cut the tool rounds short.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub limit_reached: bool,
    /// The last code-execution container a reply ran in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<Container>,
    /// With `stopReason: "approval_required"`: the calls waiting for a person.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending_approvals: Vec<PendingApproval>,
    /// Every reply's `context_management.applied_edits`, in order; set once a reply had
    /// `context_management` (an empty list: it cleared nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_edits: Option<Vec<Box<RawValue>>>,
    /// With `output`: the answer's value, checked against the schema (the final text, as JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Box<RawValue>>,
    /// The run's id in its store (a durable run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// How many times the run was taken over from a process that stopped (a durable run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed: Option<u32>,
}
