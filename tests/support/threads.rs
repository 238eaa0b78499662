//! Threads (beta `message-threads-2026-08-12`): the conversation the API holds between turns,
//! the same rules as the JS stand-in's `stand-in/threads.mjs`. A request with
//! `thread: {"type": "create"}` has its whole conversation (system, tools, messages and the reply)
//! held under the reply's `id`; `{"type": "continue", "previous_message_id"}` sends only the
//! messages after that reply, put after what is held before every usual rule checks the whole.
//!
//! - each reply is continued at most once (`thread_already_continued`), by one request at a time
//!   (`thread_continue_in_flight`); an id not held is `thread_not_found` (404);
//! - `system` and `tools` are the thread's: left out, or repeated as they were; a different value
//!   is `thread_fingerprint_mismatch`;
//! - `messages: []` continues only a reply whose turn is unfinished (pause_turn, compaction); the
//!   reply that continues it joins that turn's assistant message;
//! - a reply is held once whole: a stream cut or failed before message_stop holds nothing; a
//!   reply a fallback model wrote (a `fallback_message` usage iteration) is not held either;
//! - `thread_unsupported_request` for what a test says Threads do not support
//!   ([`Threads::refuse`]: `thinking`, `context_management`, `cache_control` where the request has
//!   them; any other name, an organization setting, refuses every thread request).
//!
//! Every refusal carries `error.details.error_code`.

use std::collections::{HashMap, VecDeque};

use serde_json::{json, Map, Value};

/// The beta the `thread` field needs.
pub const THREADS_BETA: &str = "message-threads-2026-08-12";

/// Conversations held at once; the oldest expire first.
const HELD_LIMIT: usize = 20_000;

/// The API's words when a continue sends no message and the reply it continues finished its turn.
pub const EMPTY_CONTINUE: &str = "messages: at least one message is required (an empty list only continues a reply that stopped with pause_turn or compaction)";

/// What became of a held reply.
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

struct Entry {
    system: Option<Value>,
    tools: Option<Value>,
    messages: Vec<Value>,
    unfinished: bool,
    state: ThreadState,
    /// The request (its number) that has it in flight.
    flight: usize,
}

/// One request's turn of a thread: the whole conversation the rules check, and the reply it
/// continues.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The held conversation with the request's messages after it (`thread` taken out).
    pub full: Value,
    /// The reply it continues (`None` for a create).
    pub previous: Option<String>,
    /// The request's number.
    pub number: usize,
}

/// A thread request the API refuses: its status, `error.type`, words and `error.details`.
#[derive(Debug, Clone)]
pub struct Refused {
    pub status: u16,
    pub kind: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl Refused {
    fn invalid(message: impl Into<String>) -> Refused {
        Refused {
            status: 400,
            kind: "invalid_request_error",
            message: message.into(),
            details: None,
        }
    }

    fn coded(status: u16, code: &str, message: String, unsupported: Option<&[String]>) -> Refused {
        let mut details = json!({ "error_code": code });
        if let Some(names) = unsupported {
            details["unsupported"] = json!(names);
        }
        Refused {
            status,
            kind: if status == 404 {
                "not_found_error"
            } else {
                "invalid_request_error"
            },
            message,
            details: Some(details),
        }
    }

    /// The refusal's `error_code`, if it has one.
    pub fn code(&self) -> Option<&str> {
        self.details.as_ref()?["error_code"].as_str()
    }

    /// A refusal a client is expected to recover from (a thread lost, spent, busy, or one the
    /// server cannot hold), as opposed to a request no client should send.
    pub fn recoverable(&self) -> bool {
        matches!(
            self.code(),
            Some(
                "thread_not_found"
                    | "thread_already_continued"
                    | "thread_continue_in_flight"
                    | "thread_unsupported_request"
            )
        )
    }
}

/// The held threads of one test server.
#[derive(Default)]
pub struct Threads {
    held: HashMap<String, Entry>,
    order: VecDeque<String>,
    unsupported: Vec<String>,
}

/// Whether the request uses `feature` (a name of `details.unsupported`).
fn uses(body: &Value, feature: &str) -> bool {
    match feature {
        "cache_control" => body.to_string().contains("\"cache_control\""),
        "thinking" => body["thinking"].is_object() && body["thinking"]["type"] != "disabled",
        "context_management" => !body["context_management"].is_null(),
        _ => true,
    }
}

/// The conversation held after `reply` answered `messages`: a reply to a final assistant message
/// continues it.
fn with_reply(mut messages: Vec<Value>, reply: &Value) -> Vec<Value> {
    let content = reply["content"].as_array().cloned().unwrap_or_default();
    match messages.last_mut() {
        Some(last) if last["role"] == "assistant" => {
            let mut blocks = match &last["content"] {
                Value::String(text) => vec![json!({ "type": "text", "text": text })],
                Value::Array(blocks) => blocks.clone(),
                _ => Vec::new(),
            };
            blocks.extend(content);
            last["content"] = Value::Array(blocks);
        }
        _ => messages.push(json!({ "role": "assistant", "content": content })),
    }
    messages
}

impl Threads {
    fn keep(&mut self, id: &str, entry: Entry) {
        if self.held.insert(id.to_owned(), entry).is_none() {
            self.order.push_back(id.to_owned());
        }
        while self.held.len() > HELD_LIMIT {
            match self.order.pop_front() {
                Some(oldest) => {
                    self.held.remove(&oldest);
                }
                None => break,
            }
        }
    }

    /// Makes Threads refuse what `names` name; none refuses nothing again.
    pub fn refuse(&mut self, names: &[&str]) {
        self.unsupported = names.iter().map(|n| (*n).to_owned()).collect();
    }

    /// Puts the held reply `id` in `state` (a reply not held is held as spent or busy).
    pub fn set(&mut self, id: &str, state: ThreadState) {
        match (self.held.get_mut(id), state) {
            (_, ThreadState::Lost) => {
                self.held.remove(id);
            }
            (Some(entry), _) => entry.state = state,
            (None, ThreadState::Held) => {}
            (None, _) => self.keep(
                id,
                Entry {
                    system: None,
                    tools: None,
                    messages: Vec::new(),
                    unfinished: false,
                    state,
                    flight: 0,
                },
            ),
        }
    }

    /// The conversation held under reply `id` (`messages`, `system`, `tools`), if it is held.
    pub fn conversation(&self, id: &str) -> Option<Value> {
        let entry = self
            .held
            .get(id)
            .filter(|e| e.state != ThreadState::Continued)?;
        Some(json!({ "system": entry.system, "tools": entry.tools, "messages": entry.messages }))
    }

    /// The request's turn: `None` without `thread`, else the whole conversation the rules check
    /// and the reply it continues; or the API's refusal. `number` is the request's.
    pub fn open(
        &self,
        body: &Value,
        betas: &[String],
        number: usize,
    ) -> Result<Option<Turn>, Refused> {
        let Some(thread) = body.get("thread").filter(|t| !t.is_null()) else {
            return Ok(None);
        };
        if !betas.iter().any(|b| b == THREADS_BETA) {
            return Err(Refused::invalid("thread: Extra inputs are not permitted"));
        }
        let Some(fields) = thread.as_object() else {
            return Err(Refused::invalid(
                "thread: Input should be a valid dictionary",
            ));
        };
        let kind = thread["type"].as_str().unwrap_or_default();
        let allowed: &[&str] = match kind {
            "create" => &["type"],
            "continue" => &["type", "previous_message_id"],
            _ => {
                return Err(Refused::invalid(format!(
                    "thread: Input tag '{}' found using 'type' does not match any of the expected tags: 'create', 'continue'",
                    thread["type"].as_str().unwrap_or("None")
                )))
            }
        };
        if let Some(extra) = fields.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(Refused::invalid(format!(
                "thread.{kind}.{extra}: Extra inputs are not permitted"
            )));
        }
        let previous = if kind == "continue" {
            match thread.get("previous_message_id") {
                None => {
                    return Err(Refused::invalid(
                        "thread.continue.previous_message_id: Field required",
                    ))
                }
                Some(Value::String(id)) => Some(id.clone()),
                Some(_) => {
                    return Err(Refused::invalid(
                        "thread.continue.previous_message_id: Input should be a valid string",
                    ))
                }
            }
        } else {
            None
        };
        let refused: Vec<String> = self
            .unsupported
            .iter()
            .filter(|n| uses(body, n))
            .cloned()
            .collect();
        if !refused.is_empty() {
            return Err(Refused::coded(
                400,
                "thread_unsupported_request",
                format!(
                    "thread: Threads do not support {}. Send the full conversation without `thread`, or change that field.",
                    refused.join(", ")
                ),
                Some(&refused),
            ));
        }
        let mut full: Map<String, Value> = body.as_object().cloned().unwrap_or_default();
        full.remove("thread");
        let Some(id) = previous else {
            return Ok(Some(Turn {
                full: Value::Object(full),
                previous: None,
                number,
            }));
        };
        let entry = match self.held.get(&id) {
            None | Some(Entry { state: ThreadState::Lost, .. }) => return Err(Refused::coded(
                404,
                "thread_not_found",
                format!("thread: No usable Thread state was found for previous_message_id \"{id}\". Replay the full conversation with thread: {{\"type\": \"create\"}} to start a new Thread."),
                None,
            )),
            Some(Entry { state: ThreadState::Continued, .. }) => return Err(Refused::coded(
                400,
                "thread_already_continued",
                format!("thread: The response {id} has already been continued, and each response can be continued only once. Continue from the Thread's most recent response id."),
                None,
            )),
            Some(Entry { state: ThreadState::InFlight, .. }) => return Err(Refused::coded(
                400,
                "thread_continue_in_flight",
                format!("thread: Another request is still continuing from {id}. Wait for it to complete and continue from its response id, or replay the full conversation with thread: {{\"type\": \"create\"}}."),
                None,
            )),
            Some(entry) => entry,
        };
        let differ: Vec<String> = [("system", &entry.system), ("tools", &entry.tools)]
            .into_iter()
            .filter(|(f, held)| body.get(*f).is_some_and(|sent| Some(sent) != held.as_ref()))
            .map(|(f, _)| format!("`{f}`"))
            .collect();
        if !differ.is_empty() {
            return Err(Refused::coded(
                400,
                "thread_fingerprint_mismatch",
                format!(
                    "thread: {} differ{} from the value stored with the Thread. Send the stored values, or replay the full conversation with thread: {{\"type\": \"create\"}} to change them.",
                    differ.join(" and "),
                    if differ.len() == 1 { "s" } else { "" }
                ),
                None,
            ));
        }
        let Some(sent) = body.get("messages") else {
            return Err(Refused::invalid("messages: Field required"));
        };
        let Some(sent) = sent.as_array() else {
            return Err(Refused::invalid("messages: Input should be a valid list"));
        };
        if sent.is_empty() && !entry.unfinished {
            return Err(Refused::invalid(EMPTY_CONTINUE));
        }
        for (field, held) in [("system", &entry.system), ("tools", &entry.tools)] {
            if let (false, Some(held)) = (full.contains_key(field), held) {
                full.insert(field.to_owned(), held.clone());
            }
        }
        let mut messages = entry.messages.clone();
        messages.extend(sent.iter().cloned());
        full.insert("messages".into(), Value::Array(messages));
        Ok(Some(Turn {
            full: Value::Object(full),
            previous: Some(id),
            number,
        }))
    }

    /// The turn's request is being answered: the reply it continues is in flight until `end`.
    pub fn begin(&mut self, turn: &Turn) {
        if let Some(entry) = turn.previous.as_ref().and_then(|id| self.held.get_mut(id)) {
            entry.state = ThreadState::InFlight;
            entry.flight = turn.number;
        }
    }

    /// The turn's reply is whole: the conversation with it is held under its id, in `state`, and
    /// the reply it continued is spent.
    pub fn hold(&mut self, turn: &Turn, reply: &Value, state: ThreadState) {
        let Some(id) = reply["id"].as_str() else {
            return;
        };
        if let Some(entry) = turn.previous.as_ref().and_then(|p| self.held.get_mut(p)) {
            *entry = Entry {
                system: None,
                tools: None,
                messages: Vec::new(),
                unfinished: false,
                state: ThreadState::Continued,
                flight: 0,
            };
        }
        let fallback = reply["usage"]["iterations"]
            .as_array()
            .is_some_and(|its| its.iter().any(|it| it["type"] == "fallback_message"));
        if state == ThreadState::Lost || fallback {
            return;
        }
        let messages = turn.full["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let stop = reply["stop_reason"].as_str().unwrap_or_default();
        self.keep(
            id,
            Entry {
                system: turn.full.get("system").cloned(),
                tools: turn.full.get("tools").cloned(),
                messages: with_reply(messages, reply),
                unfinished: matches!(stop, "pause_turn" | "compaction"),
                state,
                flight: 0,
            },
        );
    }

    /// The turn's request is over: a reply it continued and did not replace may be continued
    /// again.
    pub fn end(&mut self, turn: &Turn) {
        if let Some(entry) = turn.previous.as_ref().and_then(|id| self.held.get_mut(id)) {
            if entry.state == ThreadState::InFlight && entry.flight == turn.number {
                entry.state = ThreadState::Held;
            }
        }
    }
}
