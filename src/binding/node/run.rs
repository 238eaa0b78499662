//! One run as the JS side starts it: on the JS thread only what needs `Env` (a snapshot of the
//! registry); the request is parsed, the tools picked and the engine run on the runtime, guarded
//! against panics; the reply is shaped for the JS layer (lib/run.js).

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

use futures::FutureExt;

use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use tokio::sync::mpsc;

use super::callback::JsCallback;
use super::fetch_fn::{FetchFn, JsFetch};
use super::registry::Snapshot;
use crate::binding::call_gate::RunShared;
use crate::binding::durable::{self, Resumed};
use crate::binding::options::parse_request;
use crate::binding::panics::catch_panics;
use crate::binding::part_batches::{forward, ChannelSink};
use crate::binding::select_tools;
use crate::binding::trace_parts::Traced;
use crate::engine::store::DurableRun;
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
/// returns); `credentials` is the `provider.credentials` or `provider.accessToken` function,
/// wrapped by lib/credentials.js.
pub async fn run(
    request_json: String,
    registry: Snapshot,
    run_id: u32,
    shared: Arc<RunShared>,
    mut parts: Option<PartsTo>,
    credentials: Option<Arc<FetchFn>>,
) -> Result<Ran, RunError> {
    let mut forwarder = None;
    let mut stored = None;
    let result = catch_panics(async {
        #[cfg(feature = "test-hooks")]
        if request_json.contains("\"__panicForTest\":true") {
            panic!("panic requested by a test");
        }
        // `resumeRun`: the run is taken over (or found ended) before anything else.
        let (request_json, taken) = match durable::resume_request(&request_json) {
            None => (request_json, None),
            Some(resume) => match durable::take_over(resume).await? {
                Resumed::Run(json, run, store) => {
                    if let (Some(to), DurableRun::TakenOver(log)) =
                        (parts.as_ref().filter(|p| p.stream), &run)
                    {
                        // Not a StreamPart: the recorder of the run's stream learns which holder
                        // this process is (lib/stream/record.js), before any part.
                        let taken =
                            format!("[{{\"type\":\"taken\",\"generation\":{}}}]", log.resumed);
                        send_parts(&to.send, taken, false);
                    }
                    (json, Some((run, store)))
                }
                Resumed::Ended { result, messages } => {
                    stored = Some((result, messages));
                    return Err(RunError::internal("ended"));
                }
            },
        };
        let prepared = (|| {
            let mut request = parse_request(&request_json)?;
            if let Some(function) = credentials {
                let api = &mut request.config.api;
                api.give_function(Arc::new(JsFetch { function, run_id }));
            }
            let registered = registry.bind(run_id, &shared);
            if taken.is_some() {
                durable::registered_only(&mut request.tool_names, &registered);
            }
            let tools = select_tools::offered(
                registered,
                request.tool_names.as_deref(),
                request.config.tool_choice.as_ref(),
            )?;
            Ok((request, tools, client()?))
        })();
        let (mut request, tools, client) = match (prepared, taken) {
            (Ok(ready), None) => {
                let (mut request, tools, client) = ready;
                if request.thread.is_some() {
                    request.durable = Some(DurableRun::New {
                        id: format!("run_{}", crate::engine::store::ordered_id()),
                        options: durable::logged_options(&request_json),
                    });
                }
                (request, tools, client)
            }
            (Ok((mut request, tools, client)), Some((run, _))) => {
                request.durable = Some(run);
                (request, tools, client)
            }
            (Err(e), None) => return Err(e),
            (Err(mut e), Some((run, store))) => {
                durable::give_up(&store, &run, &mut e).await;
                return Err(e);
            }
        };
        drop(request_json);
        let traced = parts.as_ref().is_some_and(|p| p.traced);
        if !traced {
            request.config.trace = None;
        }
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
    if let Some((result, messages)) = stored {
        return Ok(Ran::Ended { result, messages });
    }
    let began = |c: &ToolCall| shared.had_effect(c);
    match result {
        Ok(mut output) => {
            output.tool_calls.retain(began);
            Ok(Ran::Output(output))
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
    let durable = request
        .durable
        .ok_or_else(|| RunError::internal("a run in a thread without its log"))?;
    let result = crate::engine::store::run_in_thread(
        client,
        &request.config,
        tools,
        request.messages,
        &shared.abort,
        events,
        thread,
        durable,
    )
    .await;
    watch.abort();
    result
}

pub use super::reply::{reply_of, unknown_error, History, Ran, RunReply};
