//! Who owns which tool name: the tools registered in JS and each MCP server's tools. Shared by
//! the JS thread (registering) and the sessions' tasks (a server's tools changed), so that a
//! name is checked against every owner at the moment it is taken.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use super::call::McpCall;
use super::listing::{quoted, Listed};
use super::server::{McpServer, ToolsChanged};
use crate::engine::tools::tool::Tool;

/// The MCP servers of one JS thread and the names its JS tools hold. `A` is what the binding
/// keeps with each server (its approval policy), taken in the same step as the tools so that a
/// run never sees a server's tools without it.
pub struct Catalog<A> {
    inner: Mutex<Inner<A>>,
}

struct Inner<A> {
    js: HashSet<String>,
    servers: Vec<Entry<A>>,
}

struct Entry<A> {
    server: Arc<McpServer>,
    tools: Vec<Tool>,
    extra: A,
}

impl<A> Default for Catalog<A> {
    fn default() -> Self {
        Catalog {
            inner: Mutex::new(Inner {
                js: HashSet::new(),
                servers: Vec::new(),
            }),
        }
    }
}

impl<A: Clone + Send + Sync> ToolsChanged for Catalog<A> {
    fn update(&self, server: &McpServer, listed: Vec<Listed>) -> Option<Vec<String>> {
        let mut inner = self.lock();
        let at = inner
            .servers
            .iter()
            .position(|e| std::ptr::eq(Arc::as_ptr(&e.server), server))?;
        let mut skipped = Vec::new();
        let mut kept = Vec::new();
        for l in listed {
            match inner.taken_by(&l.spec.name, server.name()) {
                Some(why) => skipped.push(why),
                None => kept.push(l),
            }
        }
        let tools = bind(&inner.servers[at].server, kept);
        inner.servers[at].tools = tools;
        Some(skipped)
    }
}

impl<A: Clone> Catalog<A> {
    fn lock(&self) -> MutexGuard<'_, Inner<A>> {
        // A panic while holding the lock leaves plain data behind, still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A JS tool takes `name`, unless a server's tool holds it (checked and taken in one step,
    /// so a server registering at the same moment cannot take it too): the server's name.
    pub fn claim_js(&self, name: &str) -> Result<(), String> {
        let mut inner = self.lock();
        if let Some(e) = inner
            .servers
            .iter()
            .find(|e| e.tools.iter().any(|t| t.name == name))
        {
            return Err(e.server.name().to_owned());
        }
        inner.js.insert(name.to_owned());
        Ok(())
    }

    /// A JS tool no longer holds `name`.
    pub fn release_js(&self, name: &str) {
        self.lock().js.remove(name);
    }

    /// Whether a server of this name is registered.
    pub fn has_server(&self, name: &str) -> bool {
        self.lock().servers.iter().any(|e| e.server.name() == name)
    }

    /// Adds a server with its tools, or names every tool (and the server name) already taken.
    pub fn add(
        &self,
        server: Arc<McpServer>,
        listed: Vec<Listed>,
        extra: A,
    ) -> Result<(), Vec<String>> {
        let mut inner = self.lock();
        if inner
            .servers
            .iter()
            .any(|e| e.server.name() == server.name())
        {
            return Err(vec![format!(
                "a server named {:?} is already registered (unregisterMcpServer it first)",
                server.name()
            )]);
        }
        let taken: Vec<String> = listed
            .iter()
            .filter_map(|l| inner.taken_by(&l.spec.name, server.name()))
            .collect();
        if !taken.is_empty() {
            return Err(taken);
        }
        let tools = bind(&server, listed);
        inner.servers.push(Entry {
            server,
            tools,
            extra,
        });
        Ok(())
    }

    /// Why each of `listed` could not go to the server `server` (every name another owner holds).
    pub fn taken(&self, server: &str, listed: &[Listed]) -> Vec<String> {
        let inner = self.lock();
        listed
            .iter()
            .filter_map(|l| inner.taken_by(&l.spec.name, server))
            .collect()
    }

    /// Removes a server and its tools; the server, to be closed.
    pub fn remove(&self, server: &str) -> Option<Arc<McpServer>> {
        let mut inner = self.lock();
        let at = inner
            .servers
            .iter()
            .position(|e| e.server.name() == server)?;
        Some(inner.servers.remove(at).server)
    }

    /// Every server's tools, in the servers' registration order, each with what the binding
    /// keeps with its server.
    pub fn tools(&self) -> Vec<(Tool, A)> {
        let inner = self.lock();
        inner
            .servers
            .iter()
            .flat_map(|e| e.tools.iter().map(|t| (t.clone(), e.extra.clone())))
            .collect()
    }
}

impl<A> Inner<A> {
    /// Why `name` cannot go to the server `server`, if another owner holds it.
    fn taken_by(&self, name: &str, server: &str) -> Option<String> {
        if self.js.contains(name) {
            return Some(format!(
                "{} (already registered with registerTool)",
                quoted(name)
            ));
        }
        self.servers
            .iter()
            .filter(|e| e.server.name() != server)
            .find(|e| e.tools.iter().any(|t| t.name == name))
            .map(|e| {
                format!(
                    "{} (already offered by the MCP server {:?})",
                    quoted(name),
                    e.server.name()
                )
            })
    }
}

/// A server's tools, each run by a call to it.
fn bind(server: &Arc<McpServer>, listed: Vec<Listed>) -> Vec<Tool> {
    listed
        .into_iter()
        .map(|l| {
            l.spec.bind(Arc::new(McpCall {
                server: Arc::downgrade(server),
                remote: l.remote,
            }))
        })
        .collect()
}
