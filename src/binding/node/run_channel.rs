//! `RunChannel`: where every run starts (handed to the runtime) and ends (one
//! ThreadsafeFunction for all of them, back to lib/run-channel.js).

use std::sync::Arc;

use napi::bindgen_prelude::{ClassInstance, FnArgs};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::{Env, Result};
use napi_derive::napi;

use crate::binding::node::callback::JsCallback;
use crate::binding::node::fetch_fn::FetchFn;
use crate::binding::node::registry::Registry;
use crate::binding::node::run::{self, History, PartsFn};
use crate::binding::panics::catch_panics;
use crate::exports::RunControl;

/// What [`RunChannel::start_with_parts`] is given to start one run whose parts go to JS.
#[napi(object, object_to_js = false)]
pub struct RunStart<'a> {
    /// `{ prompt, options, env }`, as JSON.
    pub request_json: String,
    /// Handed back to tool calls and to the end.
    pub run_id: u32,
    /// The run's handle.
    pub control: ClassInstance<'a, RunControl>,
    /// The run's `StreamPart`s come to it in batches (`last` once, after the final one).
    #[napi(ts_type = "(partsJson: string, last: boolean) => void")]
    pub on_parts: PartsFn,
    /// The replies are streamed unless this is `false` (the lifecycle hooks of
    /// `runWithTools` need the parts, not the deltas).
    pub stream: Option<bool>,
    /// A tracer provider is registered on this thread: adds the trace parts lib/telemetry.js
    /// makes spans of.
    pub traced: Option<bool>,
    /// Sends the trace parts alone (nobody reads the run's other parts).
    pub trace_only: Option<bool>,
    /// The `provider.credentials` (or `provider.accessToken`) function, wrapped by
    /// lib/credentials.js: answers `{"ok": credentials}` or `{"failed": "what it threw"}` as JSON.
    #[napi(ts_type = "(runId: number) => Promise<string>")]
    pub credentials: Option<FetchFn>,
}

/// Where runs end: the function given to the constructor is called once per run started
/// through this channel, `(runId, resultJson, messages)`, through one ThreadsafeFunction made
/// here for all of them. (A run resolving a promise of its own cost the JS thread a
/// ThreadsafeFunction per run: a libuv handle made, signalled and closed, and an async
/// resource.) It keeps the event loop alive only while the JS layer says runs are pending
/// ([`RunChannel::hold`]), as their promises would.
#[napi]
pub struct RunChannel {
    done: Arc<DoneFn>,
}

/// `(runId, resultJson, messages) => void`.
pub type DoneFn = JsCallback<(u32, String, Option<History>)>;

#[napi]
impl RunChannel {
    /// A channel whose runs all end through `done`.
    #[napi(
        constructor,
        ts_args_type = "done: (runId: number, resultJson: string, messages: Buffer | null) => void"
    )]
    pub fn new(done: DoneFn) -> Self {
        RunChannel {
            done: Arc::new(done),
        }
    }

    /// Whether runs of this channel are pending: while they are, its function keeps the event
    /// loop alive; an idle channel never does.
    #[napi]
    pub fn hold(&self, env: &Env, pending: bool) -> Result<()> {
        let raw = self.done.raw();
        let status = unsafe {
            if pending {
                napi::sys::napi_ref_threadsafe_function(env.raw(), raw)
            } else {
                napi::sys::napi_unref_threadsafe_function(env.raw(), raw)
            }
        };
        napi::check_status!(
            status,
            "could not change whether runs keep the event loop alive"
        )
    }

    /// Starts a conversation with no parts to hand on (a plain `runWithTools`: the hot path,
    /// its arguments positional, as reading an object's properties costs a call into Node each).
    /// It ends through this channel's function, always exactly once (unless its thread is
    /// shutting down). `requestJson` is `{ prompt, options, env }` as JSON; `credentials` as in
    /// [`RunStart`].
    #[napi(
        catch_unwind,
        ts_args_type = "requestJson: string, runId: number, control: RunControl, credentials?: ((runId: number) => Promise<string>) | undefined | null"
    )]
    pub fn start(
        &self,
        env: &Env,
        request_json: String,
        run_id: u32,
        control: &RunControl,
        credentials: Option<FetchFn>,
    ) -> Result<()> {
        self.start_run(env, request_json, run_id, control, None, credentials)
    }

    /// [`RunChannel::start`] for a run whose parts go to JS (a stream, hooks, tracing): see
    /// [`RunStart`] for what it is given.
    #[napi(catch_unwind)]
    pub fn start_with_parts(&self, env: &Env, run: RunStart) -> Result<()> {
        let RunStart {
            request_json,
            run_id,
            control,
            on_parts,
            stream,
            traced,
            trace_only,
            credentials,
        } = run;
        let parts = run::PartsTo {
            send: on_parts,
            stream: stream.unwrap_or(true),
            traced: traced.unwrap_or(false),
            stream_parts: !trace_only.unwrap_or(false),
        };
        self.start_run(
            env,
            request_json,
            run_id,
            &control,
            Some(parts),
            credentials,
        )
    }

    fn start_run(
        &self,
        env: &Env,
        request_json: String,
        run_id: u32,
        control: &RunControl,
        parts: Option<run::PartsTo>,
        credentials: Option<FetchFn>,
    ) -> Result<()> {
        crate::binding::logging::init_from_env();
        let registry = Registry::of(env)?.snapshot();
        let shared = control.shared.clone();
        let done = self.done.clone();
        napi::bindgen_prelude::spawn(async move {
            // Boxed where it is first polled, on the runtime: the run's state machine is large,
            // and held inline it was copied on the JS thread each time the future was moved on
            // its way to the runtime (`memmove` was ~5% of the JS thread's samples on `order`).
            let ended = catch_panics(Box::pin(run::run(
                request_json,
                registry,
                run_id,
                shared,
                parts,
                credentials.map(Arc::new),
            )))
            .await;
            let (result, messages) = match run::reply_of(ended) {
                Ok(reply) => (reply.result, reply.messages),
                Err(e) => (
                    run::unknown_error(&format!("its result could not be written as JSON ({e})")),
                    None,
                ),
            };
            // Only a thread shutting down refuses the call, and nobody waits there any more.
            done.call(
                FnArgs::from((run_id, result, messages)),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        });
        Ok(())
    }
}
