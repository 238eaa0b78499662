//! The one shape of every JS function the binding calls from the engine's threads.

use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, UnknownReturnValue};
use napi::Status;

/// A JS function called from any thread with the arguments `Args`, answering `Return` (most
/// are called without waiting for an answer). Not callee-handled: the function gets its
/// arguments as given, with no leading error argument. Weak: holding one never keeps the event
/// loop alive by itself (`RunChannel::hold` says when runs should).
pub type JsCallback<Args, Return = UnknownReturnValue> =
    ThreadsafeFunction<FnArgs<Args>, Return, FnArgs<Args>, Status, false, true>;
