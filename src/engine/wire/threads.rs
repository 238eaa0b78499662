//! Sending only the new turn: a run keeps its conversation on the API (its Threads, beta
//! `message-threads-2026-08-12`), as the official tool runner does by default. The first request
//! sends the whole history and starts a thread; each later one sends only the messages after the
//! previous reply, without `system` and `tools`, which the thread holds. When the API can no longer
//! continue it (the thread was lost, or that reply was already or is being continued) the run
//! replays the whole history in a new thread; when it cannot hold this run's requests at all, the
//! run goes on sending the whole history without a thread. None of it changes the history the run
//! keeps and returns.

use serde_json::value::{to_raw_value, RawValue};

use crate::engine::json::ordered_fields::Fields;
use crate::engine::wire::protocol::RawMessage;

/// The beta the API's Threads need, added to `anthropic-beta` while a run threads.
pub const THREADS_BETA: &str = "message-threads-2026-08-12";

/// The `thread` field of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadField<'a> {
    /// Start a thread with the whole history.
    Create,
    /// Continue from this reply with only what came after it.
    Continue(&'a str),
}

impl ThreadField<'_> {
    /// The field's JSON.
    pub fn json(&self) -> String {
        match self {
            ThreadField::Create => r#"{"type":"create"}"#.to_owned(),
            ThreadField::Continue(id) => format!(
                r#"{{"type":"continue","previous_message_id":{}}}"#,
                serde_json::to_string(id).expect("a string serialises")
            ),
        }
    }
}

/// Where the run's conversation stands with the API.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Anchor {
    /// Threads are off (`apiThreads: false`): the whole history, as given, every time.
    Off,
    /// The API cannot hold this run's requests: the whole history, without a thread.
    Unthreaded,
    /// The next request starts a thread; `replaces_lost`: the one before was lost.
    Create { replaces_lost: bool },
    /// The next request continues from reply `id`, held with the first `held` messages.
    Continue {
        id: String,
        held: usize,
        replaces_lost: bool,
    },
}

/// What one request sends: its `thread`, the history from message `from` on, and the
/// `cache_control` markers of the messages before `strip_before` left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan<'a> {
    /// The request's `thread` field, if it has one.
    pub thread: Option<ThreadField<'a>>,
    /// The first message sent.
    pub from: usize,
    /// The messages before this one were answered already: their cache markers are left out,
    /// as the official SDK does (sent again all at once, they could pass what one request may
    /// hold).
    pub strip_before: usize,
}

/// What the thread needs to know of a reply.
#[derive(Debug, Clone, Copy, Default)]
pub struct Replied<'a> {
    /// The reply's `id`, the one a continue names.
    pub id: Option<&'a str>,
    /// It answers the new thread sent after an attempt's stream was cut.
    pub after_cut: bool,
    /// A fallback model wrote it (a `fallback_message` usage iteration).
    pub fallback: bool,
}

/// A run's thread on the API.
#[derive(Debug)]
pub struct ApiThread {
    anchor: Anchor,
    /// The messages up to the last reply (the ones a model already answered).
    answered: usize,
}

impl ApiThread {
    /// A run's thread: started by its first request when `on`, else never used.
    pub fn new(on: bool) -> Self {
        ApiThread {
            anchor: if on {
                Anchor::Create {
                    replaces_lost: false,
                }
            } else {
                Anchor::Off
            },
            answered: 0,
        }
    }

    /// What the next request sends.
    pub fn plan(&self) -> Plan<'_> {
        match &self.anchor {
            Anchor::Off => Plan {
                thread: None,
                from: 0,
                strip_before: 0,
            },
            Anchor::Unthreaded => Plan {
                thread: None,
                from: 0,
                strip_before: self.answered,
            },
            Anchor::Create { .. } => self.replay(),
            Anchor::Continue { id, held, .. } => Plan {
                thread: Some(ThreadField::Continue(id)),
                from: *held,
                strip_before: 0,
            },
        }
    }

    /// What a request that continues the thread sends instead should its streamed reply be cut
    /// once it began: the API then holds the whole reply or none of it, and which one cannot be
    /// told, so only a new thread is safe.
    pub fn restart(&self) -> Option<Plan<'_>> {
        matches!(self.anchor, Anchor::Continue { .. }).then(|| self.replay())
    }

    /// The whole history in a new thread.
    fn replay(&self) -> Plan<'_> {
        Plan {
            thread: Some(ThreadField::Create),
            from: 0,
            strip_before: self.answered,
        }
    }

    /// A reply came: the API holds the conversation up to it when the request had a thread.
    /// `sent`: the messages the request stood for (the whole history); `joins`: the reply
    /// continues the last of them (a paused turn), so it becomes that message rather than one
    /// more.
    pub fn replied(&mut self, reply: Replied<'_>, sent: usize, joins: bool) {
        let held = if joins { sent } else { sent + 1 };
        self.answered = held;
        let replaces_lost = match &self.anchor {
            Anchor::Off | Anchor::Unthreaded => return,
            Anchor::Create { replaces_lost } => *replaces_lost && !reply.after_cut,
            Anchor::Continue { .. } => false,
        };
        self.anchor = match reply.id {
            // The API does not hold a reply a fallback model wrote.
            Some(id) if !reply.fallback => Anchor::Continue {
                id: id.to_owned(),
                held,
                replaces_lost,
            },
            _ => Anchor::Create {
                replaces_lost: false,
            },
        };
    }

    /// Whether the request just refused (its `error.details.error_code` is `code`) is one the
    /// run recovers from by sending its turn again, differently: in a new thread when the API
    /// can no longer continue this one, without a thread when it cannot hold the request — or
    /// when the thread a replay just made was lost again (the API may be unable to hold it).
    pub fn recovers_from(&mut self, code: Option<&str>) -> bool {
        let continuing = match &self.anchor {
            Anchor::Continue { replaces_lost, .. } => Some(*replaces_lost),
            Anchor::Create { .. } => None,
            Anchor::Off | Anchor::Unthreaded => return false,
        };
        match (code, continuing) {
            (Some("thread_not_found"), Some(true)) => {
                tracing::info!(
                    "api thread: lost again right after a replay; going on without a thread"
                );
                self.anchor = Anchor::Unthreaded;
            }
            (
                Some(
                    code @ ("thread_not_found"
                    | "thread_already_continued"
                    | "thread_continue_in_flight"),
                ),
                Some(_),
            ) => {
                tracing::info!(
                    reason = code,
                    "api thread: replaying the whole history in a new thread"
                );
                self.anchor = Anchor::Create {
                    replaces_lost: code == "thread_not_found",
                };
            }
            (Some("thread_unsupported_request"), _) => {
                tracing::info!(
                    "api thread: the API cannot hold this request; going on without a thread"
                );
                self.anchor = Anchor::Unthreaded;
            }
            _ => return false,
        }
        true
    }
}

/// The messages a request sends: from `plan.from` on, those before `plan.strip_before` without
/// their cache markers (each a shared copy unless it had one).
pub fn sent_messages(messages: &[RawMessage], plan: &Plan) -> Vec<RawMessage> {
    let from = plan.from.min(messages.len());
    messages[from..]
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if from + i >= plan.strip_before {
                return m.clone();
            }
            let raw: Option<&RawValue> = serde_json::from_str(m.get()).ok();
            raw.and_then(without_cache_control)
                .map_or_else(|| m.clone(), RawMessage::from)
        })
        .collect()
}

/// The members where a message, a block or a tool holds blocks or tools of its own (those the
/// official SDK looks in); any other member is kept as written.
const NESTED: [&str; 5] = ["content", "source", "tool", "definition", "tool_references"];

/// `value` (a message, a block, or a list of them) without its `cache_control` and that of the
/// blocks and tools in it, everything else as written; `None` when it has none.
fn without_cache_control(value: &RawValue) -> Option<Box<RawValue>> {
    let text = value.get();
    if !text.contains("\"cache_control\"") {
        return None;
    }
    if text.trim_start().starts_with('[') {
        let items: Vec<Box<RawValue>> = serde_json::from_str(text).ok()?;
        let items: Vec<Box<RawValue>> = items
            .into_iter()
            .map(|item| without_cache_control(&item).unwrap_or(item))
            .collect();
        return to_raw_value(&items).ok();
    }
    let mut fields: Fields = serde_json::from_str(text).ok()?;
    fields.remove("cache_control");
    for key in NESTED {
        if let Some(inner) = fields.get(key).and_then(without_cache_control) {
            fields.set(key, inner);
        }
    }
    let mut out = String::with_capacity(text.len());
    fields.write(&mut out);
    RawValue::from_string(out).ok()
}

#[cfg(test)]
mod tests;
