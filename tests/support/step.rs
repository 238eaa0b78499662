//! The script's steps: what the stand-in answers a request with (a reply, an API error, any
//! body, a reset or a hang), and the options of a streamed reply.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{json, Value};

/// What became of a held reply (Threads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadState {
    /// Held, and may be continued.
    Held,
    /// Continued once already.
    Continued,
    /// A request is continuing it now.
    InFlight,
    /// Forgotten (expired, lost): continuing it is `thread_not_found`.
    Lost,
}

impl ThreadState {
    /// The stand-in's name of the state.
    pub fn name(self) -> &'static str {
        match self {
            ThreadState::Held => "held",
            ThreadState::Continued => "continued",
            ThreadState::InFlight => "in_flight",
            ThreadState::Lost => "lost",
        }
    }
}

/// How a reply is streamed, and what the request it answers must carry.
#[derive(Debug, Clone, Default)]
pub struct ReplyOptions {
    /// The request must send `container` with this id (else the API's 400).
    pub require_container: Option<String>,
    /// The pause between streamed events (zero: just yield).
    pub stream_delay: Duration,
    /// After this many events, an `event: error` with `(error.type, error.message)`, then the end.
    pub sse_error_after: Option<(usize, String, String)>,
    /// The `error.details` of that event (`{"error_code": …}`), when it has any.
    pub sse_error_details: Option<Value>,
    /// After this many events the connection is reset (no message_stop).
    pub sse_cut_after: Option<usize>,
    /// A content_block_delta of this unknown type in the first block.
    pub unknown_delta: Option<String>,
    /// Sent even when it is a final answer that breaks the request's structured-output format.
    pub ignore_format: bool,
    /// What becomes of the reply once a thread holds it (lost, continued, in flight elsewhere).
    pub thread_state: Option<ThreadState>,
}

/// One answer of the script.
#[derive(Debug, Clone)]
pub enum Step {
    /// HTTP 200 with this Messages API response (streamed when the request asks for it).
    Reply(Value),
    /// A reply with options.
    ReplyWith(Value, ReplyOptions),
    /// An HTTP error with the API's error body (and its `error.details`) and these extra headers.
    Error {
        status: u16,
        kind: String,
        message: String,
        headers: Vec<(String, String)>,
        /// The body's `error.details` (`{"error_code": …}`), when it has any.
        details: Option<Value>,
    },
    /// Any status and body, as given.
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
    /// A valid message this many bytes long (one long text block), with its content-length.
    Huge(usize),
    /// The connection is closed without an answer once the request is read.
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

    /// A reply with this content and stop reason, usage 10 in / 5 out, and an id of its own
    /// (`msg_test_N`), as every reply of the API has.
    pub fn reply(content: Value, stop_reason: &str) -> Step {
        static REPLIES: AtomicUsize = AtomicUsize::new(0);
        let n = REPLIES.fetch_add(1, Ordering::Relaxed) + 1;
        Step::Reply(json!({
            "id": format!("msg_test_{n}"),
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

    /// Puts these `usage.iterations` on a reply (one entry per sampling iteration: a compaction's
    /// and the message's), keeping the rest of its usage.
    pub fn iterations(self, iterations: Value) -> Step {
        self.edit(|body, _| body["usage"]["iterations"] = iterations)
    }

    /// Puts a top-level `context_management` (`{"applied_edits": […]}`) on a reply.
    pub fn context_management(self, managed: Value) -> Step {
        self.edit(|body, _| body["context_management"] = managed)
    }

    /// A reply that pauses after a compaction: the block alone, stop reason `compaction`, no
    /// message tokens, and the compaction's usage iteration (`input` / `output` tokens).
    pub fn compaction_pause(block: Value, input: u64, output: u64) -> Step {
        Step::reply(json!([block]), "compaction")
            .usage(json!({ "input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 }))
            .iterations(json!([{ "type": "compaction", "input_tokens": input, "output_tokens": output, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0 }]))
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

    /// Sends this reply even when it breaks the request's structured-output format (a final answer
    /// that is not JSON matching the schema): for a test of a client reading a broken answer.
    pub fn ignoring_format(self) -> Step {
        self.edit(|_, o| o.ignore_format = true)
    }

    /// Once a thread holds this reply, it is `state` at once: lost (its continue is
    /// `thread_not_found`), continued, or in flight elsewhere.
    pub fn thread_state(self, state: ThreadState) -> Step {
        self.edit(|_, o| o.thread_state = Some(state))
    }

    /// The reply sent byte for byte as serde_json writes it (`10.0` stays `10.0`; the stand-in is
    /// JavaScript, whose numbers forget how they were written), as a plain JSON body: for a request
    /// that does not stream.
    pub fn verbatim(self) -> Step {
        match self {
            Step::Reply(body) | Step::ReplyWith(body, _) => Step::Raw {
                status: 200,
                content_type: "application/json".to_owned(),
                body: body.to_string(),
            },
            other => panic!("verbatim() of {other:?}"),
        }
    }

    /// The reply's `id`.
    pub fn id(&self) -> String {
        match self {
            Step::Reply(body) | Step::ReplyWith(body, _) => {
                body["id"].as_str().unwrap_or_default().to_owned()
            }
            other => panic!("id() of {other:?}"),
        }
    }

    /// The step in the JS stand-in's shapes (`stand-in/index.mjs`).
    pub fn to_js(&self) -> Value {
        match self {
            Step::Reply(body) => reply_js(body, &ReplyOptions::default()),
            Step::ReplyWith(body, options) => reply_js(body, options),
            Step::Error {
                status,
                kind,
                message,
                headers,
                details,
            } => {
                let mut error = json!({ "type": kind, "message": message });
                if let Some(details) = details {
                    error["details"] = details.clone();
                }
                let headers: serde_json::Map<String, Value> = headers
                    .iter()
                    .map(|(name, value)| (name.clone(), json!(value)))
                    .collect();
                json!({ "status": status, "error": error, "headers": headers })
            }
            Step::Raw {
                status,
                content_type,
                body,
            } => {
                json!({ "status": status, "body": body, "headers": { "content-type": content_type } })
            }
            Step::Huge(bytes) => json!({ "fault": "huge", "bytes": bytes }),
            Step::Reset => json!({ "fault": "reset" }),
            Step::Hang => json!({ "fault": "hang" }),
        }
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
            details: None,
        }
    }

    /// Gives an API error, or the error event of a streamed reply (`sse_error_after`), the
    /// `error.details` `{"error_code": code}` the API names the cause with.
    pub fn error_code(self, code: &str) -> Step {
        let details = json!({ "error_code": code });
        match self {
            Step::Error {
                status,
                kind,
                message,
                headers,
                ..
            } => Step::Error {
                status,
                kind,
                message,
                headers,
                details: Some(details),
            },
            reply => reply.edit(|_, o| o.sse_error_details = Some(details)),
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

/// A reply step for the JS stand-in: the message's own fields (its `id` too) and the options.
fn reply_js(body: &Value, options: &ReplyOptions) -> Value {
    let mut step = json!({});
    for key in [
        "id",
        "model",
        "content",
        "stop_reason",
        "stop_sequence",
        "usage",
        "container",
        "stop_details",
        "context_management",
    ] {
        if let Some(value) = body.get(key) {
            step[key] = value.clone();
        }
    }
    if let Some(id) = &options.require_container {
        step["requireContainer"] = json!(id);
    }
    if !options.stream_delay.is_zero() {
        step["streamDelayMs"] = json!(options.stream_delay.as_secs_f64() * 1000.0);
    }
    if let Some((n, kind, message)) = &options.sse_error_after {
        step["sseErrorAfter"] = json!(n);
        step["sseError"] = json!({ "type": kind, "message": message });
        if let Some(details) = &options.sse_error_details {
            step["sseError"]["details"] = details.clone();
        }
    }
    if let Some(n) = options.sse_cut_after {
        step["sseCutAfter"] = json!(n);
    }
    if let Some(kind) = &options.unknown_delta {
        step["unknownDelta"] = json!(kind);
    }
    if options.ignore_format {
        step["ignoresFormat"] = json!(true);
    }
    if let Some(state) = options.thread_state {
        step["threadState"] = json!(state.name());
    }
    step
}
