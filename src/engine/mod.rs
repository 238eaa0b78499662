//! The engine: the tool-calling loop, the Messages API client, validation and retries.
//! It knows nothing of Node; the binding (`crate::binding`) adapts it.
//!
//! Its folders are layers, lowest first; a file imports from its own folder or from a lower
//! one (`tests/layers.rs` counts the few exceptions and refuses any cycle):
//!
//! 1. `json/`: JSON text helpers (canonical text, objects kept in their order).
//! 2. `report/`: what a run records of itself, plain data: each tool call, the tokens used.
//! 3. `error.rs`, `error/`: every way a run can fail, and the codes.
//! 4. `wire/`: the Messages API client and nothing else: settings, the request body, sending
//!    with retries, the streamed reply, secrets kept out of what is quoted.
//! 5. `tools/`: tool definitions, their input schemas, approval, mid-conversation tool changes.
//! 6. `mcp/`: MCP servers as tools (the engine as MCP client).
//! 7. `output/`: what a run hands back, and the shape its answer is checked against.
//! 8. `trace/`: what an observer is told: the run's events, each request's trace.
//! 9. `run/`: the loop: the conversation, rounds of calls (checked, run, settled), stops,
//!    resuming, the budget, and what the model is told.
//!
//! A store or a cloud platform would be a folder of its own: a platform (Bedrock, Vertex) is
//! a way of sending, beside `wire/`; a store of conversations sits below `run/`.

pub mod error;
pub mod json;
pub mod mcp;
pub mod output;
pub mod report;
pub mod run;
pub mod store;
pub mod tools;
pub mod trace;
pub mod wire;

pub use error::{ErrorCode, RunError};
pub use output::run_output::RunOutput;
pub use report::calls::{ToolCall, ToolOutput};
pub use report::usage::Usage;
pub use run::config::{OnMaxIterations, OnToolError, RunConfig, ToolChoice};
pub use run::main_loop::run;
pub use tools::tool::{Tool, ToolExecutor, ToolInvocation, ToolOutcome, ToolSpec};
pub use trace::events::{EventSink, RunEvent};
pub use wire::client::ApiClient;
pub use wire::secret::Secret;
pub use wire::settings::ApiConfig;
