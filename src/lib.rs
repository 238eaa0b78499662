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

/// The addon's allocator on Linux with glibc (see docs/architecture.md, "Dependencies and
/// why"): mimalloc, whose frees from another thread go on a lock-free list of the page's owner,
/// where glibc's take the arena's lock. Elsewhere (macOS, Windows, musl) the system's: what was
/// measured is glibc's lock, and mimalloc 3's fixed thread slots on macOS clash with another
/// addon's mimalloc (Next.js loads SWC's).
#[cfg(all(feature = "node", target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
