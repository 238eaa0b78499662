//! The engine: the tool-calling loop, the Messages API client, validation and retries.
//! It knows nothing of Node; the binding (`crate::binding`) adapts it.

pub mod api;
pub mod approval;
pub mod budget;
pub mod call_log;
pub mod call_memory;
pub mod canonical;
pub mod check_call;
pub mod config;
pub mod conversation;
pub mod deltas;
pub mod error;
pub mod events;
pub mod execute_call;
pub mod feedback;
pub mod fields;
pub mod mcp;
pub mod mcp_connector;
pub mod output;
pub mod protocol;
pub mod redact;
pub mod reply;
pub mod request;
pub mod result;
pub mod resume;
pub mod retry;
pub mod round;
pub mod run;
pub mod schema;
pub mod secret;
pub mod settle_round;
pub mod settled;
pub mod stop;
pub mod stream;
pub mod tool;
pub mod tool_changes;
pub mod trace;
pub mod trust;

pub use api::{ApiClient, ApiConfig};
pub use config::{OnMaxIterations, OnToolError, RunConfig, ToolChoice};
pub use error::{ErrorCode, RunError};
pub use events::{EventSink, RunEvent};
pub use result::{RunOutput, ToolCall, Usage};
pub use run::run;
pub use secret::Secret;
pub use tool::{Tool, ToolExecutor, ToolInvocation, ToolOutcome, ToolSpec};
