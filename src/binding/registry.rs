//! The tools registered on one JS thread, kept as napi instance data so that every
//! `worker_thread` has its own registry.

use std::sync::Arc;

use napi::{Env, Error, Result, Status};
use tokio_util::sync::CancellationToken;

use super::tool_bridge::{CancelFn, JsTool, ToolFn};
use crate::engine::{RunError, Tool};

/// A registered tool: the engine's checked definition and the JS function that runs it.
pub struct Entry {
    pub tool: Tool,
    pub execute: Arc<ToolFn>,
}

/// The registry of one JS thread.
#[derive(Default)]
pub struct Registry {
    pub entries: Vec<Entry>,
    pub cancel: Option<Arc<CancelFn>>,
    /// Cancelled when this JS thread shuts down (a terminated worker, the process exiting):
    /// its runs then end at once instead of going on, or waiting forever, without it.
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

    /// Adds a tool, or replaces the one of the same name in place.
    pub fn insert(&mut self, tool: Tool, execute: Arc<ToolFn>) {
        let entry = Entry { tool, execute };
        match self
            .entries
            .iter_mut()
            .find(|e| e.tool.name == entry.tool.name)
        {
            Some(slot) => *slot = entry,
            None => self.entries.push(entry),
        }
    }

    /// Removes a tool; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.tool.name != name);
        before != self.entries.len()
    }

    /// The tools one run offers, bound to that run: all of them, or those `names` picks.
    pub fn select(
        &self,
        names: Option<&[String]>,
        run_id: u32,
    ) -> std::result::Result<Vec<Tool>, RunError> {
        let bind = |e: &Entry| Tool {
            executor: Arc::new(JsTool {
                execute: e.execute.clone(),
                cancel: self.cancel.clone(),
                run_id,
                shutdown: self.shutdown.clone(),
            }),
            ..e.tool.clone()
        };
        let Some(names) = names else {
            return Ok(self.entries.iter().map(bind).collect());
        };
        let mut picked: Vec<Tool> = Vec::with_capacity(names.len());
        for name in names {
            if picked.iter().any(|t| &t.name == name) {
                continue;
            }
            match self.entries.iter().find(|e| &e.tool.name == name) {
                Some(e) => picked.push(bind(e)),
                None => {
                    let registered: Vec<&str> =
                        self.entries.iter().map(|e| e.tool.name.as_str()).collect();
                    return Err(RunError::invalid_request(format!(
                        "Option tools names {name:?}, which is not registered (registered: {}). Register it with registerTool first. Nothing was sent.",
                        if registered.is_empty() { "none".to_owned() } else { registered.join(", ") }
                    )));
                }
            }
        }
        Ok(picked)
    }
}
