//! A stdio server's transport: JSON-RPC lines on the child's stdin and stdout. Ours rather than
//! the SDK's so that a line is weighed before it is parsed: one larger than a tool list may be
//! that answers a `tools/list` is answered with our error instead (its id read without building
//! the rest), and no line is buffered past [`MAX_LINE_BYTES`].

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::capped::{answered, listing_id, too_large, REMEMBERED};
use super::config::MAX_LISTING_BYTES;

/// The longest line read from a server; a longer one is dropped unread (the SDK's own limit).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How long a server may take to exit once its stdin is closed, and again after `SIGTERM`.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// A running stdio server.
pub struct Stdio {
    child: Option<Child>,
    stdout: BufReader<ChildStdout>,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    /// The line read so far (kept here: `receive` may be dropped mid-line and called again).
    line: Vec<u8>,
    /// Dropping the rest of a line past [`MAX_LINE_BYTES`].
    discarding: bool,
    /// The ids of the latest `tools/list` requests.
    listings: VecDeque<RequestId>,
}

impl Stdio {
    /// Starts `command` with piped stdin and stdout.
    pub fn spawn(mut command: Command) -> io::Result<Stdio> {
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("its stdin or stdout could not be opened"));
        };
        Ok(Stdio {
            child: Some(child),
            stdout: BufReader::new(stdout),
            stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
            line: Vec::new(),
            discarding: false,
            listings: VecDeque::new(),
        })
    }

    /// The next whole line in `self.line` (without its newline); `None` at the end of stdout.
    /// Cancel-safe: what was read stays in `self.line` for the next call.
    async fn next_line(&mut self) -> Option<()> {
        loop {
            let available = self.stdout.fill_buf().await.ok()?;
            if available.is_empty() {
                return None;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let body = newline.map_or(available, |at| &available[..at]);
            if !self.discarding && self.line.len() + body.len() > MAX_LINE_BYTES {
                tracing::warn!("an MCP server wrote a line longer than {MAX_LINE_BYTES} bytes; it was dropped unread");
                self.line = Vec::new();
                self.discarding = true;
            }
            if !self.discarding {
                self.line.extend_from_slice(body);
            }
            self.stdout.consume(take);
            if newline.is_some() && !std::mem::take(&mut self.discarding) {
                return Some(());
            }
        }
    }

    /// The message of the line read, or `None` for a line that is none (blank, not JSON-RPC).
    fn message(&mut self) -> Option<ServerJsonRpcMessage> {
        let line = std::mem::take(&mut self.line);
        let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.len() > MAX_LISTING_BYTES {
            let id = std::str::from_utf8(text).ok().and_then(answered);
            if let Some(id) = id.filter(|id| self.listings.contains(id)) {
                return Some(too_large(id));
            }
        }
        serde_json::from_slice(text).ok()
    }
}

impl Transport<RoleClient> for Stdio {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        if let Some(id) = listing_id(&item) {
            if self.listings.len() == REMEMBERED {
                self.listings.pop_front();
            }
            self.listings.push_back(id.clone());
        }
        let stdin = self.stdin.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(io::Error::other)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            let stdin = stdin
                .as_mut()
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "stdin is closed"))?;
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            self.next_line().await?;
            if let Some(message) = self.message() {
                return Some(message);
            }
        }
    }

    /// As the MCP specification says: stdin closed, then `SIGTERM`, then killed, each after a
    /// wait for the server to exit.
    async fn close(&mut self) -> io::Result<()> {
        self.stdin.lock().await.take();
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_ok() {
            return Ok(());
        }
        #[cfg(unix)]
        if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
            // SAFETY: a plain signal to our own child, which has not been reaped (it is running).
            unsafe { libc::kill(pid, libc::SIGTERM) };
            if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_ok() {
                return Ok(());
            }
        }
        child.kill().await
    }
}
