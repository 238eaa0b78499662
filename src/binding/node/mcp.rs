//! `registerMcpServer` / `unregisterMcpServer`: the napi side. The session itself is the
//! engine's (`engine::mcp`); this keeps each server in the registry of the JS thread that
//! registered it, with its approval.

use std::sync::{Arc, Weak};

use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use super::registry::{Approval, Registry};
use super::tool_bridge::ApprovalFn;
use crate::binding::mcp_options;
use crate::engine::mcp::server::ToolsChanged;
use crate::engine::mcp::McpServer;

/// Connects to an MCP server, lists its tools and registers them; resolves with their names.
/// `options_json`: the options without `needsApproval`, which is `always_approve` (`true`) or
/// `needs_approval` (asked per call with the tool's name). Bad options throw `InvalidArg`
/// (`registerMcpServer: …`); a server that cannot be reached, refuses the credentials or
/// offers tools that cannot be registered rejects, naming the server and every such tool.
#[napi(
    catch_unwind,
    ts_args_type = "optionsJson: string, alwaysApprove?: boolean, needsApproval?: (inputJson: string, toolUseId: string, runId: number, toolName: string) => Promise<boolean>",
    ts_return_type = "Promise<string[]>"
)]
pub fn register_mcp_server(
    env: &Env,
    options_json: String,
    always_approve: Option<bool>,
    needs_approval: Option<ApprovalFn>,
) -> Result<PromiseRaw<'_, Vec<String>>> {
    let refuse = |why: String| Error::new(Status::InvalidArg, format!("registerMcpServer: {why}"));
    let config = mcp_options::read(&options_json).map_err(refuse)?;
    let approval = match (always_approve, needs_approval) {
        (_, Some(ask)) => Approval::Ask(Arc::new(ask)),
        (Some(true), None) => Approval::Always,
        _ => Approval::Never,
    };
    let registry = Registry::of(env)?;
    if registry.mcp.has_server(&config.name) {
        return Err(refuse(format!(
            "an MCP server named {:?} is already registered; unregisterMcpServer({:?}) first",
            config.name, config.name
        )));
    }
    let catalog = registry.mcp.clone();
    let shutdown = registry.shutdown.child_token();
    env.spawn_future(async move {
        let fail = |why: String| Error::from_reason(format!("registerMcpServer: {why}"));
        let name = config.name.clone();
        let changed: Weak<dyn ToolsChanged> = Arc::downgrade(&catalog) as Weak<dyn ToolsChanged>;
        let (server, kept, mut problems) = McpServer::connect(config, changed, shutdown)
            .await
            .map_err(|why| fail(format!("{why}.")))?;
        problems.extend(catalog.taken(&name, &kept));
        let names: Vec<String> = kept.iter().map(|l| l.spec.name.clone()).collect();
        let added = if problems.is_empty() {
            catalog.add(server.clone(), kept, approval)
        } else {
            Err(problems)
        };
        if added.is_ok() {
            server.added();
        }
        if let Err(problems) = added {
            server.close().await;
            return Err(fail(format!(
                "the MCP server {name:?} offers tools that cannot be registered: {}. Nothing of it was registered; keep only the others with the tools option, or give it a prefix.",
                problems.join(", ")
            )));
        }
        Ok(names)
    })
}

/// Closes an MCP server's session (a stdio server's child exits) and removes its tools;
/// resolves with whether it was registered.
#[napi(catch_unwind, ts_return_type = "Promise<boolean>")]
pub fn unregister_mcp_server(env: &Env, name: String) -> Result<PromiseRaw<'_, bool>> {
    let server = Registry::of(env)?.mcp.remove(&name);
    env.spawn_future(async move {
        match server {
            Some(server) => {
                server.close().await;
                Ok(true)
            }
            None => Ok(false),
        }
    })
}
