//! The parts a traced run adds for lib/telemetry.js, beside its `StreamPart`s: `trace-request`
//! for each request to the API, and `trace-call` for each settled tool call (what it came to,
//! and when). They go through the same batches and never reach a stream's reader: the JS layer
//! takes them out. Times are the engine's milliseconds (see `clock.rs`).

use std::time::Instant;

use super::clock::ms;
use crate::engine::report::calls::{ToolCall, ToolOutput};
use crate::engine::report::usage::Usage;
use crate::engine::trace::events::CallOutcome;
use crate::engine::trace::pending::quoted;
use crate::engine::trace::request::{RequestTrace, Telemetry};
use crate::engine::wire::redact::Redactor;

/// How a run's batches carry its trace parts: its `telemetry`, and the secrets to take out of
/// what the model wrote before it goes into a span.
pub struct Traced {
    /// Whether content is recorded.
    pub telemetry: Telemetry,
    /// The run's secrets.
    pub secrets: Redactor,
    /// JS wants the run's `StreamPart`s too (a stream, or hooks); else only the trace parts go.
    pub stream_parts: bool,
}
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequestPart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    step: u32,
    started_at: f64,
    ended_at: f64,
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_sequences: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<Server<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    json_output: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<Response<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Error<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<Content<'a>>,
}

#[derive(Serialize)]
struct Server<'a> {
    address: &'a str,
    port: u16,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Response<'a> {
    id: Option<&'a str>,
    model: Option<&'a str>,
    stop_reason: Option<&'a str>,
    usage: Usage,
}

#[derive(Serialize)]
struct Error<'a> {
    code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    message: &'a str,
}

#[derive(Serialize)]
struct Content<'a> {
    system: Option<&'a str>,
    input: &'a str,
    output: Option<&'a str>,
}

/// A request's `trace-request` part.
pub fn write_request(out: &mut Vec<u8>, t: &RequestTrace) {
    let (response, error) = match &t.outcome {
        Ok(a) => {
            let mut usage = Usage::default();
            usage.add(&a.usage);
            let response = Response {
                id: a.id.as_deref(),
                model: a.model.as_deref(),
                stop_reason: a.stop_reason.as_deref(),
                usage,
            };
            (Some(response), None)
        }
        Err(f) => {
            let error = Error {
                code: f.code,
                status: f.status,
                message: &f.message,
            };
            (None, Some(error))
        }
    };
    let part = RequestPart {
        kind: "trace-request",
        step: t.step,
        started_at: ms(t.started),
        ended_at: ms(t.ended),
        model: &t.model,
        max_tokens: t.max_tokens,
        stream: t.stream,
        temperature: t.settings.temperature,
        top_p: t.settings.top_p,
        top_k: t.settings.top_k,
        stop_sequences: t.settings.stop_sequences.as_deref(),
        server: t.server.as_ref().map(|(address, port)| Server {
            address,
            port: *port,
        }),
        json_output: t.json_output,
        response,
        error,
        content: t.content.as_ref().map(|c| Content {
            system: c.system.as_deref(),
            input: &c.input,
            output: c.output.as_deref(),
        }),
    };
    serde_json::to_writer(out, &part).expect("a trace part is strings and numbers");
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallPart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    tool_use_id: &'a str,
    tool_name: &'a str,
    outcome: &'static str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    failed: bool,
    ended_at: f64,
    duration_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a str>,
}

/// A settled call's `trace-call` part. With content recorded, its input (as JSON text) and what
/// it returned (text as it is, anything else as its JSON text). Its name and id are the model's
/// words, and like the content carry none of the run's secrets.
pub fn write_call(
    out: &mut Vec<u8>,
    call: &ToolCall,
    outcome: CallOutcome,
    at: Instant,
    traced: &Traced,
) {
    let content = traced.telemetry.record_content;
    let secrets = &traced.secrets;
    let result = match &call.output {
        ToolOutput::Text(text) | ToolOutput::Json(text) if content => Some(secrets.redact(text)),
        _ => None,
    };
    let arguments = content.then(|| secrets.redact(call.input.get()));
    let part = CallPart {
        kind: "trace-call",
        tool_use_id: &quoted(secrets, &call.tool_use_id),
        tool_name: &quoted(secrets, &call.tool_name),
        outcome: outcome.label(),
        failed: outcome.failed(),
        ended_at: ms(at),
        duration_ms: call.duration_ms,
        arguments: arguments.as_deref(),
        result: result.as_deref(),
    };
    serde_json::to_writer(out, &part).expect("a trace part is strings, numbers and JSON");
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::{json, Value};

    use super::super::part_batches::batch_json;
    use crate::engine::report::calls::{ToolCall, ToolOutput};
    use crate::engine::report::usage::ApiUsage;
    use crate::engine::trace::events::Why;
    use crate::engine::trace::events::{CallOutcome, RunEvent};
    use crate::engine::trace::request::{Answered, Failed, RequestTrace, Settings, Telemetry};

    fn tracing(record_content: bool) -> super::Traced {
        super::Traced {
            telemetry: Telemetry { record_content },
            secrets: crate::engine::wire::redact::Redactor::new(["sk-ant-secret"]),
            stream_parts: true,
        }
    }

    fn parts(json: &str) -> Vec<Value> {
        serde_json::from_str(json).unwrap()
    }

    fn settled(outcome: CallOutcome, at: Instant) -> RunEvent {
        RunEvent::ToolResult {
            call: ToolCall {
                tool_name: "get_order_sk-ant-secret".into(),
                input: serde_json::value::RawValue::from_string(r#"{"id":"4821"}"#.into()).unwrap(),
                output: ToolOutput::Json(r#"{"status":"shipped","echo":"sk-ant-secret"}"#.into()),
                is_error: false,
                error: None,
                duration_ms: 2.5,
                tool_use_id: "toolu_1".into(),
                interrupted: false,
                output_held: false,
            },
            model_text: None,
            outcome,
            at,
        }
    }

    #[test]
    fn a_settled_call_is_followed_by_its_trace_part_only_when_traced() {
        let at = Instant::now();
        let untraced = parts(&batch_json(vec![settled(CallOutcome::Ok, at)], None));
        assert_eq!(untraced.len(), 1);
        assert_eq!(untraced[0]["type"], "tool-result");

        let traced = parts(&batch_json(
            vec![settled(CallOutcome::Why(Why::Declined), at)],
            Some(&tracing(false)),
        ));
        assert_eq!(traced[0]["declined"], true);
        let call = &traced[1];
        assert_eq!(call["type"], "trace-call");
        assert_eq!(call["outcome"], "declined");
        assert_eq!(call.get("failed"), None, "a declined call did not fail");
        assert_eq!(call["durationMs"], 2.5);
        assert_eq!(call.get("arguments"), None, "no content unless asked");
        assert_eq!(call.get("result"), None);

        let only = super::Traced {
            stream_parts: false,
            ..tracing(false)
        };
        let alone = parts(&batch_json(
            vec![
                RunEvent::StepStart {
                    step: 0,
                    run_id: None,
                },
                RunEvent::TextDelta("hi".into()),
                settled(CallOutcome::Ok, at),
            ],
            Some(&only),
        ));
        assert_eq!(
            alone.len(),
            1,
            "a trace-only run gets its trace parts alone: {alone:?}"
        );
        assert_eq!(alone[0]["type"], "trace-call");
        assert_eq!(
            batch_json(vec![RunEvent::TextDelta("hi".into())], Some(&only)),
            "[]"
        );

        let content = parts(&batch_json(
            vec![settled(CallOutcome::Why(Why::Threw), at)],
            Some(&tracing(true)),
        ));
        assert_eq!(content[1]["failed"], true);
        assert_eq!(content[1]["outcome"], "threw");
        assert_eq!(content[1]["arguments"], r#"{"id":"4821"}"#);
        let told = content[1].to_string();
        assert!(!told.contains("sk-ant-secret"), "{told}");
        assert!(content[1]["result"]
            .as_str()
            .unwrap()
            .starts_with(r#"{"status":"shipped","echo":""#));
        assert!(content[1]["toolName"]
            .as_str()
            .unwrap()
            .starts_with("get_order_"));
    }

    #[test]
    fn a_request_is_told_with_its_times_response_and_usage() {
        let started = Instant::now();
        let trace = |outcome| {
            RunEvent::Request(Box::new(RequestTrace {
                step: 1,
                started,
                ended: started + Duration::from_millis(40),
                model: "claude-x".into(),
                max_tokens: 1024,
                stream: false,
                settings: Settings {
                    temperature: Some(0.5),
                    ..Default::default()
                },
                server: Some(("127.0.0.1".into(), 8080)),
                json_output: false,
                outcome,
                content: None,
            }))
        };
        let usage = ApiUsage {
            input_tokens: Some(100),
            output_tokens: Some(20),
            cache_read_input_tokens: Some(7),
            ..ApiUsage::default()
        };
        let answered = trace(Ok(Answered {
            id: Some("msg_1".into()),
            model: Some("claude-x-1".into()),
            stop_reason: Some("tool_use".into()),
            usage,
        }));
        let failed = trace(Err(Failed {
            code: "unknown_error",
            status: Some(500),
            message: "The API failed.".into(),
        }));
        let got = parts(&batch_json(vec![answered, failed], Some(&tracing(false))));
        let ok = &got[0];
        assert_eq!(ok["type"], "trace-request");
        let span = ok["endedAt"].as_f64().unwrap() - ok["startedAt"].as_f64().unwrap();
        assert!((span - 40.0).abs() < 1e-3, "{span}");
        assert_eq!(ok["server"], json!({"address": "127.0.0.1", "port": 8080}));
        assert_eq!(ok["temperature"], 0.5);
        assert_eq!(ok.get("topK"), None);
        assert_eq!(ok["response"]["id"], "msg_1");
        assert_eq!(ok["response"]["stopReason"], "tool_use");
        assert_eq!(ok["response"]["usage"]["cacheReadInputTokens"], 7);
        assert_eq!(ok.get("error"), None);
        assert_eq!(
            got[1]["error"],
            json!({"code": "unknown_error", "status": 500, "message": "The API failed."})
        );
        assert_eq!(got[1].get("response"), None);
    }
}
