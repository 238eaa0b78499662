//! A traced request on its way: started with what it asks for, ended with what came back (or
//! how it failed), and told to the observer then. A request and its retries are one record,
//! timed on the engine's threads where the work happened; what the record holds is
//! `request.rs`.

mod content;

use std::time::Instant;

use crate::engine::error::RunError;
use crate::engine::run::config::RunConfig;
use crate::engine::trace::events::{EventSink, RunEvent};
use crate::engine::trace::request::{Answered, Content, Failed, RequestTrace, Settings};
use crate::engine::wire::protocol::{MessageResponse, RawMessage};
use crate::engine::wire::redact::Redactor;

/// The most of a reply's `id` or `model` a trace keeps: they are the API's (or a gateway's)
/// words, and a span attribute is no place for a page of them.
const MAX_FIELD: usize = 256;

impl Settings {
    fn of(cfg: &RunConfig) -> Self {
        Settings {
            temperature: cfg.temperature,
            top_p: field(cfg, "top_p"),
            top_k: field(cfg, "top_k"),
            stop_sequences: field(cfg, "stop_sequences"),
        }
    }
}

/// A pass-through field of the request (by its wire name), read as `T`.
fn field<T: serde::de::DeserializeOwned>(cfg: &RunConfig, name: &str) -> Option<T> {
    let (_, raw) = cfg.fields.iter().find(|(wire, _)| *wire == name)?;
    serde_json::from_str(raw.get()).ok()
}

/// A request on its way, told when it ends. Dropped before that (the run was aborted while
/// it was in flight), it is told as aborted: a trace never loses a request that was sent.
pub struct Pending<'a> {
    sink: &'a dyn EventSink,
    trace: Option<Box<RequestTrace>>,
    secrets: Redactor,
}

impl<'a> Pending<'a> {
    /// The request of `step` about to be sent with `messages`, when the run is traced.
    pub fn start(
        cfg: &RunConfig,
        events: Option<&'a dyn EventSink>,
        step: u32,
        max_tokens: u32,
        messages: &[RawMessage],
    ) -> Option<Self> {
        let (telemetry, sink) = (cfg.trace?, events?);
        let secrets = Redactor::of(&cfg.api);
        let content = telemetry.record_content.then(|| Content {
            system: cfg
                .system
                .as_deref()
                .map(|s| secrets.redact(&content::system(s)).into_owned()),
            input: secrets.redact(&content::input(messages)).into_owned(),
            output: None,
        });
        let now = Instant::now();
        Some(Pending {
            sink,
            trace: Some(Box::new(RequestTrace {
                step,
                started: now,
                ended: now,
                model: quoted(&secrets, &cfg.model),
                max_tokens,
                stream: cfg.stream,
                settings: Settings::of(cfg),
                server: server_of(&cfg.api.base_url),
                json_output: cfg.output.is_some(),
                outcome: Err(aborted()),
                content,
            })),
            secrets,
        })
    }

    /// The request is over: tells how.
    pub fn end(mut self, sent: &Result<MessageResponse, RunError>) {
        let Some(mut trace) = self.trace.take() else {
            return;
        };
        trace.ended = Instant::now();
        trace.outcome = match sent {
            Ok(response) => {
                let secrets = &self.secrets;
                let quote = |field: &Option<String>| field.as_deref().map(|t| quoted(secrets, t));
                if let Some(content) = trace.content.as_mut() {
                    let output =
                        content::output(&response.content, response.stop_reason.as_deref());
                    content.output = Some(secrets.redact(&output).into_owned());
                }
                Ok(Answered {
                    id: quote(&response.id),
                    model: quote(&response.model),
                    stop_reason: quote(&response.stop_reason),
                    usage: response.usage,
                })
            }
            Err(error) => Err(Failed {
                code: error.code.as_str(),
                status: error.status,
                message: error.message.clone(),
            }),
        };
        self.sink.emit(RunEvent::Request(trace));
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(mut trace) = self.trace.take() {
            trace.ended = Instant::now();
            self.sink.emit(RunEvent::Request(trace));
        }
    }
}

/// Text from outside (the API's reply, the model's words) as a trace carries it: the run's
/// secrets taken out, and at most [`MAX_FIELD`] characters.
pub fn quoted(secrets: &Redactor, text: &str) -> String {
    secrets.clip(text, MAX_FIELD)
}

/// How a request cut off by the run's end is told.
fn aborted() -> Failed {
    let error = RunError::aborted();
    Failed {
        code: error.code.as_str(),
        status: None,
        message: error.message,
    }
}

/// The host and port of `base_url` (its scheme's port when it names none).
fn server_of(base_url: &str) -> Option<(String, u16)> {
    let url = reqwest::Url::parse(base_url).ok()?;
    Some((url.host_str()?.to_owned(), url.port_or_known_default()?))
}

#[cfg(test)]
mod tests;
