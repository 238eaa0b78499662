//! JS values and the engine's types, each way. The pure files here are tested without Node:
//! the options (`options/`), which tools a run offers (`select_tools.rs`), what a run shares
//! with the JS thread about each call (`call_gate.rs`), the batching of a run's parts
//! (`part_batches.rs`), panics turned into errors (`panics.rs`), the failures of the checks
//! the JS layer makes itself (`js_failure.rs`), the log switch (`logging.rs`), the engine's
//! worker threads (`runtime.rs`), a traced run's parts (`trace_parts.rs`) and the clock they
//! are timed by (`clock.rs`). What needs Node is in `node/`.

pub mod call_gate;
pub mod clock;
pub mod durable;
pub mod js_failure;
pub mod logging;
pub mod mcp_options;
#[cfg(feature = "node")]
pub mod node;
pub mod options;
pub mod panics;
pub mod part_batches;
pub mod runtime;
pub mod select_tools;
pub mod stores;
pub mod trace_parts;
