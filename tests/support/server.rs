//! A scripted Messages API on 127.0.0.1: each request is checked (`rules`), recorded, and
//! answered by the next step of the script. A request that breaks the API's rules is answered
//! with the API's own 400 and remembered; dropping the server then fails the test.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::rules;

/// One answer of the script.
#[derive(Debug, Clone)]
pub enum Step {
    /// HTTP 200 with this Messages API response.
    Reply(Value),
    /// An HTTP error with the API's error body and these extra headers.
    Error {
        status: u16,
        kind: String,
        message: String,
        headers: Vec<(String, String)>,
    },
    /// Any status and body, as given.
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
    /// The connection is reset (RST) once the request is read.
    Reset,
    /// The request is read and never answered.
    Hang,
}

impl Step {
    /// A final answer: one text block, `end_turn`.
    pub fn text(text: &str) -> Step {
        Step::reply(json!([{ "type": "text", "text": text }]), "end_turn")
    }

    /// A reply asking for these tool calls `(id, name, input)`, after a short text block.
    pub fn tool_uses(calls: &[(&str, &str, Value)]) -> Step {
        let mut content = vec![json!({ "type": "text", "text": "Let me check." })];
        content.extend(calls.iter().map(|(id, name, input)| json!({ "type": "tool_use", "id": id, "name": name, "input": input })));
        Step::reply(Value::Array(content), "tool_use")
    }

    /// A reply with this content and stop reason, usage 10 in / 5 out.
    pub fn reply(content: Value, stop_reason: &str) -> Step {
        Step::Reply(json!({
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-5-5",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": { "input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 },
        }))
    }

    /// Replaces a reply's usage.
    pub fn usage(self, usage: Value) -> Step {
        match self {
            Step::Reply(mut body) => {
                body["usage"] = usage;
                Step::Reply(body)
            }
            other => panic!("usage() on {other:?}"),
        }
    }

    /// An API error with the `error.type` the API uses for `status`.
    pub fn error(status: u16, message: &str) -> Step {
        let kind = match status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            402 => "billing_error",
            403 => "permission_error",
            404 => "not_found_error",
            409 => "conflict_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            504 => "timeout_error",
            529 => "overloaded_error",
            _ => "api_error",
        };
        Step::Error {
            status,
            kind: kind.to_owned(),
            message: message.to_owned(),
            headers: Vec::new(),
        }
    }

    /// Adds a response header to an error.
    pub fn header(mut self, name: &str, value: &str) -> Step {
        match &mut self {
            Step::Error { headers, .. } => headers.push((name.to_owned(), value.to_owned())),
            other => panic!("header() on {other:?}"),
        }
        self
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    pub raw_body: String,
    /// `Value::Null` when the body was not JSON.
    pub body: Value,
    /// `x-stainless-retry-count`.
    pub retry_count: Option<u32>,
    pub at: Instant,
}

impl Recorded {
    /// The request's `messages`.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The content blocks of the last message (the tool results, after a tool round).
    pub fn last_blocks(&self) -> Vec<Value> {
        self.messages()
            .last()
            .and_then(|m| m["content"].as_array())
            .cloned()
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Step>,
    requests: Vec<Recorded>,
    violations: Vec<String>,
}

/// The server; it stops accepting when dropped.
pub struct Server {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    accept: JoinHandle<()>,
}

impl Server {
    /// Listens on an ephemeral loopback port and answers with `steps`, in order.
    pub async fn start(steps: impl IntoIterator<Item = Step>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(Mutex::new(State {
            script: steps.into_iter().collect(),
            ..State::default()
        }));
        let shared = state.clone();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, shared.clone()));
            }
        });
        Server {
            addr,
            state,
            accept,
        }
    }

    /// `http://127.0.0.1:<port>`, without `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The `x-stainless-retry-count` of every request so far.
    pub fn retry_counts(&self) -> Vec<Option<u32>> {
        self.requests().iter().map(|r| r.retry_count).collect()
    }

    /// Waits until `n` requests have arrived (for tests that act while a request hangs).
    pub async fn wait_for_requests(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.requests().len() < n {
            assert!(Instant::now() < deadline, "waited 5 s for request {n}");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Every rule the engine broke so far.
    pub fn violations(&self) -> Vec<String> {
        self.state.lock().unwrap().violations.clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.accept.abort();
        let violations = self.violations();
        if !violations.is_empty() && !std::thread::panicking() {
            panic!(
                "the engine broke the API's rules:\n{}",
                violations.join("\n")
            );
        }
    }
}

/// One HTTP/1.1 request off the wire.
struct Incoming {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

async fn serve(mut stream: TcpStream, state: Arc<Mutex<State>>) {
    let mut buf = Vec::new();
    loop {
        let incoming = match read_request(&mut stream, &mut buf).await {
            Ok(Some(incoming)) => incoming,
            Ok(None) => return,
            Err(why) => {
                state
                    .lock()
                    .unwrap()
                    .violations
                    .push(format!("malformed HTTP request: {why}"));
                return;
            }
        };
        let (step, request_id) = {
            let mut st = state.lock().unwrap();
            let (body, problems) = rules::check_request(
                &incoming.method,
                &incoming.path,
                &incoming.headers,
                &incoming.body,
            );
            let number = st.requests.len() + 1;
            let request_id = format!("req_test_{number}");
            st.requests.push(Recorded {
                retry_count: incoming
                    .headers
                    .get("x-stainless-retry-count")
                    .and_then(|v| v.parse().ok()),
                method: incoming.method,
                path: incoming.path,
                headers: incoming.headers,
                raw_body: String::from_utf8_lossy(&incoming.body).into_owned(),
                body,
                at: Instant::now(),
            });
            let step = if let Some(first) = problems.first() {
                let step = Step::error(400, first);
                st.violations.extend(
                    problems
                        .into_iter()
                        .map(|p| format!("request {number}: {p}")),
                );
                step
            } else if let Some(step) = st.script.pop_front() {
                step
            } else {
                st.violations.push(format!(
                    "request {number} was not scripted (the script was used up)"
                ));
                Step::error(500, "test server: no scripted step left")
            };
            (step, request_id)
        };
        let written = match step {
            Step::Reply(body) => {
                respond(
                    &mut stream,
                    200,
                    "application/json",
                    &body.to_string(),
                    &[],
                    &request_id,
                )
                .await
            }
            Step::Error {
                status,
                kind,
                message,
                headers,
            } => {
                let body = json!({ "type": "error", "error": { "type": kind, "message": message }, "request_id": request_id });
                respond(
                    &mut stream,
                    status,
                    "application/json",
                    &body.to_string(),
                    &headers,
                    &request_id,
                )
                .await
            }
            Step::Raw {
                status,
                content_type,
                body,
            } => respond(&mut stream, status, &content_type, &body, &[], &request_id).await,
            Step::Reset => {
                // SO_LINGER 0: closing sends RST instead of FIN.
                let _ = stream.set_zero_linger();
                return;
            }
            Step::Hang => {
                // Hold the connection open without answering, until the client gives up.
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
                return;
            }
        };
        if written.is_err() {
            return;
        }
    }
}

/// Reads one request (`Ok(None)`: the client closed the connection between requests).
async fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<Option<Incoming>, String> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head =
                std::str::from_utf8(&buf[..end]).map_err(|e| format!("head is not UTF-8: {e}"))?;
            let mut lines = head.split("\r\n");
            let mut request_line = lines.next().unwrap_or_default().split(' ');
            let method = request_line.next().unwrap_or_default().to_owned();
            let path = request_line.next().unwrap_or_default().to_owned();
            let mut headers = BTreeMap::new();
            for line in lines {
                let (name, value) = line
                    .split_once(':')
                    .ok_or_else(|| format!("bad header line {line:?}"))?;
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
            }
            let length: usize = headers
                .get("content-length")
                .ok_or("no content-length")?
                .parse()
                .map_err(|e| format!("bad content-length: {e}"))?;
            let total = end + 4 + length;
            while buf.len() < total {
                if !read_more(stream, buf).await {
                    return Err("the connection closed in the middle of a body".into());
                }
            }
            let body = buf[end + 4..total].to_vec();
            buf.drain(..total);
            return Ok(Some(Incoming {
                method,
                path,
                headers,
                body,
            }));
        }
        if !read_more(stream, buf).await {
            return Ok(None);
        }
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

async fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &str,
    headers: &[(String, String)],
    request_id: &str,
) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nrequest-id: {request_id}\r\n",
        if status < 400 { "OK" } else { "Error" },
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(body);
    stream.write_all(out.as_bytes()).await?;
    stream.flush().await
}
