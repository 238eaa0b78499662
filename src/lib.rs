//! `anthropic-tool-calling`: the tool-calling loop for Anthropic models.
//!
//! `engine` is the loop itself and knows nothing of Node; `binding` adapts it; the `#[napi]`
//! exports (`exports.rs`) only convert.

// `RunError` carries everything known about a failure (status, request id, tool calls so far);
// it is built once per failed run, so its size in a `Result` costs nothing worth boxing for.
#![allow(clippy::result_large_err)]

pub mod binding;
pub mod engine;
pub mod fuzzing;

#[cfg(feature = "node")]
pub mod exports;
