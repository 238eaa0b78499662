//! The Node side: option parsing (pure Rust), the per-thread tool registry and the
//! `ThreadsafeFunction` bridge that runs JS tools for the engine.

pub mod logging;
pub mod options;
#[cfg(feature = "node")]
pub mod registry;
#[cfg(feature = "node")]
pub mod tool_bridge;
