//! `anthropic-tool-calling`: the tool-calling loop for Anthropic models.
//!
//! `engine` is the loop itself and knows nothing of Node. `binding` turns JS values into the
//! engine's types and back (its pure part is tested without Node; `binding/node/` holds what
//! needs napi). `exports.rs` is the `#[napi]` surface that the JS layer (index.js, lib/) calls: each export converts
//! its arguments and hands them to `binding`.

// `RunError` carries everything known about a failure (status, request id, tool calls so far);
// it is built once per failed run, so its size in a `Result` costs nothing worth boxing for.
#![allow(clippy::result_large_err)]
#![warn(missing_docs)]

pub mod binding;
pub mod engine;
pub mod fuzzing;

#[cfg(feature = "node")]
pub mod exports;

/// The addon's allocator (see README, "Why these crates"): mimalloc, whose frees from another
/// thread go on a lock-free list of the page's owner, where glibc's take the arena's lock.
#[cfg(feature = "node")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
