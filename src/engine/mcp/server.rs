//! One registered MCP server: its session (opened again when it dropped), its tools (listed
//! again when it says they changed), and its calls.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, RequestId,
    RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::RoleClient;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::config::{ServerConfig, CONNECT_TIMEOUT};
use super::connect::{open, Handler, Session};
use super::content;
use super::list::list_all;
use super::listing::{definitions, Listed};
use crate::engine::tools::tool::ToolOutcome;
use crate::engine::wire::redact::Redactor;

/// Told by a server's session when its tools changed (the catalog, `catalog.rs`, seen from the server).
pub trait ToolsChanged: Send + Sync {
    /// Replaces the tools of `server` with `listed`, skipping names another owner holds; the
    /// skipped ones, each with why. `None` for a server not (or no longer, or not yet) in the
    /// catalog: a later one of the same name is another server.
    fn update(&self, server: &McpServer, listed: Vec<Listed>) -> Option<Vec<String>>;
}

/// A registered MCP server.
pub struct McpServer {
    config: ServerConfig,
    /// Takes the header values out of anything the server or its transport says.
    redactor: Redactor,
    /// The open session, if any; locked while one is opened so that concurrent calls wait for
    /// the same reconnect.
    session: tokio::sync::Mutex<Option<Session>>,
    /// Ends every session of this server: cancelled on unregister and when the JS thread that
    /// registered it shuts down.
    shutdown: CancellationToken,
    /// Where its tools are offered; told when they change.
    catalog: Weak<dyn ToolsChanged>,
    /// The tools may have changed since they were last listed.
    stale: AtomicBool,
    /// A change was listed before the catalog had this server (while it was registering).
    early_change: AtomicBool,
    /// Held while the tools are listed again: a burst of list changes makes one listing at a
    /// time (and one more after it), never one per notification.
    refreshing: tokio::sync::Mutex<()>,
    me: Weak<McpServer>,
}

impl McpServer {
    /// Connects, initialises and lists the server's tools. `shutdown` ends its sessions. The
    /// error is a whole sentence naming the server and the cause.
    pub async fn connect(
        config: ServerConfig,
        catalog: Weak<dyn ToolsChanged>,
        shutdown: CancellationToken,
    ) -> Result<(Arc<McpServer>, Vec<Listed>, Vec<String>), String> {
        let secrets = config.secrets();
        let redactor = Redactor::new(secrets.iter().map(String::as_str));
        let server = Arc::new_cyclic(|me| McpServer {
            config,
            redactor,
            session: tokio::sync::Mutex::new(None),
            shutdown,
            catalog,
            stale: AtomicBool::new(false),
            early_change: AtomicBool::new(false),
            refreshing: tokio::sync::Mutex::new(()),
            me: me.clone(),
        });
        let listed = async {
            let peer = server.peer().await?;
            list_all(&peer, &server.redactor).await
        };
        let listed = match tokio::time::timeout(CONNECT_TIMEOUT, listed).await {
            Ok(Ok(listed)) => listed,
            Ok(Err(why)) => {
                server.close().await;
                return Err(server.failure(&why));
            }
            Err(_) => {
                server.close().await;
                let why = format!("it did not answer within {} s", CONNECT_TIMEOUT.as_secs());
                return Err(server.failure(&why));
            }
        };
        let (kept, problems) = definitions(&server.config, &listed);
        Ok((server, kept, problems))
    }

    /// Just added to the catalog: a change the server told while it was registering, which the
    /// catalog could not take then, is listed now.
    pub fn added(&self) {
        if self.early_change.swap(false, Ordering::SeqCst) {
            spawn_refresh(self.me.clone());
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// "Could not connect to the MCP server …: why." with the secrets taken out, `why` cut.
    fn failure(&self, why: &str) -> String {
        let location = self.config.location();
        format!(
            "could not connect to the MCP server {:?} ({}): {}",
            self.config.name,
            self.redactor.redact(&location),
            self.cause(why)
        )
    }

    /// What the server or its transport said, for a message: its secrets taken out, then cut.
    fn cause(&self, text: &str) -> String {
        self.redactor.clip(text, MAX_CAUSE_CHARS)
    }

    /// A peer of the open session, opening one first if there is none or it has closed.
    async fn peer(&self) -> Result<Peer<RoleClient>, String> {
        let mut slot = self.session.lock().await;
        if let Some(session) = slot.as_ref().filter(|s| is_open(s)) {
            return Ok(session.peer().clone());
        }
        if self.shutdown.is_cancelled() {
            return Err("it was unregistered".into());
        }
        let me = self.me.clone();
        let handler = Handler {
            on_tools_changed: Arc::new(move || spawn_refresh(me.clone())),
        };
        let reopened = slot.is_some();
        let opening = open(&self.config.transport, handler, self.shutdown.child_token());
        let session = tokio::time::timeout(CONNECT_TIMEOUT, opening)
            .await
            .map_err(|_| format!("it did not answer within {} s", CONNECT_TIMEOUT.as_secs()))??;
        let peer = session.peer().clone();
        *slot = Some(session);
        if reopened {
            // Its tools may have changed while it was away.
            spawn_refresh(self.me.clone());
        }
        Ok(peer)
    }

    /// Lists the tools again and tells the catalog, once more for changes told meanwhile.
    async fn refresh(&self) {
        self.stale.store(true, Ordering::SeqCst);
        loop {
            // A listing under way takes this change too (it looks at `stale` before it stops).
            let Ok(listing) = self.refreshing.try_lock() else {
                return;
            };
            while self.stale.swap(false, Ordering::SeqCst) {
                self.list_again().await;
            }
            drop(listing);
            if !self.stale.load(Ordering::SeqCst) {
                return;
            }
        }
    }

    /// Lists the tools and tells the catalog; what cannot be offered is logged.
    async fn list_again(&self) {
        let peer = {
            let slot = self.session.lock().await;
            match slot.as_ref() {
                Some(s) if is_open(s) => s.peer().clone(),
                _ => return,
            }
        };
        let listing = tokio::time::timeout(CONNECT_TIMEOUT, list_all(&peer, &self.redactor));
        let listed = match listing.await.unwrap_or_else(|_| {
            Err(format!(
                "it did not answer within {} s",
                CONNECT_TIMEOUT.as_secs()
            ))
        }) {
            Ok(listed) => listed,
            Err(why) => {
                let why = self.cause(&why);
                warn(&format!(
                    "the tools of the MCP server {:?} changed, but listing them failed: {why}. Its earlier tools stay offered.",
                    self.config.name
                ));
                return;
            }
        };
        let (kept, problems) = definitions(&self.config, &listed);
        let Some(catalog) = self.catalog.upgrade() else {
            return;
        };
        let mut skipped = problems;
        // Set first: a registration that adds this server right after this update missed it
        // sees the flag (`listed_before_added`) and lists once more.
        self.early_change.store(true, Ordering::SeqCst);
        match catalog.update(self, kept) {
            Some(refused) => {
                self.early_change.store(false, Ordering::SeqCst);
                skipped.extend(refused);
            }
            None => return,
        }
        if !skipped.is_empty() {
            warn(&format!(
                "the tools of the MCP server {:?} changed; these are not offered: {}",
                self.config.name,
                self.redactor.redact(&skipped.join(", "))
            ));
        }
    }

    /// Calls `remote` (the server's name of the tool) with `input` (a JSON object's text), the
    /// call's `tool_use` id in `_meta` (a server's idempotency key, as `ctx.toolUseId` is a JS
    /// tool's). Dropping the future before it ends sends `notifications/cancelled`.
    pub async fn call(&self, remote: &str, input: &str, tool_use_id: &str) -> ToolOutcome {
        let peer = match self.peer().await {
            Ok(peer) => peer,
            Err(why) => return ToolOutcome::Failed(self.failure(&why)),
        };
        let mut params = CallToolRequestParams::new(remote.to_owned());
        params.arguments = serde_json::from_str(input).ok();
        let mut meta = serde_json::Map::new();
        meta.insert(TOOL_USE_ID_META.into(), tool_use_id.into());
        params.meta = Some(RequestMetaObject::from(meta));
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(error) => return ToolOutcome::Failed(self.call_error(remote, &error)),
        };
        let mut abandoned = CancelOnDrop(Some((peer.clone(), handle.id.clone())));
        let answer = handle.await_response().await;
        abandoned.0 = None;
        // Read as JSON, not as the SDK's typed result: a block type it does not know would
        // otherwise fail the whole call instead of being described to the model.
        let json = match answer {
            Ok(ServerResult::CallToolResult(result)) => serde_json::to_value(&result).ok(),
            Ok(ServerResult::CustomResult(custom)) => Some(custom.0),
            Ok(_) => None,
            Err(error) => return ToolOutcome::Failed(self.call_error(remote, &error)),
        };
        match json {
            Some(mut json) if json.get("content").is_some_and(Value::is_array) || json.get("structuredContent").is_some() => {
                self.redactor.redact_json(&mut json);
                content::outcome(&json)
            }
            _ => ToolOutcome::Failed(format!(
                "the MCP server {:?} answered tools/call {remote:?} with something that is not a tool result",
                self.config.name
            )),
        }
    }

    /// What a failed `tools/call` tells the developer (never the model).
    fn call_error(&self, remote: &str, error: &ServiceError) -> String {
        let server = &self.config.name;
        if self.shutdown.is_cancelled() {
            return format!(
                "the MCP server {server:?} was unregistered during the call of {remote:?}"
            );
        }
        let text = match error {
            ServiceError::McpError(e) => format!(
                "the MCP server {server:?} answered tools/call {remote:?} with a JSON-RPC error (code {}): {}",
                e.code.0,
                self.cause(&e.message)
            ),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => format!(
                "the connection to the MCP server {server:?} dropped during the call of {remote:?} ({}); it was not sent again, as it may have reached the server. The next call reconnects.",
                self.cause(&super::connect::plain(&error.to_string()))
            ),
            other => format!(
                "the MCP server {server:?} failed the call of {remote:?}: {}",
                self.cause(&other.to_string())
            ),
        };
        self.redactor.redact(&text).into_owned()
    }

    /// Ends the session (a stdio server's child exits) and any reconnect.
    pub async fn close(&self) {
        self.shutdown.cancel();
        let session = self.session.lock().await.take();
        if let Some(mut session) = session {
            let _ = session
                .close_with_timeout(std::time::Duration::from_secs(5))
                .await;
        }
    }
}

/// Lists the server's tools again on a task of its own (never on the session's task, which
/// must go on reading the answers the listing waits for).
fn spawn_refresh(server: Weak<McpServer>) {
    tokio::spawn(async move {
        if let Some(server) = server.upgrade() {
            server.refresh().await;
        }
    });
}

/// Whether a session can still carry a request: not closed by us, and its loop still running
/// (a stdio server that exited, or a transport that failed, ends the loop by itself).
fn is_open(session: &Session) -> bool {
    !session.is_closed() && !session.peer().is_transport_closed()
}

/// The key of a `tools/call` request's `_meta` that carries the call's `tool_use_id`.
pub const TOOL_USE_ID_META: &str = "anthropic-tool-calling/toolUseId";

/// Sends `notifications/cancelled` for a request when dropped armed: the run gave up on the
/// call (a timeout, an abort, a failed sibling in stop mode).
struct CancelOnDrop(Option<(Peer<RoleClient>, RequestId)>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = "the run no longer waits for this call".to_owned();
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason)))
                    .await;
            });
        }
    }
}

/// How much of what a server or its transport said is quoted, in characters.
const MAX_CAUSE_CHARS: usize = 400;

/// A warning for the developer: through the crate's log when it is on, else on stderr.
fn warn(text: &str) {
    tracing::warn!("{text}");
    if !tracing::enabled!(tracing::Level::WARN) {
        eprintln!("[anthropic-tool-calling] {text}");
    }
}
