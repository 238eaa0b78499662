//! What a run hands back: the answer, every tool call, the summed usage and the history.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::approval::PendingApproval;
use super::protocol::{ApiUsage, Container, RawMessage};

/// One tool call the model asked for, as the developer sees it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The tool the model asked for.
    pub tool_name: String,
    /// The model's input, verbatim.
    pub input: Box<RawValue>,
    /// What the tool returned (`null` when it failed).
    pub output: ToolOutput,
    /// The call failed (or was not run).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The developer's view of a failure: the full message, never sent to the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long the call ran (0 for a call that never ran).
    pub duration_ms: f64,
    /// The call's `tool_use` id.
    pub tool_use_id: String,
    /// Stopped while running (an abort, or a failed sibling in stop mode) on an executor that
    /// runs where the run was started: whether it had really begun is known only there (the Node
    /// binding leaves out those that never did).
    #[serde(skip)]
    pub interrupted: bool,
    /// Whoever called the run already holds the output's value (the Node binding's JS tools
    /// return it in JS), so it need not be handed back.
    #[serde(skip)]
    pub output_held: bool,
}

/// What a tool returned, kept as its executor gave it: building a JSON value of a large output
/// for every call would cost more than the rest of the round, and most records are never
/// serialised (the Node binding hands back the values its tools returned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOutput {
    /// The call failed: `null`.
    None,
    /// A string result.
    Text(String),
    /// Any other result, as JSON text.
    Json(String),
}

impl ToolOutput {
    /// The output as a JSON value (`null` for none, or for JSON text that does not parse).
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            ToolOutput::None => serde_json::Value::Null,
            ToolOutput::Text(text) => serde_json::Value::String(text.clone()),
            ToolOutput::Json(json) => serde_json::from_str(json).unwrap_or(serde_json::Value::Null),
        }
    }
}

impl Serialize for ToolOutput {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolOutput::None => serializer.serialize_unit(),
            ToolOutput::Text(text) => serializer.serialize_str(text),
            ToolOutput::Json(json) => match serde_json::from_str::<&RawValue>(json) {
                Ok(raw) => raw.serialize(serializer),
                Err(_) => serializer.serialize_unit(),
            },
        }
    }
}

/// Token counts summed over every request of a run.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens, not counting those read from or written to the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Adds one response's counts: its top-level usage and the iterations that leave out
    /// (a compaction's tokens are billed, yet not in the top-level fields).
    pub fn add(&mut self, u: &ApiUsage) {
        // Saturating: the counts are the API's (or a gateway's), and a huge one must not wrap
        // the sum round to almost nothing, past the token budget.
        let more = u.iterations.map(|i| i.beyond).unwrap_or_default();
        let add = |sum: &mut u64, top: Option<u64>, iterations: u64| {
            *sum = sum
                .saturating_add(top.unwrap_or(0))
                .saturating_add(iterations);
        };
        add(&mut self.input_tokens, u.input_tokens, more.input_tokens);
        add(&mut self.output_tokens, u.output_tokens, more.output_tokens);
        add(
            &mut self.cache_read_input_tokens,
            u.cache_read_input_tokens,
            more.cache_read_input_tokens,
        );
        add(
            &mut self.cache_creation_input_tokens,
            u.cache_creation_input_tokens,
            more.cache_creation_input_tokens,
        );
    }

    /// Every token counted, input (the cache's included) and output: what a token budget spends.
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }
}

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
}
