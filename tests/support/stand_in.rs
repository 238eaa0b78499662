//! The strict stand-in of the Messages API (`stand-in/`, the JS server the node tests use) for the
//! Rust tests, listening on 127.0.0.1 and scripted with [`Step`]s. Every stand-in of a test binary
//! lives in one child `node` process, started with the first and driven over its stdin and stdout
//! (`tests/support/stand-in.mjs` says how): a test pays for no node start of its own.
//!
//! Like the API it knows its credentials: [`API_KEY`] and any a test adds with
//! [`Server::accept_credential`]; any other gets the API's 401. A request that breaks the API's
//! rules is answered with the API's own 400 and remembered, as is a request the script has no step
//! left for, a final answer that misses the request's structured-output format (answered 500,
//! unless the step is built `.ignoring_format()`) and a reply whose `require_container` the request
//! does not meet; dropping the server then fails the test. A thread refusal a client recovers from
//! (`thread_not_found`, `thread_already_continued`, `thread_continue_in_flight`,
//! `thread_unsupported_request`) is no broken rule.
//!
//! A stand-in stops when its [`Server`] is dropped (a test that panics too). The child exits when
//! its stdin closes, that is when the test binary ends, however it ends: no node process outlives
//! the tests.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::step::{Step, ThreadState};
use super::API_KEY;

/// Thread refusals a client recovers from: the API's answer, not a rule the client broke.
const RECOVERABLE: [&str; 4] = [
    "thread_not_found",
    "thread_already_continued",
    "thread_continue_in_flight",
    "thread_unsupported_request",
];

/// One request as the stand-in received it.
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
    /// The `request-id` header of its answer.
    pub request_id: String,
    /// The rule it broke (with the thread refusal's `error_code`, when it is one).
    broken: Option<(String, Option<String>)>,
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

    fn read(record: &Value, anchor: (Instant, f64)) -> Recorded {
        let text = |v: &Value| v.as_str().map(str::to_owned);
        let headers = record["headers"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, value)| {
                let value = match value {
                    Value::Array(all) => all
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                    other => other.as_str().unwrap_or_default().to_owned(),
                };
                (name.to_ascii_lowercase(), value)
            })
            .collect();
        let since = (record["receivedAt"].as_f64().unwrap_or(anchor.1) - anchor.1).max(0.0);
        let broken = record["broken"].is_object().then(|| {
            (
                text(&record["broken"]["message"]).unwrap_or_default(),
                text(&record["broken"]["code"]),
            )
        });
        Recorded {
            method: text(&record["method"]).unwrap_or_default(),
            path: text(&record["path"]).unwrap_or_default(),
            headers,
            raw_body: text(&record["rawBody"]).unwrap_or_default(),
            body: record["body"].clone(),
            retry_count: record["retryCount"].as_u64().map(|n| n as u32),
            at: anchor.0 + Duration::from_secs_f64(since / 1000.0),
            betas: record["betas"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(text)
                .collect(),
            streamed: record["streamed"] == true,
            client_closed: record["clientClosed"] == true,
            full_body: record["fullBody"].clone(),
            reply_id: text(&record["replyId"]),
            request_id: text(&record["requestId"]).unwrap_or_default(),
            broken,
        }
    }
}

/// The child `node` process and the two ends of its control channel.
struct Hub {
    /// Held so the process is not reaped early; it exits when `stdin` closes.
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// The test binary's one child process, started on first use.
fn hub() -> &'static Mutex<Hub> {
    static HUB: OnceLock<Mutex<Hub>> = OnceLock::new();
    HUB.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/stand-in.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start `node tests/support/stand-in.mjs` (is node on PATH?)");
        let stdin = child.stdin.take().expect("the child's stdin");
        let stdout = BufReader::new(child.stdout.take().expect("the child's stdout"));
        Mutex::new(Hub {
            _child: child,
            stdin,
            stdout,
        })
    })
}

/// Sends one command and reads the one line that answers it; panics when the stand-in fails.
fn ask(command: &Value) -> Value {
    exchange(command).unwrap_or_else(|why| panic!("{why}"))
}

/// Sends one command and reads the one line that answers it, or says why there is none.
fn exchange(command: &Value) -> Result<Value, String> {
    let mut io = hub().lock().unwrap_or_else(|e| e.into_inner());
    writeln!(io.stdin, "{command}").map_err(|e| format!("write to the stand-in: {e}"))?;
    io.stdin
        .flush()
        .map_err(|e| format!("flush to the stand-in: {e}"))?;
    let mut line = String::new();
    let read = io
        .stdout
        .read_line(&mut line)
        .map_err(|e| format!("read from the stand-in: {e}"))?;
    drop(io);
    if read == 0 {
        return Err("the stand-in's process exited (see its stderr above)".to_owned());
    }
    let answer: Value =
        serde_json::from_str(&line).map_err(|e| format!("the stand-in said {line:?}: {e}"))?;
    match answer.get("error") {
        Some(error) => Err(format!(
            "the stand-in failed: {}",
            error.as_str().unwrap_or_default()
        )),
        None => Ok(answer),
    }
}

/// One stand-in; it stops when this is dropped.
pub struct Server {
    id: u64,
    url: String,
    /// The test's clock at the stand-in's `now`, to place each request's arrival.
    anchor: (Instant, f64),
    /// How many requests' broken rules a test has taken already ([`Server::take_violations`]).
    taken: Mutex<usize>,
}

impl Server {
    /// Starts a stand-in on an ephemeral loopback port, answering with `steps` in order.
    pub async fn start(steps: impl IntoIterator<Item = Step>) -> Server {
        let steps: Vec<Value> = steps.into_iter().map(|s| s.to_js()).collect();
        let ready = ask(&json!({ "op": "start", "keys": [API_KEY], "steps": steps }));
        Server {
            id: ready["id"].as_u64().expect("the stand-in's id"),
            url: ready["url"]
                .as_str()
                .expect("the stand-in's url")
                .to_owned(),
            anchor: (
                Instant::now(),
                ready["now"].as_f64().expect("the stand-in's clock"),
            ),
            taken: Mutex::new(0),
        }
    }

    /// Sends `command` to this stand-in.
    fn command(&self, mut command: Value) -> Value {
        command["id"] = json!(self.id);
        ask(&command)
    }

    /// `http://127.0.0.1:<port>`, without `/v1`.
    pub fn base_url(&self) -> String {
        self.url.clone()
    }

    /// Also takes `credential` (an API key or auth token) as valid, besides [`API_KEY`]: for
    /// a test that runs with a credential of its own. Any other is refused with the API's 401.
    pub fn accept_credential(&self, credential: &str) {
        self.command(json!({ "op": "accept", "credential": credential }));
    }

    /// Puts the held reply `id` in `state`: lost, continued, in flight elsewhere, or held again.
    pub fn set_thread(&self, id: &str, state: ThreadState) {
        self.command(json!({ "op": "set_thread", "thread": id, "state": state.name() }));
    }

    /// Makes Threads refuse requests that use what `names` name (`thread_unsupported_request`).
    pub fn refuse_in_threads(&self, names: &[&str]) {
        self.command(json!({ "op": "refuse", "names": names }));
    }

    /// The conversation held under reply `id` (`system`, `tools`, `messages`), if it is held.
    pub fn held_conversation(&self, id: &str) -> Option<Value> {
        Some(self.command(json!({ "op": "held", "thread": id }))).filter(|v| !v.is_null())
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        let all = self.command(json!({ "op": "requests" }));
        all.as_array()
            .expect("the stand-in's records")
            .iter()
            .map(|r| Recorded::read(r, self.anchor))
            .collect()
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

    /// Every rule broken so far that no test took (`request N: <the stand-in's words>`), and how
    /// many requests there are.
    fn broken(&self) -> (Vec<String>, usize) {
        let taken = *self.taken.lock().unwrap_or_else(|e| e.into_inner());
        let requests = self.requests();
        let broken = requests
            .iter()
            .enumerate()
            .skip(taken)
            .filter_map(|(i, r)| {
                let (message, code) = r.broken.as_ref()?;
                let recoverable = code.as_deref().is_some_and(|c| RECOVERABLE.contains(&c));
                (!recoverable).then(|| format!("request {}: {message}", i + 1))
            })
            .collect();
        (broken, requests.len())
    }

    /// Every rule the engine broke so far.
    pub fn violations(&self) -> Vec<String> {
        self.broken().0
    }

    /// Takes the rules broken so far, so that dropping the server does not fail the test: for a
    /// test that sends bad requests on purpose to see how they are answered.
    pub fn take_violations(&self) -> Vec<String> {
        let (broken, seen) = self.broken();
        *self.taken.lock().unwrap_or_else(|e| e.into_inner()) = seen;
        broken
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let violations = if std::thread::panicking() {
            Vec::new()
        } else {
            self.violations()
        };
        // No second panic while a test unwinds: a stand-in left open goes with the process.
        let _ = exchange(&json!({ "op": "close", "id": self.id }));
        if !violations.is_empty() {
            panic!(
                "the engine broke the API's rules:\n{}",
                violations.join("\n")
            );
        }
    }
}
