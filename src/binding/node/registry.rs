//! The tools registered on one JS thread, kept as napi instance data so that every
//! `worker_thread` has its own registry.

use std::sync::Arc;

use napi::{Env, Error, Result, Status};
use tokio_util::sync::CancellationToken;

use super::tool_bridge::{ApprovalFn, CancelFn, JsApproval, JsTool, ToolFn};
use crate::binding::call_gate::RunShared;
use crate::engine::mcp::Catalog;
use crate::engine::tools::approval;
use crate::engine::{Tool, ToolSpec};

/// Whether a registered tool's calls need a person's yes first (`needsApproval`).
#[derive(Clone)]
pub enum Approval {
    /// Its calls run without asking.
    Never,
    /// Every call waits for a person's yes.
    Always,
    /// Ask the tool's `needsApproval` function.
    Ask(Arc<ApprovalFn>),
}

/// A registered tool: the engine's checked definition and the JS function that runs it.
#[derive(Clone)]
pub struct Entry {
    /// The definition, checked and compiled.
    pub spec: ToolSpec,
    /// The JS wrapper that runs the tool's `execute`.
    pub execute: Arc<ToolFn>,
    /// Whether its calls need a person's yes first.
    pub approval: Approval,
    /// `onInterrupted: "report"`: a call interrupted by a stopped process is told to the model,
    /// not run again.
    pub report_interrupted: bool,
}

/// The registry of one JS thread.
#[derive(Default)]
pub struct Registry {
    /// The tools registered with `registerTool`, in registration order.
    pub entries: Vec<Entry>,
    /// The MCP servers registered on this thread, their tools and each server's approval;
    /// shared with their sessions, which update the tools when a server says they changed.
    pub mcp: Arc<Catalog<Approval>>,
    /// Aborts a running tool's `ctx.signal` (`setCancelHook`); set once lib/runs.js loads.
    pub cancel: Option<Arc<CancelFn>>,
    /// Cancelled when this JS thread shuts down (a terminated worker, the process exiting):
    /// its runs then end at once instead of going on, or waiting forever, without it.
    pub shutdown: CancellationToken,
}

/// What a run takes from the registry on the JS thread (cheap clones); the tools are bound and
/// picked off it.
pub struct Snapshot {
    /// The tools registered when the run started.
    pub entries: Vec<Entry>,
    /// The MCP servers' tools when the run started, with their servers' approval.
    pub mcp: Vec<(Tool, Approval)>,
    /// The thread's cancel hook.
    pub cancel: Option<Arc<CancelFn>>,
    /// The thread's shutdown token ([`Registry::shutdown`]).
    pub shutdown: CancellationToken,
}

impl Registry {
    /// This thread's registry, created on first use.
    pub fn of(env: &Env) -> Result<&'static mut Registry> {
        if env.get_instance_data::<Registry>()?.is_none() {
            let registry = Registry::default();
            let shutdown = registry.shutdown.clone();
            env.set_instance_data(registry, (), |_| {})?;
            // Cleanup hooks run before Node finalizes the thread's references, which is where
            // the Promise of a tool still running is dropped: by then the runs know why.
            env.add_env_cleanup_hook(shutdown, |token| token.cancel())?;
        }
        env.get_instance_data::<Registry>()?.ok_or_else(|| {
            Error::new(
                Status::GenericFailure,
                "the tool registry could not be created",
            )
        })
    }

    /// Adds a tool, or replaces the one of the same name in place. A name an MCP server's
    /// tool holds is refused (the error names the server): a JS tool never silently takes the
    /// place of a server's tool, nor the server's approval.
    pub fn insert(
        &mut self,
        spec: ToolSpec,
        execute: Arc<ToolFn>,
        approval: Approval,
        report_interrupted: bool,
    ) -> std::result::Result<(), String> {
        if let Err(server) = self.mcp.claim_js(&spec.name) {
            return Err(format!(
                "the name {:?} is a tool of the MCP server {server:?}; pick another name, or unregisterMcpServer({server:?}) first",
                spec.name
            ));
        }
        let entry = Entry {
            spec,
            execute,
            approval,
            report_interrupted,
        };
        match self
            .entries
            .iter_mut()
            .find(|e| e.spec.name == entry.spec.name)
        {
            Some(slot) => *slot = entry,
            None => self.entries.push(entry),
        }
        Ok(())
    }

    /// Removes a tool; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.spec.name != name);
        let removed = before != self.entries.len();
        if removed {
            self.mcp.release_js(name);
        }
        removed
    }

    /// What a run needs of the registry.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            entries: self.entries.clone(),
            mcp: self.mcp.tools(),
            cancel: self.cancel.clone(),
            shutdown: self.shutdown.clone(),
        }
    }
}

impl Snapshot {
    /// Every registered tool, in registration order (the JS ones, then each MCP server's),
    /// bound to one run.
    pub fn bind(&self, run_id: u32, run: &Arc<RunShared>) -> Vec<Tool> {
        let js = self.entries.iter().map(|e| {
            let mut tool = e.spec.bind(Arc::new(JsTool {
                execute: e.execute.clone(),
                cancel: self.cancel.clone(),
                run_id,
                run: run.clone(),
                shutdown: self.shutdown.clone(),
            }));
            tool.report_interrupted = e.report_interrupted;
            (tool, &e.approval)
        });
        let mcp = self.mcp.iter().map(|(tool, a)| (tool.clone(), a));
        js.chain(mcp)
            .map(|(tool, a)| match a {
                Approval::Never => tool,
                Approval::Always => tool.with_approval(Arc::new(approval::Always)),
                Approval::Ask(ask) => {
                    let policy = JsApproval {
                        ask: ask.clone(),
                        run_id,
                        tool: tool.name.clone(),
                    };
                    tool.with_approval(Arc::new(policy))
                }
            })
            .collect()
    }
}
