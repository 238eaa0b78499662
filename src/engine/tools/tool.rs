//! Tools: their definitions (checked and compiled once) and the trait the loop calls them through.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use jsonschema::Validator;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::engine::tools::schema;

/// Whether a call must wait for a person. `needsApproval: true` is
/// [`Always`](crate::engine::tools::approval::Always); a JS function is asked through the binding.
pub trait ApprovalPolicy: Send + Sync {
    /// Whether `call` must wait for a person's yes before it runs.
    fn needs_approval(&self, call: ToolInvocation) -> Pin<Box<dyn Future<Output = bool> + Send>>;
}

/// One call of a tool, as handed to its executor.
pub struct ToolInvocation {
    /// The call's `tool_use` id.
    pub tool_use_id: String,
    /// The model's input as JSON text, already validated against the tool's schema.
    pub input: Arc<RawValue>,
    /// Which attempt this is: 1, or 2, 3 … when a run taken over from a process that stopped
    /// runs a call again that had started there.
    pub attempt: u32,
    /// The key a tool should make its effect idempotent by: `<runId>:<toolUseId>` in a durable
    /// run, the `tool_use` id otherwise. The same on every attempt.
    pub idempotency_key: String,
}

/// How a tool call ended, as the executor reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// A result. `json`: `content` is JSON text (an object, array, number…); else a plain string.
    Output {
        /// The result, as text.
        content: String,
        /// `content` is JSON text.
        json: bool,
    },
    /// Content blocks (text, image, document, search_result…) as a JSON array, sent as the
    /// `tool_result` content as they are (`toolResult(blocks)` in JS).
    Blocks(String),
    /// The tool's own words for the model (`throw new ToolError(msg)`), sent verbatim.
    ToolError(String),
    /// Anything else that went wrong; the message is for the developer, never the model.
    Failed(String),
    /// The executor's own check of the input refused it (a Standard Schema's refinements, run in
    /// JS after the JSON Schema passed): one `field: reason` line per problem. Reported exactly
    /// like input that fails the JSON Schema (`tool_validation_error`, or `is_error` for the model).
    InvalidInput(Vec<String>),
}

/// What is left of a call's time when the engine's timer for it (`toolTimeoutMs`) runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeLeft {
    /// None: the call timed out.
    None,
    /// The tool began later than the engine's timer did (it waited for its thread): its time
    /// runs until then.
    Until(std::time::Instant),
    /// The tool finished in time and its result is on its way (queued on a busy thread): wait
    /// for it.
    Finished,
}

/// A boxed future of a tool's outcome.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'static>>;

/// What runs a tool. The Node binding implements it with a `ThreadsafeFunction`; Rust tests with
/// plain closures. Dropping the returned future means the run no longer wants the result
/// (timeout, abort, a stop-mode sibling failed): the work must then not start if it has not
/// yet, and should be told to stop if it has (the Node binding aborts `ctx.signal`).
pub trait ToolExecutor: Send + Sync {
    /// Starts the call; the future is its outcome.
    fn execute(&self, call: ToolInvocation) -> ToolFuture;

    /// Whether this executor's `json: true` outputs are JSON by construction (the Node binding's
    /// come from `JSON.stringify`), so the engine need not parse each one to check it.
    fn json_is_trusted(&self) -> bool {
        false
    }

    /// Whether the tool runs where the run was started (the Node binding's JS tools): that side
    /// then sees each call start by itself and already holds each output value, so the run's
    /// events do not tell the start and its records leave the output out rather than copy it.
    fn runs_in_caller(&self) -> bool {
        false
    }

    /// Asked when the engine's timer for call `tool_use_id` has run for `limit`. An executor
    /// whose tool runs on another thread (the Node binding: the JS thread) knows when the tool
    /// really began and finished, and a call that finished within `limit` by that clock is not a
    /// timeout, however late its result reaches the engine.
    fn time_left(&self, _tool_use_id: &str, _limit: std::time::Duration) -> TimeLeft {
        TimeLeft::None
    }
}

impl<F, Fut> ToolExecutor for F
where
    F: Fn(ToolInvocation) -> Fut + Send + Sync,
    Fut: Future<Output = ToolOutcome> + Send + 'static,
{
    fn execute(&self, call: ToolInvocation) -> ToolFuture {
        Box::pin(self(call))
    }
}

/// A checked tool definition: its name, the definition as sent to the API, its compiled schema.
#[derive(Clone)]
pub struct ToolSpec {
    /// The tool's name, checked to be one the API accepts.
    pub name: String,
    /// The definition exactly as given, sent to the API verbatim.
    pub definition: Arc<RawValue>,
    /// Its `input_schema`, compiled.
    pub validator: Arc<Validator>,
}

/// A defined tool: its checked definition and what runs it.
#[derive(Clone)]
pub struct Tool {
    /// The tool's name, checked to be one the API accepts.
    pub name: String,
    /// The definition exactly as given, sent to the API verbatim.
    pub definition: Arc<RawValue>,
    /// Its `input_schema`, compiled: every input is checked against it before the tool runs.
    pub validator: Arc<Validator>,
    /// What runs its calls.
    pub executor: Arc<dyn ToolExecutor>,
    /// Set when calls may need a person's yes first (`needsApproval`).
    pub approval: Option<Arc<dyn ApprovalPolicy>>,
    /// A call of it that started in a process that stopped is told to the model as
    /// interrupted rather than run again (`onInterrupted: "report"`).
    pub report_interrupted: bool,
}

impl ToolSpec {
    /// This definition, run by `executor`.
    pub fn bind(&self, executor: Arc<dyn ToolExecutor>) -> Tool {
        Tool {
            name: self.name.clone(),
            definition: self.definition.clone(),
            validator: self.validator.clone(),
            executor,
            approval: None,
            report_interrupted: false,
        }
    }
}

impl Tool {
    /// This tool, its calls asking `policy` whether they need a person's yes first.
    pub fn with_approval(mut self, policy: Arc<dyn ApprovalPolicy>) -> Tool {
        self.approval = Some(policy);
        self
    }
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Tool names the API accepts.
pub fn valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Tool {
    /// Checks a definition and binds it to `executor` (see [`ToolSpec::new`]).
    pub fn new(definition: &str, executor: Arc<dyn ToolExecutor>) -> Result<Tool, String> {
        Ok(ToolSpec::new(definition)?.bind(executor))
    }
}

impl ToolSpec {
    /// Checks a definition (`{ name, description?, input_schema }` as JSON text) and compiles its
    /// schema. The error names the field and the reason.
    pub fn new(definition: &str) -> Result<ToolSpec, String> {
        let value: Value = serde_json::from_str(definition)
            .map_err(|e| format!("definition is not valid JSON: {e}"))?;
        let Value::Object(def) = &value else {
            return Err("definition must be an object { name, description, input_schema }".into());
        };
        let name = match def.get("name") {
            None => return Err("definition.name is missing".into()),
            Some(Value::String(n)) if valid_name(n) => n.clone(),
            Some(Value::String(n)) => {
                return Err(format!(
                    "definition.name {n:?} must match ^[a-zA-Z0-9_-]{{1,128}}$ (letters, digits, _ and -, 1 to 128 of them)"
                ))
            }
            Some(other) => return Err(format!("definition.name must be a string, got {}", kind_of(other))),
        };
        if let Some(d) = def.get("description") {
            if !d.is_string() {
                return Err(format!(
                    "definition.description of {name} must be a string, got {}",
                    kind_of(d)
                ));
            }
        }
        let schema = match def.get("input_schema") {
            None => {
                return Err(format!(
                "definition.input_schema of {name} is missing (a JSON Schema with type \"object\")"
            ))
            }
            Some(s @ Value::Object(_)) => s,
            Some(other) => {
                return Err(format!(
                    "definition.input_schema of {name} must be an object, got {}",
                    kind_of(other)
                ))
            }
        };
        match schema.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => {
                return Err(format!(
                    "definition.input_schema.type of {name} must be \"object\", got {other}"
                ))
            }
            None => {
                return Err(format!(
                    "definition.input_schema.type of {name} is missing; it must be \"object\""
                ))
            }
        }
        let validator = schema::compile(schema)
            .map_err(|why| format!("definition.input_schema of {name} does not compile: {why}"))?;
        let definition: Box<RawValue> = RawValue::from_string(definition.to_owned())
            .map_err(|e| format!("definition is not valid JSON: {e}"))?;
        Ok(ToolSpec {
            name,
            definition: Arc::from(definition),
            validator: Arc::new(validator),
        })
    }
}

/// The JSON type of a value, for messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() -> Arc<dyn ToolExecutor> {
        Arc::new(|_c: ToolInvocation| async {
            ToolOutcome::Output {
                content: "ok".into(),
                json: false,
            }
        })
    }

    #[test]
    fn checks_every_field() {
        let cases = [
            (
                r#"{"input_schema":{"type":"object"}}"#,
                "definition.name is missing",
            ),
            (
                r#"{"name":"a b","input_schema":{"type":"object"}}"#,
                "must match ^[a-zA-Z0-9_-]{1,128}$",
            ),
            (
                r#"{"name":7,"input_schema":{"type":"object"}}"#,
                "definition.name must be a string, got a number",
            ),
            (r#"{"name":"t"}"#, "definition.input_schema of t is missing"),
            (
                r#"{"name":"t","input_schema":{"type":"array"}}"#,
                r#"must be "object", got "array""#,
            ),
            (
                r#"{"name":"t","input_schema":{}}"#,
                "input_schema.type of t is missing",
            ),
            (
                r#"{"name":"t","input_schema":{"type":"object","properties":{"a":{"minimum":"x"}}}}"#,
                "does not compile: at /properties/a/minimum",
            ),
        ];
        for (def, expected) in cases {
            let err = Tool::new(def, noop()).unwrap_err();
            assert!(err.contains(expected), "{def}: {err}");
        }
        let long = "a".repeat(129);
        assert!(Tool::new(
            &format!(r#"{{"name":"{long}","input_schema":{{"type":"object"}}}}"#),
            noop()
        )
        .is_err());
        let ok = Tool::new(
            r#"{"name":"get_order_status","description":"d","input_schema":{"type":"object"}}"#,
            noop(),
        )
        .unwrap();
        assert_eq!(ok.name, "get_order_status");
        assert_eq!(
            ok.definition.get(),
            r#"{"name":"get_order_status","description":"d","input_schema":{"type":"object"}}"#
        );
    }
}
