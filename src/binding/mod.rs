//! The Node side: option parsing and tool selection (pure Rust), the per-thread tool registry,
//! the `ThreadsafeFunction` bridge that runs JS tools for the engine, and the run itself.

pub mod control;
pub mod guard;
#[cfg(feature = "node")]
pub mod js_text;
pub mod logging;
pub mod options;
pub mod parts;
#[cfg(feature = "node")]
pub mod registry;
#[cfg(feature = "node")]
pub mod run;
pub mod select;
#[cfg(feature = "node")]
pub mod tool_bridge;
