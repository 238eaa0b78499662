//! Opening a session with an MCP server: the transport (Streamable HTTP or a child process),
//! the `initialize` handshake, and what the server may tell us unasked (its tool list changed).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reqwest_mcp::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{ClientInitializeError, NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio_util::sync::CancellationToken;

use super::capped::Capped;
use super::config::{child_env, Transport};
use super::stdio::Stdio;

/// An open session: the engine's side of one connection.
pub type Session = RunningService<RoleClient, Handler>;

/// How long an HTTP server may take to accept a connection.
const HTTP_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Our side of a session: who we are, and what to do when the server's tools change.
pub struct Handler {
    /// Called (on the session's task) for each `notifications/tools/list_changed`.
    pub on_tools_changed: Arc<dyn Fn() + Send + Sync>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // No sampling, roots or elicitation: the server's requests for them are refused.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("anthropic-tool-calling", env!("CARGO_PKG_VERSION")),
        )
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        (self.on_tools_changed)();
        std::future::ready(())
    }
}

/// Connects and initialises. The session ends when `shutdown` is cancelled. The error is a
/// clause for "could not connect to the MCP server …: {clause}", holding nothing secret the
/// transport knows (header values are taken out by the caller too).
pub async fn open(
    transport: &Transport,
    handler: Handler,
    shutdown: CancellationToken,
) -> Result<Session, String> {
    match transport {
        Transport::Http { url, headers } => {
            let client = http_client(headers)?;
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            let transport = StreamableHttpClientTransport::with_client(Capped::new(client), config);
            handler
                .serve_with_ct(transport, shutdown)
                .await
                .map_err(|e| init_error(&e))
        }
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .env_clear()
                .envs(child_env(|k| std::env::var(k).ok(), env));
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            cmd.stderr(own_stderr());
            let child = Stdio::spawn(cmd).map_err(|e| format!("it could not be started ({e})"))?;
            handler
                .serve_with_ct(child, shutdown)
                .await
                .map_err(|e| init_error(&e))
        }
    }
}

/// This process's stderr for a stdio server's own (its logs, why it failed to start). Node opens
/// its fd 2 close-on-exec, so a child merely inheriting it would find it closed; a duplicate is
/// put in its place in the child without that flag.
fn own_stderr() -> std::process::Stdio {
    #[cfg(unix)]
    let copy = {
        use std::os::fd::AsFd;
        std::io::stderr().as_fd().try_clone_to_owned()
    };
    #[cfg(windows)]
    let copy = {
        use std::os::windows::io::AsHandle;
        std::io::stderr().as_handle().try_clone_to_owned()
    };
    copy.map(std::process::Stdio::from)
        .unwrap_or_else(|_| std::process::Stdio::inherit())
}

/// The HTTP client of one server: its headers on every request (marked sensitive, so that no
/// debug print of a request shows them), no redirects followed (a redirect could carry them to
/// another host), TLS with the same roots and crypto as the API client.
fn http_client(headers: &[(String, crate::engine::Secret)]) -> Result<reqwest_mcp::Client, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("its header name {name:?} is not a valid HTTP header name"))?;
        let mut value = HeaderValue::from_str(value.expose()).map_err(|_| {
            format!("the value of its header {name:?} is not a valid HTTP header value")
        })?;
        value.set_sensitive(true);
        map.insert(key, value);
    }
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("TLS could not be set up ({e})"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    reqwest_mcp::Client::builder()
        .default_headers(map)
        .redirect(reqwest_mcp::redirect::Policy::none())
        .connect_timeout(HTTP_CONNECT_TIMEOUT)
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| format!("its HTTP client could not be built ({e})"))
}

/// Why initialising failed, in words a developer can act on.
fn init_error(error: &ClientInitializeError) -> String {
    if error.is_authorization_required() || error.auth_challenge().is_some() {
        return "it refused the credentials (HTTP 401/403): check the headers (an Authorization header with a valid token)".into();
    }
    if let ClientInitializeError::ConnectionClosed(_) = error {
        return "it closed the connection before it answered initialize (a stdio server that exited at start says why on stderr)".into();
    }
    let mut text = plain(&error.to_string());
    // The transport's own error holds the cause (connection refused, a DNS failure) a few
    // sources down: follow it to the end.
    let mut source: Option<&(dyn std::error::Error + 'static)> = match error {
        ClientInitializeError::TransportError { error, .. } => Some(error.error.as_ref()),
        other => std::error::Error::source(other),
    };
    while let Some(cause) = source {
        let more = plain(&cause.to_string());
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = match cause.downcast_ref::<StreamableHttpError<reqwest_mcp::Error>>() {
            // The HTTP client's error is not given as the transport error's source.
            Some(StreamableHttpError::Client(client)) => Some(client),
            _ => cause.source(),
        };
    }
    if let Some(status) = redirect_status(&text) {
        return format!("it answered with a redirect (HTTP {status}), which is not followed: give registerMcpServer the final URL");
    }
    // Whole: what the server wrote (an error body) is cut where it is quoted, after its
    // secrets are taken out.
    text
}

/// An error's text without the Rust type names the SDK puts in it (`Transport [rmcp::…]`):
/// they say nothing to a developer of a Node app.
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        out.push_str(&rest[..open]);
        let inside = &rest[open + 1..close];
        if !inside.contains("::") {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The redirect status of a refused response (the transport reports a 3xx as an unexpected
/// response, `HTTP 307 Temporary Redirect: …`).
fn redirect_status(text: &str) -> Option<&'static str> {
    ["301", "302", "303", "307", "308"]
        .into_iter()
        .find(|code| text.contains(&format!("HTTP {code} ")))
}
