//! One run as the JS side starts it: on the JS thread only what needs `Env` (a snapshot of the
//! registry); the request is parsed, the tools picked and the engine run on the runtime, guarded
//! against panics; the reply is shaped for the JS layer (lib/run.js).

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use futures::FutureExt;

use napi::bindgen_prelude::{Buffer, FnArgs, ToNapiValue, TypeName, ValueType};
use napi::sys;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use serde::Serialize;
use tokio::sync::mpsc;

use super::callback::JsCallback;
use super::registry::Snapshot;
use crate::binding::call_gate::RunShared;
use crate::binding::options::parse_request;
use crate::binding::panics::catch_panics;
use crate::binding::part_batches::{forward, ChannelSink};
use crate::binding::select_tools;
use crate::binding::trace_parts::Traced;
use crate::engine::report::calls::ToolOutput;
use crate::engine::wire::protocol::RawMessage;
use crate::engine::wire::redact::Redactor;
use crate::engine::{ApiClient, EventSink, RunError, RunOutput, ToolCall};

/// One HTTP client, and so one keep-alive pool, per process. One that cannot be built is a bug
/// of ours (reqwest's TLS backend did not start): every run then ends with `unknown_error`
/// asking for a report, rather than a crash or a client that follows redirects.
fn client() -> Result<&'static ApiClient, RunError> {
    static CLIENT: OnceLock<Result<ApiClient, String>> = OnceLock::new();
    CLIENT
        .get_or_init(ApiClient::try_new)
        .as_ref()
        .map_err(|why| RunError::internal(why))
}

/// `(partsJson, last) => void`: a batch of `StreamPart`s; `last` once, after the final batch.
pub type PartsFn = JsCallback<(String, bool)>;

/// Where a run's parts go: the function, whether the replies are streamed (`streamWithTools`)
/// or only the parts are wanted (the hooks of `runWithTools`), and whether the run is traced
/// (a tracer provider is registered on its thread): its batches then carry trace parts.
pub struct PartsTo {
    /// Gets each batch.
    pub send: PartsFn,
    /// The replies are streamed.
    pub stream: bool,
    /// The run is traced, unless its `telemetry` option says `false`.
    pub traced: bool,
    /// JS reads the run's `StreamPart`s (a stream, or hooks); a traced run without them gets
    /// only its trace parts.
    pub stream_parts: bool,
}

/// Parses `request_json` (`{ prompt, options, env }`), picks the tools and runs the loop. With
/// `parts` the run's parts go to JS in batches (every batch is handed to JS before this
/// returns).
pub async fn run(
    request_json: String,
    registry: Snapshot,
    run_id: u32,
    shared: Arc<RunShared>,
    mut parts: Option<PartsTo>,
) -> Result<RunOutput, RunError> {
    let mut forwarder = None;
    let result = catch_panics(async {
        #[cfg(feature = "test-hooks")]
        if request_json.contains("\"__panicForTest\":true") {
            panic!("panic requested by a test");
        }
        let mut request = parse_request(&request_json)?;
        drop(request_json);
        let traced = parts.as_ref().is_some_and(|p| p.traced);
        if !traced {
            request.config.trace = None;
        }
        let tools = select_tools::offered(
            registry.bind(run_id, &shared),
            request.tool_names.as_deref(),
            request.config.tool_choice.as_ref(),
        )?;
        let client = client()?;
        let Some(parts) = parts.take() else {
            return run_on(client, request, &tools, &registry, &shared, None).await;
        };
        request.config.stream = parts.stream;
        let (tx, rx) = mpsc::unbounded_channel();
        let trace = request.config.trace.map(|telemetry| Traced {
            telemetry,
            secrets: Redactor::of(&request.config.api),
            stream_parts: parts.stream_parts,
        });
        let send = parts.send;
        forwarder = Some(tokio::spawn(async move {
            let forwarded = AssertUnwindSafe(forward(rx, trace, |json, last| {
                send_parts(&send, json, last)
            }))
            .catch_unwind()
            .await;
            // A panic while writing a batch (a bug of ours) must still let JS see the end.
            if forwarded.is_err() {
                send_parts(&send, String::from("[]"), true);
            }
        }));
        let sink = ChannelSink {
            tx,
            run: shared.clone(),
        };
        run_on(client, request, &tools, &registry, &shared, Some(&sink)).await
    })
    .await;
    // The sink is gone with the run (a panic too drops it): the forwarder sends what is left,
    // then `last`, before the run's end is handed over.
    if let Some(forwarder) = forwarder {
        let _ = forwarder.await;
    }
    // A run refused before it began (bad options) never had a forwarder: JS still waits for
    // `last`.
    if let Some(parts) = parts {
        send_parts(&parts.send, String::from("[]"), true);
    }
    shared.end();
    let began = |c: &ToolCall| shared.had_effect(c);
    match result {
        Ok(mut output) => {
            output.tool_calls.retain(began);
            Ok(output)
        }
        Err(mut error) => {
            error.tool_calls.retain(began);
            Err(error)
        }
    }
}

/// Hands JS a batch of parts (`last`: the run's final one).
fn send_parts(send: &PartsFn, json: String, last: bool) {
    send.call(
        FnArgs::from((json, last)),
        ThreadsafeFunctionCallMode::NonBlocking,
    );
}

/// Runs the loop on a parsed request. A run whose thread is gone (a terminated worker) ends
/// here, dropping its request and tools, rather than going on talking to the API for nobody.
async fn run_on(
    client: &ApiClient,
    request: crate::binding::options::RunRequest,
    tools: &[crate::engine::Tool],
    registry: &Snapshot,
    shared: &RunShared,
    sink: Option<&ChannelSink>,
) -> Result<RunOutput, RunError> {
    let events = sink.map(|s| s as &dyn EventSink);
    let Some(thread) = request.thread else {
        return tokio::select! {
            biased;
            _ = registry.shutdown.cancelled() => Err(RunError::thread_shutting_down()),
            result = crate::engine::run::main_loop::run_observed(
                client,
                &request.config,
                tools,
                request.messages,
                &shared.abort,
                events,
            ) => result,
        };
    };
    // A run in a stored thread lets go of it however it ends: a terminated worker aborts it
    // (through its signal) rather than dropping it holding the thread.
    let shutdown = registry.shutdown.clone();
    let abort = shared.abort.clone();
    let watch = tokio::spawn(async move {
        shutdown.cancelled().await;
        abort.cancel();
    });
    let run_id = format!("run_{}", crate::engine::store::random_id());
    let result = crate::engine::store::run_in_thread(
        client,
        &request.config,
        tools,
        request.messages,
        &shared.abort,
        events,
        thread,
        run_id,
    )
    .await;
    watch.abort();
    result
}

/// What a run ends with (`RunChannel`'s function), as JSON text for `JSON.parse` in JS (one
/// crossing, no object conversion). `result` is `{ data, error }` with every successful tool
/// call's `output` left `null` (JS puts back the very value the tool returned) and
/// `data.messages` empty: the history comes apart in `messages`, UTF-8 JSON in a Buffer (see
/// [`History`]; no JS string of the whole history unless `data.messages` is read).
pub struct RunReply {
    /// `{ data, error }` as JSON text.
    pub result: String,
    /// The history of a run that succeeded.
    pub messages: Option<History>,
}

/// A run's `result` when something in the binding itself failed: `unknown_error`.
pub fn unknown_error(what: &str) -> String {
    let error = RunError::internal(what);
    serde_json::to_string(&Envelope {
        data: None,
        error: Some(&error),
    })
    .unwrap_or_else(|_| format!(r#"{{"data":null,"error":{}}}"#, RunError::internal_json()))
}

/// The history's JSON handed to JS as a Buffer.
///
/// A short history (up to [`COPY_BELOW`]) is copied into a Buffer that V8 allocates and owns.
/// Node tracks an external Buffer with a weak handle, which V8's scavenger treats as strong: every
/// run's Buffer then survives two scavenges, is promoted, and waits for a mark-compact to be
/// freed. At thousands of short runs a second that was ~1 MB promoted per scavenge, a
/// mark-compact of 4-14 ms every second and the main thread's malloc heap at ~100 MB.
/// A V8-owned Buffer dies young like any other object.
///
/// A long history is handed over without a copy (a few hundred KB copied on the JS thread would
/// cost more than its one handle), its size told to V8 as external memory while the Buffer lives
/// (and taken back when it is collected), so that finished runs' histories count towards V8's GC
/// heuristics and are collected sooner.
pub struct History(Vec<u8>);

impl TypeName for History {
    fn type_name() -> &'static str {
        "Buffer"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for History {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        if val.0.is_empty() {
            return unsafe { Buffer::to_napi_value(env, Buffer::from(val.0)) };
        }
        let len = val.0.len();
        if len <= COPY_BELOW {
            return copied(env, &val.0);
        }
        let data = val.0.as_ptr();
        let owned = Box::into_raw(Box::new(val.0));
        let mut out = std::ptr::null_mut();
        let status = unsafe {
            sys::napi_create_external_buffer(
                env,
                len,
                data as *mut std::ffi::c_void,
                Some(drop_history),
                owned.cast(),
                &mut out,
            )
        };
        if status != sys::Status::napi_ok {
            // No external buffers here (e.g. a sandbox that forbids them): a copy instead.
            let bytes = unsafe { Box::from_raw(owned) };
            return copied(env, &bytes);
        }
        let mut total = 0i64;
        unsafe { sys::napi_adjust_external_memory(env, len as i64, &mut total) };
        Ok(out)
    }
}

/// Histories up to this size are copied into a V8-owned Buffer (see [`History`]).
pub const COPY_BELOW: usize = 64 * 1024;

fn copied(env: sys::napi_env, bytes: &[u8]) -> napi::Result<sys::napi_value> {
    let mut out = std::ptr::null_mut();
    let mut data = std::ptr::null_mut();
    let status = unsafe {
        sys::napi_create_buffer_copy(env, bytes.len(), bytes.as_ptr().cast(), &mut data, &mut out)
    };
    if status != sys::Status::napi_ok {
        return Err(napi::Error::new(
            napi::Status::from(status),
            "could not make the history's Buffer",
        ));
    }
    Ok(out)
}

unsafe extern "C" fn drop_history(
    env: sys::napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    let bytes = unsafe { Box::from_raw(hint as *mut Vec<u8>) };
    let mut total = 0i64;
    unsafe { sys::napi_adjust_external_memory(env, -(bytes.len() as i64), &mut total) };
}

/// The history as one JSON array, each message's text as it is (no parse, no re-encoding).
fn history_json(messages: &[RawMessage]) -> Vec<u8> {
    let size = 2 + messages.iter().map(|m| m.get().len() + 1).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    out.push(b'[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(m.bytes());
    }
    out.push(b']');
    out
}

/// Shapes a run's outcome for the JS layer (lib/run.js).
pub fn reply_of(result: Result<RunOutput, RunError>) -> serde_json::Result<RunReply> {
    match result {
        Ok(mut data) => {
            let messages = history_json(&data.messages);
            data.messages = Vec::new();
            blank_outputs(&mut data.tool_calls);
            let result = serde_json::to_string(&Envelope {
                data: Some(&data),
                error: None,
            })?;
            Ok(RunReply {
                result,
                messages: Some(History(messages)),
            })
        }
        Err(mut error) => {
            blank_outputs(&mut error.tool_calls);
            let result = serde_json::to_string(&Envelope {
                data: None,
                error: Some(&error),
            })?;
            Ok(RunReply {
                result,
                messages: None,
            })
        }
    }
}

/// JS holds every output its tools returned; sending them back as JSON would only be parsed
/// into copies of what it has.
fn blank_outputs(calls: &mut [ToolCall]) {
    for call in calls.iter_mut().filter(|c| !c.is_error && c.output_held) {
        call.output = ToolOutput::None;
    }
}

/// What `runWithTools` resolves with: `{ data, error }`, one of them `null`.
#[derive(Serialize)]
struct Envelope<'a> {
    data: Option<&'a RunOutput>,
    error: Option<&'a RunError>,
}
