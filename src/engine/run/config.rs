//! The settings of one run, already checked (the binding turns JS options into these).

use std::time::Duration;

use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::json::ordered_fields::Fields;
use crate::engine::output::answer_format::OutputFormat;
use crate::engine::run::feedback as fb;
use crate::engine::tools::approval::{Decision, Signer};
use crate::engine::trace::request::Telemetry;
use crate::engine::wire::api_mcp_servers::McpConnectorServer;
use crate::engine::wire::secret::Secret;
use crate::engine::wire::settings::ApiConfig;

/// The default model when neither the option nor `ANTHROPIC_MODEL` names one.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";
/// `max_tokens` of each request unless `maxTokens` says otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// Tool rounds allowed unless `maxToolIterations` says otherwise.
pub const DEFAULT_MAX_TOOL_ITERATIONS: u32 = 5;
/// How often one identical call may fail (continue mode) before it is no longer run.
pub const DEFAULT_MAX_TOOL_FAILURES: u32 = 2;
/// API retries after the first attempt.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// Per API request.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The public API.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header (`apiVersion` pins another).
pub const DEFAULT_API_VERSION: &str = crate::engine::wire::api_version::CURRENT;

/// What happens when a tool fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnToolError {
    /// End the run with the tool's error.
    Stop,
    /// Tell the model (`is_error: true`) and go on.
    Continue,
}

/// What happens when the model asks for tools after `maxToolIterations` rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnMaxIterations {
    /// End the run with `max_iterations_exceeded`.
    Error,
    /// Answer the calls past the limit with `is_error` results and ask once more, with
    /// `tool_choice: none`, for an answer.
    Answer,
}

/// The `toolChoice` option: sent as given on the first request; a forcing one (`any`, `tool`)
/// becomes `auto` afterwards, so the model can answer.
#[derive(Debug, Clone)]
pub struct ToolChoice {
    /// As given.
    pub raw: Box<RawValue>,
    /// `any` or `tool`.
    pub forcing: bool,
    /// What the later `auto` choice keeps of it: `{"type":"auto"}`, with
    /// `disable_parallel_tool_use` when the given one had it.
    pub after_first: Box<RawValue>,
}

impl ToolChoice {
    /// A choice as given (already checked to be a valid `tool_choice`).
    pub fn new(raw: Box<RawValue>) -> ToolChoice {
        #[derive(serde::Deserialize)]
        struct View<'a> {
            #[serde(rename = "type", borrow, default)]
            kind: std::borrow::Cow<'a, str>,
            #[serde(default)]
            disable_parallel_tool_use: Option<bool>,
        }
        let view: Option<View> = serde_json::from_str(raw.get()).ok();
        let forcing = view
            .as_ref()
            .is_some_and(|v| v.kind == "any" || v.kind == "tool");
        let after_first = match view.and_then(|v| v.disable_parallel_tool_use) {
            Some(d) => format!(r#"{{"type":"auto","disable_parallel_tool_use":{d}}}"#),
            None => r#"{"type":"auto"}"#.to_owned(),
        };
        ToolChoice {
            raw,
            forcing,
            after_first: RawValue::from_string(after_first).expect("a JSON object"),
        }
    }

    /// The tool a `{ type: "tool", name }` choice names.
    pub fn tool_name(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_str(self.raw.get()).ok()?;
        v.get("name")?.as_str().map(str::to_owned)
    }
}

/// Everything a run needs besides the prompt and the tools.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The model (default [`DEFAULT_MODEL`], or `ANTHROPIC_MODEL`).
    pub model: String,
    /// `max_tokens` of each request (default [`DEFAULT_MAX_TOKENS`]).
    pub max_tokens: u32,
    /// A string or text blocks, sent as given.
    pub system: Option<Box<RawValue>>,
    /// Sent as given; the API's default without one.
    pub temperature: Option<f64>,
    /// The `toolChoice` option; none sends no `tool_choice` (the API's `auto`).
    pub tool_choice: Option<ToolChoice>,
    /// Server tool definitions (`serverTools`), appended to `tools` as given.
    pub server_tools: Vec<Box<RawValue>>,
    /// Remote MCP servers Anthropic connects to (`mcpServers`): sent as `mcp_servers`, each
    /// offered by its `mcp_toolset` after the other tools. None by default.
    pub mcp_servers: Vec<McpConnectorServer>,
    /// Request fields passed through as given, by wire name (`thinking`, `top_p`, …).
    pub fields: Vec<(&'static str, Box<RawValue>)>,
    /// `extraBody`: merged into the body last; a key here replaces a field of the same name.
    pub extra_body: Vec<(String, Box<RawValue>)>,
    /// A code-execution container to continue in.
    pub container: Option<String>,
    /// What a tool call past `maxToolIterations` does (default: the run ends with an error).
    pub on_max_iterations: OnMaxIterations,
    /// Request each reply as a stream (`streamWithTools`), so its deltas can be shown as they come.
    pub stream: bool,
    /// Signs and checks approval ids; set when a secret is known.
    pub signer: Option<Signer>,
    /// Where the history is committed as it grows (a run in a stored thread): each reply before
    /// its calls run, and each round's results before the next request.
    pub journal: Option<crate::engine::trace::events::JournalRef>,
    /// The person's answers to the calls a paused run waits for.
    pub approvals: Vec<Decision>,
    /// Set when this run was taken over from a process that stopped: how far it had got. Its
    /// journal knows its calls.
    pub taken_over: Option<crate::engine::trace::events::Progress>,
    /// The run's id in a store (`ctx.idempotencyKey` is `<id>:<toolUseId>`); `""` without one.
    pub durable_id: String,
    /// Bound into every approval id the run issues or accepts (`approvalScope`: the user's or
    /// the chat's id); `""` without one. An id issued in one scope is refused in another.
    pub approval_scope: String,
    /// Tool rounds allowed (default [`DEFAULT_MAX_TOOL_ITERATIONS`]).
    pub max_tool_iterations: u32,
    /// What a failed tool call does (default: the run stops).
    pub on_tool_error: OnToolError,
    /// How often one identical call may fail in continue mode (default
    /// [`DEFAULT_MAX_TOOL_FAILURES`]).
    pub max_tool_failures: u32,
    /// Each call's time (`toolTimeoutMs`); none by default.
    pub tool_timeout: Option<Duration>,
    /// A reply's calls run at once (the default), or one after another.
    pub parallel_tool_calls: bool,
    /// A token budget for the whole run (`maxTotalTokens`); none by default.
    pub max_total_tokens: Option<u64>,
    /// How often one identical call may succeed in the run (`maxIdenticalCalls`); none by
    /// default (a polling tool repeats itself on purpose).
    pub max_identical_calls: Option<u32>,
    /// The shape of the answer (`output`): sent as `output_config.format`, and the final
    /// answer checked against it. None by default.
    pub output: Option<OutputFormat>,
    /// How the run is traced (`telemetry`), when it is: each request is then told to the
    /// observer as it ends. None by default (the binding traces only where a tracer is set up).
    pub trace: Option<Telemetry>,
    /// Keep the conversation on the API (its Threads, `apiThreads`): each request after the
    /// first sends only the new turn. On by default.
    pub api_threads: bool,
    /// How to reach the API.
    pub api: ApiConfig,
}

impl RunConfig {
    /// The signer of approval ids. A run that needs one (a tool asks for approval, or decisions
    /// are to be checked) and has no secret fails with the same error wherever it finds out.
    pub fn signer(&self) -> Result<&Signer, RunError> {
        self.signer.as_ref().ok_or_else(fb::no_approval_secret)
    }

    /// The names of the run's server tools (`serverTools`).
    pub fn server_tool_names(&self) -> Vec<String> {
        #[derive(serde::Deserialize)]
        struct Named {
            #[serde(default)]
            name: Option<String>,
        }
        self.server_tools
            .iter()
            .filter_map(|t| serde_json::from_str::<Named>(t.get()).ok()?.name)
            .collect()
    }

    /// A pass-through body field (`thinking`, `context_management` …) as the body sends it:
    /// `extraBody`'s over the option's.
    pub fn sent_field(&self, wire_name: &str) -> Option<&RawValue> {
        let extra = self.extra_body.iter().find(|(k, _)| k == wire_name);
        let option = || self.fields.iter().find(|(k, _)| *k == wire_name);
        extra
            .map(|(_, v)| &**v)
            .or_else(|| option().map(|(_, v)| &**v))
    }

    /// Sets the answer's schema: its format joins `output_config` (after the keys the
    /// `outputConfig` option gave, replacing a `format` among them).
    pub fn set_output(&mut self, format: OutputFormat) {
        let at = self.fields.iter().position(|(k, _)| *k == "output_config");
        let mut config: Fields = at
            .and_then(|at| serde_json::from_str(self.fields[at].1.get()).ok())
            .unwrap_or_else(|| serde_json::from_str("{}").expect("an empty object"));
        config.set("format", format.format().to_owned());
        let mut text = String::new();
        config.write(&mut text);
        let merged = RawValue::from_string(text).expect("written as JSON");
        match at {
            Some(at) => self.fields[at].1 = merged,
            None => self.fields.push(("output_config", merged)),
        }
        self.output = Some(format);
    }

    /// `thinking.budget_tokens` of an enabled `thinking` (as the body sends it: `extraBody`'s
    /// over the option's).
    pub fn thinking_budget(&self) -> Option<u64> {
        #[derive(serde::Deserialize)]
        struct Thinking {
            #[serde(rename = "type", default)]
            kind: String,
            #[serde(default)]
            budget_tokens: Option<u64>,
        }
        let sent = self.sent_field("thinking")?;
        let thinking: Thinking = serde_json::from_str(sent.get()).ok()?;
        (thinking.kind == "enabled").then_some(thinking.budget_tokens?)
    }

    /// The key a call's tool makes its effect idempotent by (`ctx.idempotencyKey`).
    pub fn idempotency_key(&self, tool_use_id: &str) -> String {
        if self.durable_id.is_empty() {
            tool_use_id.to_owned()
        } else {
            format!("{}:{tool_use_id}", self.durable_id)
        }
    }

    /// The defaults, talking to `base_url` with `api_key`.
    pub fn new(api_key: Option<Secret>, base_url: impl Into<String>) -> Self {
        RunConfig {
            model: DEFAULT_MODEL.to_owned(),
            max_tokens: DEFAULT_MAX_TOKENS,
            system: None,
            temperature: None,
            tool_choice: None,
            server_tools: Vec::new(),
            mcp_servers: Vec::new(),
            fields: Vec::new(),
            extra_body: Vec::new(),
            container: None,
            on_max_iterations: OnMaxIterations::Error,
            stream: false,
            signer: None,
            journal: None,
            approvals: Vec::new(),
            taken_over: None,
            durable_id: String::new(),
            approval_scope: String::new(),
            max_tool_iterations: DEFAULT_MAX_TOOL_ITERATIONS,
            on_tool_error: OnToolError::Stop,
            max_tool_failures: DEFAULT_MAX_TOOL_FAILURES,
            tool_timeout: None,
            parallel_tool_calls: true,
            max_total_tokens: None,
            max_identical_calls: None,
            output: None,
            trace: None,
            api_threads: true,
            api: ApiConfig {
                api_key,
                auth_token: None,
                base_url: base_url.into(),
                api_version: DEFAULT_API_VERSION.to_owned(),
                max_retries: DEFAULT_MAX_RETRIES,
                headers: Vec::new(),
                unsent_secrets: Vec::new(),
                body_secrets: Vec::new(),
                aws: None,
                token: None,
                timeout: DEFAULT_TIMEOUT,
                platform: Default::default(),
            },
        }
    }
}
