//! What a run ends with, shaped for the JS layer (lib/run.js): the result as JSON text and the
//! history as a Buffer.

use napi::bindgen_prelude::{Buffer, ToNapiValue, TypeName, ValueType};
use napi::sys;
use serde::Serialize;

use crate::engine::report::calls::ToolOutput;
use crate::engine::wire::protocol::RawMessage;
use crate::engine::{RunError, RunOutput, ToolCall};

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

/// What a run came to: its output, or (`resumeRun` of a run that had ended) the result its log
/// keeps, with its thread's history. Made once per run and moved once: not boxed.
#[allow(clippy::large_enum_variant)]
pub enum Ran {
    /// The run's output.
    Output(RunOutput),
    /// A stored result (`{ data, error }` as JSON) and the history.
    Ended {
        /// `{ data, error }` as JSON.
        result: String,
        /// The thread's history.
        messages: Vec<String>,
    },
}

/// Shapes a run's outcome for the JS layer (lib/run.js).
pub fn reply_of(result: Result<Ran, RunError>) -> serde_json::Result<RunReply> {
    match result {
        Ok(Ran::Ended { result, messages }) => {
            let ok = result.starts_with("{\"data\":{");
            let raw: Vec<RawMessage> = messages
                .into_iter()
                .filter_map(|m| serde_json::value::RawValue::from_string(m).ok())
                .map(RawMessage::from)
                .collect();
            Ok(RunReply {
                result,
                messages: ok.then(|| History(history_json(&raw))),
            })
        }
        Ok(Ran::Output(mut data)) => {
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
