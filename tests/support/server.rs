//! A scripted Messages API on 127.0.0.1: each request is checked (`rules`), recorded, and
//! answered by the next step of the script. A request that breaks the API's rules is answered
//! with the API's own 400 and remembered; dropping the server then fails the test.
//!
//! A reply step answers a request with `"stream": true` as server-sent events (`sse`), the same
//! sequence as the JS stand-in: message_start, ping, per block content_block_start / deltas /
//! content_block_stop, message_delta, message_stop. Step options (builder methods on a reply):
//! `stream_delay`, `sse_error_after`, `sse_cut_after`, `unknown_delta`, `require_container`.
//!
//! A gateway that echoes the request back (see [`echo`]): in the wire text of an error (an
//! [`Step::Error`]'s body and headers, a [`Step::Raw`] body, the `sse_error_after` event),
//! `{echo:NAME}` is replaced by the value of the request's header NAME, and `{echo-escaped:NAME}`
//! by the same written as JSON `\uXXXX` escapes.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::rules;

/// How a reply is streamed, and what the request it answers must carry.
#[derive(Debug, Clone, Default)]
pub struct ReplyOptions {
    /// The request must send `container` with this id (else the API's 400).
    pub require_container: Option<String>,
    /// The pause between streamed events (zero: just yield).
    pub stream_delay: Duration,
    /// After this many events, an `event: error` with `(error.type, error.message)`, then the end.
    pub sse_error_after: Option<(usize, String, String)>,
    /// After this many events the connection is reset (no message_stop).
    pub sse_cut_after: Option<usize>,
    /// A content_block_delta of this unknown type in the first block.
    pub unknown_delta: Option<String>,
}

/// One answer of the script.
#[derive(Debug, Clone)]
pub enum Step {
    /// HTTP 200 with this Messages API response (streamed when the request asks for it).
    Reply(Value),
    /// A reply with options.
    ReplyWith(Value, ReplyOptions),
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
        self.edit(|body, _| body["usage"] = usage)
    }

    /// Puts `container: {id, expires_at}` on a reply (code execution).
    pub fn container(self, id: &str, expires_at: &str) -> Step {
        self.edit(|body, _| body["container"] = json!({ "id": id, "expires_at": expires_at }))
    }

    /// Puts `stop_details` on a reply.
    pub fn stop_details(self, details: Value) -> Step {
        self.edit(|body, _| body["stop_details"] = details)
    }

    /// The request this reply answers must carry `container: id`.
    pub fn require_container(self, id: &str) -> Step {
        self.edit(|_, o| o.require_container = Some(id.to_owned()))
    }

    /// Pauses this long between streamed events.
    pub fn stream_delay(self, delay: Duration) -> Step {
        self.edit(|_, o| o.stream_delay = delay)
    }

    /// Streams `n` events, then `event: error` with this error, then ends the response.
    pub fn sse_error_after(self, n: usize, kind: &str, message: &str) -> Step {
        self.edit(|_, o| o.sse_error_after = Some((n, kind.to_owned(), message.to_owned())))
    }

    /// Streams `n` events, then resets the connection.
    pub fn sse_cut_after(self, n: usize) -> Step {
        self.edit(|_, o| o.sse_cut_after = Some(n))
    }

    /// Streams a delta of this unknown type in the first block.
    pub fn unknown_delta(self, kind: &str) -> Step {
        self.edit(|_, o| o.unknown_delta = Some(kind.to_owned()))
    }

    fn edit(self, change: impl FnOnce(&mut Value, &mut ReplyOptions)) -> Step {
        let (mut body, mut options) = match self {
            Step::Reply(body) => (body, ReplyOptions::default()),
            Step::ReplyWith(body, options) => (body, options),
            other => panic!("a reply option on {other:?}"),
        };
        change(&mut body, &mut options);
        Step::ReplyWith(body, options)
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

    /// A redirect (`307`) to `location`, with an API-style error body.
    pub fn redirect(location: &str) -> Step {
        Step::error(307, "Temporary Redirect").header("location", location)
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
    /// The `anthropic-beta` header, split on commas.
    pub betas: Vec<String>,
    /// The request asked for a stream and got one.
    pub streamed: bool,
    /// The client went away before the stream ended.
    pub client_closed: bool,
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

    /// Takes the rules broken so far, so that dropping the server does not fail the test: for a
    /// test that sends bad requests on purpose to see how they are answered.
    pub fn take_violations(&self) -> Vec<String> {
        std::mem::take(&mut self.state.lock().unwrap().violations)
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

/// What a reply step expects of the request that it does not get (the API's words).
fn unmet(step: &Step, container: Option<&str>) -> Option<String> {
    let Step::ReplyWith(_, options) = step else {
        return None;
    };
    let wanted = options.require_container.as_deref()?;
    match container {
        None => Some(rules::CONTAINER_REQUIRED.to_owned()),
        Some(sent) if sent != wanted => Some(format!(
            "container: Container '{sent}' not found. This conversation continues container '{wanted}'."
        )),
        Some(_) => None,
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
        let sent_headers = incoming.headers.clone();
        let (step, request_id, wants_stream, index) = {
            let mut st = state.lock().unwrap();
            let (body, problems) = rules::check_request(
                &incoming.method,
                &incoming.path,
                &incoming.headers,
                &incoming.body,
            );
            let number = st.requests.len() + 1;
            let request_id = format!("req_test_{number}");
            let wants_stream = body["stream"] == true;
            let container = body["container"].as_str().map(str::to_owned);
            st.requests.push(Recorded {
                betas: incoming
                    .headers
                    .get("anthropic-beta")
                    .map(|b| {
                        b.split(',')
                            .map(|s| s.trim().to_owned())
                            .filter(|s| !s.is_empty())
                            .collect()
                    })
                    .unwrap_or_default(),
                streamed: false,
                client_closed: false,
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
                let step = Step::error(rules::refusal_status(first), first);
                st.violations.extend(
                    problems
                        .into_iter()
                        .map(|p| format!("request {number}: {p}")),
                );
                step
            } else if let Some(step) = st.script.pop_front() {
                match unmet(&step, container.as_deref()) {
                    Some(why) => {
                        st.violations.push(format!("request {number}: {why}"));
                        Step::error(400, &why)
                    }
                    None if wants_stream => match step {
                        Step::Reply(body) => Step::ReplyWith(body, ReplyOptions::default()),
                        other => other,
                    },
                    None => step,
                }
            } else {
                st.violations.push(format!(
                    "request {number} was not scripted (the script was used up)"
                ));
                Step::error(500, "test server: no scripted step left")
            };
            (step, request_id, wants_stream, number - 1)
        };
        let written = match step {
            Step::ReplyWith(body, options) if wants_stream => {
                state.lock().unwrap().requests[index].streamed = true;
                match sse::respond(&mut stream, &body, &options, &request_id, &sent_headers).await {
                    Ok(sse::End::Finished) => Ok(()),
                    Ok(sse::End::Cut) => {
                        let _ = stream.set_zero_linger();
                        return;
                    }
                    Err(e) => {
                        state.lock().unwrap().requests[index].client_closed = true;
                        Err(e)
                    }
                }
            }
            Step::Reply(body) | Step::ReplyWith(body, _) => {
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
                let headers: Vec<(String, String)> = headers
                    .into_iter()
                    .map(|(name, value)| (name, echo(&value, &sent_headers)))
                    .collect();
                respond(
                    &mut stream,
                    status,
                    "application/json",
                    &echo(&body.to_string(), &sent_headers),
                    &headers,
                    &request_id,
                )
                .await
            }
            Step::Raw {
                status,
                content_type,
                body,
            } => {
                let body = echo(&body, &sent_headers);
                respond(&mut stream, status, &content_type, &body, &[], &request_id).await
            }
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

/// `text` with `{echo:NAME}` replaced by the request's header NAME as it was sent (`(none)` if
/// it was not), and `{echo-escaped:NAME}` by the same value with every character written as a
/// JSON `\uXXXX` escape: in a JSON string it decodes to the value, yet never matches it as text.
pub fn echo(text: &str, headers: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("{echo") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(end) = tail.find('}') else {
            break;
        };
        let (escaped, name) = match tail[1..end].split_once(':') {
            Some(("echo", name)) => (false, name),
            Some(("echo-escaped", name)) => (true, name),
            _ => {
                out.push_str(&tail[..=end]);
                rest = &tail[end + 1..];
                continue;
            }
        };
        let value = headers.get(name).map_or("(none)", String::as_str);
        if escaped {
            for unit in value.encode_utf16() {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push_str(value);
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
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

/// Server-sent events: a reply as the Messages API streams it. Reassembled the way the official
/// SDK's MessageStream does it, the events give back the reply exactly.
pub mod sse {
    use serde_json::{json, Value};
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpStream;

    use super::{echo, ReplyOptions};

    const TEXT_CHUNKS: [usize; 5] = [3, 5, 2, 7, 4];
    const JSON_CHUNKS: [usize; 4] = [6, 9, 4, 11];

    /// How a streamed response ended.
    pub enum End {
        /// Every event (or the scripted error event) was written.
        Finished,
        /// `sse_cut_after`: the connection is to be reset.
        Cut,
    }

    /// `s` in small pieces of cycling sizes, split between chars.
    fn pieces(s: &str, sizes: &[usize]) -> Vec<String> {
        let chars: Vec<char> = s.chars().collect();
        let mut out = Vec::new();
        let (mut at, mut k) = (0, 0);
        while at < chars.len() {
            let end = (at + sizes[k % sizes.len()]).min(chars.len());
            out.push(chars[at..end].iter().collect());
            at = end;
            k += 1;
        }
        out
    }

    /// A block's `content_block_start` payload and its deltas; other blocks come whole.
    fn block_events(block: &Value) -> (Value, Vec<Value>) {
        let mut start = block.clone();
        let mut deltas = Vec::new();
        match block["type"].as_str() {
            Some("text") => {
                start["text"] = json!("");
                if let Some(citations) = block["citations"].as_array() {
                    start["citations"] = json!([]);
                    for citation in citations {
                        deltas.push(json!({ "type": "citations_delta", "citation": citation }));
                    }
                }
                for t in pieces(block["text"].as_str().unwrap_or_default(), &TEXT_CHUNKS) {
                    deltas.push(json!({ "type": "text_delta", "text": t }));
                }
            }
            Some("thinking") => {
                start["thinking"] = json!("");
                start["signature"] = json!("");
                for t in pieces(block["thinking"].as_str().unwrap_or_default(), &TEXT_CHUNKS) {
                    deltas.push(json!({ "type": "thinking_delta", "thinking": t }));
                }
                deltas.push(json!({ "type": "signature_delta", "signature": block["signature"] }));
            }
            Some("tool_use" | "server_tool_use") => {
                start["input"] = json!({});
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                deltas.push(json!({ "type": "input_json_delta", "partial_json": "" }));
                for p in pieces(&input.to_string(), &JSON_CHUNKS) {
                    deltas.push(json!({ "type": "input_json_delta", "partial_json": p }));
                }
            }
            _ => {}
        }
        (start, deltas)
    }

    /// The events of a streamed reply, as `(event name, data)`.
    pub fn events(message: &Value, unknown_delta: Option<&str>) -> Vec<(String, Value)> {
        let mut start = message.clone();
        start["content"] = json!([]);
        start["stop_reason"] = Value::Null;
        start["stop_sequence"] = Value::Null;
        if let Some(fields) = start.as_object_mut() {
            fields.remove("container");
            if fields.contains_key("stop_details") {
                fields.insert("stop_details".into(), Value::Null);
            }
        }
        let output = message["usage"]["output_tokens"].as_u64().unwrap_or(0);
        start["usage"]["output_tokens"] = json!(output.min(1));
        let mut out = vec![
            (
                "message_start".to_owned(),
                json!({ "type": "message_start", "message": start }),
            ),
            ("ping".to_owned(), json!({ "type": "ping" })),
        ];
        let unknown = |kind: &str| {
            (
                "content_block_delta".to_owned(),
                json!({ "type": "content_block_delta", "index": 0, "delta": { "type": kind } }),
            )
        };
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        if let (Some(kind), true) = (unknown_delta, blocks.is_empty()) {
            out.push(unknown(kind));
        }
        for (index, block) in blocks.iter().enumerate() {
            let (first, deltas) = block_events(block);
            out.push((
                "content_block_start".into(),
                json!({ "type": "content_block_start", "index": index, "content_block": first }),
            ));
            if let (Some(kind), 0) = (unknown_delta, index) {
                out.push(unknown(kind));
            }
            for delta in deltas {
                out.push((
                    "content_block_delta".into(),
                    json!({ "type": "content_block_delta", "index": index, "delta": delta }),
                ));
            }
            out.push((
                "content_block_stop".into(),
                json!({ "type": "content_block_stop", "index": index }),
            ));
            if index % 2 == 1 {
                out.push(("ping".into(), json!({ "type": "ping" })));
            }
        }
        let mut delta = json!({ "stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"] });
        for key in ["stop_details", "container"] {
            if let Some(v) = message.get(key) {
                delta[key] = v.clone();
            }
        }
        out.push((
            "message_delta".into(),
            json!({ "type": "message_delta", "delta": delta, "usage": message["usage"] }),
        ));
        out.push(("message_stop".into(), json!({ "type": "message_stop" })));
        out
    }

    async fn chunk(stream: &mut TcpStream, text: &str) -> std::io::Result<()> {
        stream
            .write_all(format!("{:x}\r\n{text}\r\n", text.len()).as_bytes())
            .await?;
        stream.flush().await
    }

    fn frame(name: &str, data: &Value) -> String {
        format!("event: {name}\ndata: {data}\n\n")
    }

    /// Writes `message` as a 200 `text/event-stream` (chunked), with the step's options; the
    /// error event echoes `sent_headers` (see [`echo`]).
    pub async fn respond(
        stream: &mut TcpStream,
        message: &Value,
        options: &ReplyOptions,
        request_id: &str,
        sent_headers: &std::collections::BTreeMap<String, String>,
    ) -> std::io::Result<End> {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
             request-id: {request_id}\r\ntransfer-encoding: chunked\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await?;
        let events = events(message, options.unknown_delta.as_deref());
        for i in 0..=events.len() {
            if let Some((n, kind, text)) = &options.sse_error_after {
                if *n == i {
                    let error =
                        json!({ "type": "error", "error": { "type": kind, "message": text } });
                    chunk(stream, &echo(&frame("error", &error), sent_headers)).await?;
                    break;
                }
            }
            if options.sse_cut_after == Some(i) {
                return Ok(End::Cut);
            }
            let Some((name, data)) = events.get(i) else {
                break;
            };
            if i > 0 {
                if options.stream_delay.is_zero() {
                    tokio::task::yield_now().await;
                } else {
                    tokio::time::sleep(options.stream_delay).await;
                }
            }
            chunk(stream, &frame(name, data)).await?;
        }
        stream.write_all(b"0\r\n\r\n").await?;
        stream.flush().await?;
        Ok(End::Finished)
    }

    /// The message the events give back, assembled as the official SDK's MessageStream does.
    pub fn reassemble(events: &[(String, Value)]) -> Result<Value, String> {
        let mut message = Value::Null;
        let mut json_buffers: std::collections::HashMap<u64, String> = Default::default();
        for (name, data) in events {
            let index = data["index"].as_u64().unwrap_or(0);
            match name.as_str() {
                "message_start" => message = data["message"].clone(),
                "content_block_start" => message["content"]
                    .as_array_mut()
                    .ok_or("content_block_start before message_start")?
                    .push(data["content_block"].clone()),
                "content_block_delta" => {
                    let block = &mut message["content"][index as usize];
                    let delta = &data["delta"];
                    let append = |block: &mut Value, key: &str, more: &Value| {
                        let joined = format!(
                            "{}{}",
                            block[key].as_str().unwrap_or_default(),
                            more.as_str().unwrap_or_default()
                        );
                        block[key] = json!(joined);
                    };
                    match delta["type"].as_str().unwrap_or_default() {
                        "text_delta" => append(block, "text", &delta["text"]),
                        "thinking_delta" => append(block, "thinking", &delta["thinking"]),
                        "signature_delta" => block["signature"] = delta["signature"].clone(),
                        "citations_delta" => {
                            if !block["citations"].is_array() {
                                block["citations"] = json!([]);
                            }
                            block["citations"]
                                .as_array_mut()
                                .into_iter()
                                .for_each(|c| c.push(delta["citation"].clone()));
                        }
                        "input_json_delta" => json_buffers
                            .entry(index)
                            .or_default()
                            .push_str(delta["partial_json"].as_str().unwrap_or_default()),
                        other => return Err(format!("unknown delta type {other:?}")),
                    }
                }
                "content_block_stop" => {
                    if let Some(buffer) = json_buffers.remove(&index) {
                        if !buffer.is_empty() {
                            message["content"][index as usize]["input"] =
                                serde_json::from_str(&buffer)
                                    .map_err(|e| format!("input of block {index}: {e}"))?;
                        }
                    }
                }
                "message_delta" => {
                    if let Some(fields) = data["delta"].as_object() {
                        for (k, v) in fields {
                            message[k] = v.clone();
                        }
                    }
                    if let Some(fields) = data["usage"].as_object() {
                        for (k, v) in fields {
                            message["usage"][k] = v.clone();
                        }
                    }
                }
                "message_stop" | "ping" => {}
                "error" => return Err(format!("an error event: {data}")),
                other => return Err(format!("unknown event {other:?}")),
            }
        }
        Ok(message)
    }

    /// The `(event, data)` pairs of an SSE body.
    pub fn parse(body: &str) -> Vec<(String, Value)> {
        body.split("\n\n")
            .filter(|frame| !frame.trim().is_empty())
            .map(|frame| {
                let mut name = String::new();
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push_str(v);
                    }
                }
                (name, serde_json::from_str(&data).unwrap_or(Value::Null))
            })
            .collect()
    }
}
