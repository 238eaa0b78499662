//! An MCP server's tool as the loop runs it: a [`ToolExecutor`] whose calls go from the engine
//! to the server, without the JS thread.

use std::sync::Weak;

use super::server::McpServer;
use crate::engine::tools::tool::{ToolExecutor, ToolFuture, ToolInvocation, ToolOutcome};

/// Runs one tool of one server. It holds the server weakly: a run that outlives
/// `unregisterMcpServer` fails the calls it still makes instead of keeping the session open.
pub struct McpCall {
    /// The server.
    pub server: Weak<McpServer>,
    /// The tool's name on the server.
    pub remote: String,
}

impl ToolExecutor for McpCall {
    fn execute(&self, call: ToolInvocation) -> ToolFuture {
        let server = self.server.upgrade();
        let remote = self.remote.clone();
        Box::pin(async move {
            match server {
                Some(server) => {
                    server
                        .call(&remote, call.input.get(), &call.tool_use_id)
                        .await
                }
                None => ToolOutcome::Failed(format!(
                    "the MCP server of the tool {remote:?} was unregistered during the run"
                )),
            }
        })
    }

    /// Its JSON outputs are serialised by the engine itself.
    fn json_is_trusted(&self) -> bool {
        true
    }
}
