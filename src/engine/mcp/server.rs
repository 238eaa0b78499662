//! One registered MCP server: its session (opened again when it dropped), its tools (listed
//! again when it says they changed), and its calls.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use rmcp::service::{Peer, ServiceError};
use rmcp::RoleClient;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::super::redact::Redactor;
use super::super::tool::ToolOutcome;
use super::catalog::ToolsChanged;
use super::config::{ServerConfig, CONNECT_TIMEOUT, MAX_LIST_PAGES};
use super::connect::{open, Handler, Session};
use super::content;
use super::listing::{definitions, Listed};

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

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// "Could not connect to the MCP server …: why." with the secrets taken out.
    fn failure(&self, why: &str) -> String {
        let text = format!(
            "could not connect to the MCP server {:?} ({}): {why}",
            self.config.name,
            self.config.location()
        );
        self.redactor.redact(&text).into_owned()
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
        let listed = match list_all(&peer, &self.redactor).await {
            Ok(listed) => listed,
            Err(why) => {
                let why = self.redactor.redact(&why).into_owned();
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
        skipped.extend(catalog.update(self, kept));
        if !skipped.is_empty() {
            warn(&format!(
                "the tools of the MCP server {:?} changed; these are not offered: {}",
                self.config.name,
                self.redactor.redact(&skipped.join(", "))
            ));
        }
    }

    /// Calls `remote` (the server's name of the tool) with `input` (a JSON object's text).
    /// Dropping the future before it ends sends `notifications/cancelled`.
    pub async fn call(&self, remote: &str, input: &str) -> ToolOutcome {
        let peer = match self.peer().await {
            Ok(peer) => peer,
            Err(why) => return ToolOutcome::Failed(self.failure(&why)),
        };
        let mut params = CallToolRequestParams::new(remote.to_owned());
        params.arguments = serde_json::from_str(input).ok();
        match peer.call_tool(params).await {
            Ok(result) => match serde_json::to_value(&result) {
                Ok(mut json) => {
                    redact_strings(&mut json, &self.redactor);
                    content::outcome(&json)
                }
                Err(e) => ToolOutcome::Failed(format!("its result could not be read ({e})")),
            },
            Err(error) => ToolOutcome::Failed(self.call_error(remote, &error)),
        }
    }

    /// What a failed `tools/call` tells the developer (never the model).
    fn call_error(&self, remote: &str, error: &ServiceError) -> String {
        let server = &self.config.name;
        let text = match error {
            ServiceError::McpError(e) => format!(
                "the MCP server {server:?} answered tools/call {remote:?} with a JSON-RPC error (code {}): {}",
                e.code.0, e.message
            ),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => format!(
                "the connection to the MCP server {server:?} dropped during the call of {remote:?} ({error}); it was not sent again, as it may have had effects. The next call reconnects."
            ),
            other => format!("the MCP server {server:?} failed the call of {remote:?}: {other}"),
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

/// Every string in `value` with the server's secrets taken out: what the server says goes to
/// the model, the page and the developer, and it may echo the credentials it was sent (a name
/// with one in it is then no name the API takes, and is refused as such).
fn redact_strings(value: &mut Value, redactor: &Redactor) {
    match value {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(clean) = redactor.redact(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(v, redactor)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_strings(v, redactor)),
        _ => {}
    }
}

/// Every page of `tools/list`, as JSON, the server's secrets taken out.
async fn list_all(peer: &Peer<RoleClient>, redactor: &Redactor) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .map_err(|e| format!("its tools/list failed ({e})"))?;
        for tool in &page.tools {
            let mut json = serde_json::to_value(tool)
                .map_err(|e| format!("its tool list could not be read ({e})"))?;
            redact_strings(&mut json, redactor);
            out.push(json);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(out),
        }
    }
    Err(format!(
        "its tools/list went on past {MAX_LIST_PAGES} pages"
    ))
}

/// A warning for the developer: through the crate's log when it is on, else on stderr.
fn warn(text: &str) {
    tracing::warn!("{text}");
    if !tracing::enabled!(tracing::Level::WARN) {
        eprintln!("[anthropic-tool-calling] {text}");
    }
}
