//! What a traced run tells of each request it sends: when it started and ended, what it asked
//! for and what came back (or how it failed), and — only when content is recorded — the
//! messages. The binding makes OpenTelemetry spans of it; a request and its retries are one
//! record, timed on the engine's threads where the work happened.

use std::time::Instant;

use crate::engine::report::usage::ApiUsage;

/// How a run is traced (the `telemetry` option), when it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Telemetry {
    /// Record the messages, tool inputs and tool outputs (`recordContent`). Off by default:
    /// they are the users' words and data.
    pub record_content: bool,
}

/// One request to the API, as a trace tells it.
#[derive(Debug, Clone)]
pub struct RequestTrace {
    /// The step it was sent for (0 is the first).
    pub step: u32,
    /// When its first attempt began.
    pub started: Instant,
    /// When it was answered, or failed for good.
    pub ended: Instant,
    /// The model asked for.
    pub model: String,
    /// Its `max_tokens`.
    pub max_tokens: u32,
    /// Its reply was streamed.
    pub stream: bool,
    /// Its sampling settings, as given.
    pub settings: Settings,
    /// The host and port it went to.
    pub server: Option<(String, u16)>,
    /// It asked for a JSON answer (`output`).
    pub json_output: bool,
    /// What came back.
    pub outcome: Result<Answered, Failed>,
    /// The messages, when content is recorded.
    pub content: Option<Content>,
}

/// A request's sampling settings (`gen_ai.request.*`), those the run gave.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// `top_k`.
    pub top_k: Option<u64>,
    /// `stop_sequences`.
    pub stop_sequences: Option<Vec<String>>,
}

/// What an answered request got back.
#[derive(Debug, Clone)]
pub struct Answered {
    /// The message's `id`.
    pub id: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// Its `stop_reason`.
    pub stop_reason: Option<String>,
    /// Its tokens.
    pub usage: ApiUsage,
}

/// How a request failed.
#[derive(Debug, Clone)]
pub struct Failed {
    /// The run's error code for it.
    pub code: &'static str,
    /// The HTTP status of the API's answer, when there was one.
    pub status: Option<u16>,
    /// The error's message (the run's secrets already taken out).
    pub message: String,
}

/// A request's messages in the conventions' JSON form (`gen_ai.*.messages`).
#[derive(Debug, Clone)]
pub struct Content {
    /// `gen_ai.system_instructions`.
    pub system: Option<String>,
    /// `gen_ai.input.messages`: the history as sent.
    pub input: String,
    /// `gen_ai.output.messages`: the reply.
    pub output: Option<String>,
}
