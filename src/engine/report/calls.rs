//! Each tool call of a run as the developer sees it, and what its tool returned.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

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
