//! The settings of one run, already checked (the binding turns JS options into these).

use std::time::Duration;

use serde_json::value::RawValue;

use super::api::ApiConfig;

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
/// The `anthropic-version` header.
pub const DEFAULT_API_VERSION: &str = "2023-06-01";

/// What happens when a tool fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnToolError {
    /// End the run with the tool's error.
    Stop,
    /// Tell the model (`is_error: true`) and go on.
    Continue,
}

/// Everything a run needs besides the prompt and the tools.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub model: String,
    pub max_tokens: u32,
    /// A string or text blocks, sent as given.
    pub system: Option<Box<RawValue>>,
    pub temperature: Option<f64>,
    /// Sent as given.
    pub tool_choice: Option<Box<RawValue>>,
    pub max_tool_iterations: u32,
    pub on_tool_error: OnToolError,
    pub max_tool_failures: u32,
    pub tool_timeout: Option<Duration>,
    pub parallel_tool_calls: bool,
    pub api: ApiConfig,
}

impl RunConfig {
    /// The defaults of the contract, talking to `base_url` with `api_key`.
    pub fn new(api_key: Option<String>, base_url: impl Into<String>) -> Self {
        RunConfig {
            model: DEFAULT_MODEL.to_owned(),
            max_tokens: DEFAULT_MAX_TOKENS,
            system: None,
            temperature: None,
            tool_choice: None,
            max_tool_iterations: DEFAULT_MAX_TOOL_ITERATIONS,
            on_tool_error: OnToolError::Stop,
            max_tool_failures: DEFAULT_MAX_TOOL_FAILURES,
            tool_timeout: None,
            parallel_tool_calls: true,
            api: ApiConfig {
                api_key,
                auth_token: None,
                base_url: base_url.into(),
                api_version: DEFAULT_API_VERSION.to_owned(),
                max_retries: DEFAULT_MAX_RETRIES,
                timeout: DEFAULT_TIMEOUT,
            },
        }
    }
}
