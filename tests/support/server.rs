//! A scripted Messages API on 127.0.0.1: each request is checked (`rules`), recorded, and
//! answered by the next step of the script. Like the API, it knows its credentials: [`API_KEY`]
//! and any a test adds with [`Server::accept_credential`]; any other gets the API's 401. A request that breaks the API's rules is answered
//! with the API's own 400 and remembered; dropping the server then fails the test.
//!
//! Threads (`threads`) are held as the API holds them: a `thread` request is checked as the whole
//! conversation it continues, a reply is held once whole, and a test may lose, spend or busy a
//! held reply ([`Server::set_thread`], [`Step::thread_state`]) or refuse thread requests
//! ([`Server::refuse_in_threads`]). A thread refusal a client recovers from (`thread_not_found`,
//! `thread_already_continued`, `thread_continue_in_flight`, `thread_unsupported_request`) is no
//! broken rule; the others are.
//!
//! A reply step answers a request with `"stream": true` as server-sent events (`sse`), the same
//! sequence as the JS stand-in: message_start, ping, per block content_block_start / deltas /
//! content_block_stop, message_delta, message_stop. Step options (builder methods on a reply):
//! `stream_delay`, `sse_error_after`, `sse_cut_after`, `unknown_delta`, `require_container`,
//! `ignoring_format`; `error_code` gives an error step, or a reply's `sse_error_after` event, the
//! API's `error.details.error_code`. It speaks the API versions 2023-06-01 and 2026-10-21, each
//! with its own rules (`rules::versions`). A final answer to a request with a structured-output format must be JSON
//! matching its schema (`conform`): one that is not is answered with a 500 and remembered as a
//! broken rule, unless the step is built `.ignoring_format()`.
//! A reply may hold compaction blocks (`rules::compaction_block`), `iterations` and a top-level
//! `context_management` (builder methods), sent as given; [`Step::compaction_pause`] is a reply
//! that pauses after a compaction. Unlike the JS stand-in, this server simulates no compaction.
//!
//! A gateway that echoes the request back (see [`echo`]): in the wire text of an error (an
//! [`Step::Error`]'s body and headers, a [`Step::Raw`] body, the `sse_error_after` event),
//! `{echo:NAME}` is replaced by the value of the request's header NAME, `{echo-escaped:NAME}`
//! by the same written as JSON `\uXXXX` escapes, and `{echo-token:NAME}` by its last word (the
//! token of `Bearer <token>`).

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::conform;
use super::rules;
/// The streaming half, also reachable as `server::sse` (tests read and reassemble events with it).
pub use super::sse;
use super::step::ReplyOptions;
pub use super::step::Step;
use super::threads::{ThreadState, Threads, Turn};
/// The wire half: reading requests, writing answers, and the echoing gateway's `{echo:…}`.
pub use super::wire::echo;
use super::wire::{read_request, respond};
use super::API_KEY;

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
    /// The whole conversation the model reads: with a `thread`, the held one and this request's
    /// messages after it (`thread` taken out); else the body.
    pub full_body: Value,
    /// The `id` of the reply it was answered with.
    pub reply_id: Option<String>,
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
    /// The API keys and auth tokens this server takes as valid, as the real API knows its keys.
    credentials: Vec<String>,
    /// The conversations held between turns.
    threads: Threads,
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
            credentials: vec![API_KEY.to_owned()],
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

    /// Also takes `credential` (an API key or auth token) as valid, besides [`API_KEY`]: for
    /// a test that runs with a credential of its own. Any other is refused with the API's 401.
    pub fn accept_credential(&self, credential: &str) {
        self.state
            .lock()
            .unwrap()
            .credentials
            .push(credential.to_owned());
    }

    /// Puts the held reply `id` in `state`: lost, continued, in flight elsewhere, or held again.
    pub fn set_thread(&self, id: &str, state: ThreadState) {
        self.state.lock().unwrap().threads.set(id, state);
    }

    /// Makes Threads refuse requests that use what `names` name (`thread_unsupported_request`).
    pub fn refuse_in_threads(&self, names: &[&str]) {
        self.state.lock().unwrap().threads.refuse(names);
    }

    /// The conversation held under reply `id` (`system`, `tools`, `messages`), if it is held.
    pub fn held_conversation(&self, id: &str) -> Option<Value> {
        self.state.lock().unwrap().threads.conversation(id)
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
        let (step, request_id, wants_stream, index, turn) = {
            let mut st = state.lock().unwrap();
            let number = st.requests.len() + 1;
            let (body, mut problems) = rules::check_head(
                &incoming.method,
                &incoming.path,
                &incoming.headers,
                &incoming.body,
                &st.credentials,
            );
            let betas = rules::betas_of(&incoming.headers);
            let mut opened = Ok(None);
            if problems.is_empty() {
                opened = st.threads.open(&body, &betas, number);
            }
            let turn = opened.as_ref().ok().cloned().flatten();
            let full = turn
                .as_ref()
                .map_or_else(|| body.clone(), |t| t.full.clone());
            if problems.is_empty() && opened.is_ok() {
                problems.extend(rules::check_body_under(
                    &full,
                    &betas,
                    rules::version_of(&incoming.headers),
                ));
            }
            let request_id = format!("req_test_{number}");
            let wants_stream = body["stream"] == true;
            let container = body["container"].as_str().map(str::to_owned);
            st.requests.push(Recorded {
                betas,
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
                full_body: full,
                reply_id: None,
            });
            let step = if let Err(refused) = opened {
                if !refused.recoverable() {
                    st.violations
                        .push(format!("request {number}: {}", refused.message));
                }
                Step::Error {
                    status: refused.status,
                    kind: refused.kind.to_owned(),
                    message: refused.message,
                    headers: Vec::new(),
                    details: refused.details,
                }
            } else if let Some(first) = problems.first() {
                let step = rules::refusal(first);
                st.violations.extend(
                    problems
                        .into_iter()
                        .map(|p| format!("request {number}: {p}")),
                );
                step
            } else if let Some(step) = st.script.pop_front() {
                let misfit = conform::misfit(&step, &st.requests[number - 1].full_body);
                match unmet(&step, container.as_deref())
                    .map(|why| (400, why))
                    .or(misfit.map(|why| (500, why)))
                {
                    Some((status, why)) => {
                        st.violations.push(format!("request {number}: {why}"));
                        Step::error(status, &why)
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
            if let Some(turn) = &turn {
                st.threads.begin(turn);
            }
            (step, request_id, wants_stream, number - 1, turn)
        };
        // However the request ends, a reply it continued and did not replace is free again.
        let _ending = Ending {
            state: state.clone(),
            turn: turn.clone(),
        };
        let hold = |body: &Value, options: Option<&ReplyOptions>| {
            let mut st = state.lock().unwrap();
            st.requests[index].reply_id = body["id"].as_str().map(str::to_owned);
            if let Some(turn) = &turn {
                let held = options
                    .and_then(|o| o.thread_state)
                    .unwrap_or(ThreadState::Held);
                st.threads.hold(turn, body, held);
            }
        };
        let written = match step {
            Step::ReplyWith(body, options) if wants_stream => {
                state.lock().unwrap().requests[index].streamed = true;
                let mut whole = || hold(&body, Some(&options));
                match sse::respond(
                    &mut stream,
                    &body,
                    &options,
                    &request_id,
                    &sent_headers,
                    &mut whole,
                )
                .await
                {
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
            Step::Reply(body) => {
                hold(&body, None);
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
            Step::ReplyWith(body, options) => {
                hold(&body, Some(&options));
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
                details,
            } => {
                let mut body = json!({ "type": "error", "error": { "type": kind, "message": message }, "request_id": request_id });
                if let Some(details) = details {
                    body["error"]["details"] = details;
                }
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

/// Ends a request's turn of a thread however the request ends (answered, reset, hung up on).
struct Ending {
    state: Arc<Mutex<State>>,
    turn: Option<Turn>,
}

impl Drop for Ending {
    fn drop(&mut self) {
        if let (Some(turn), Ok(mut st)) = (&self.turn, self.state.lock()) {
            st.threads.end(turn);
        }
    }
}
