//! The files that need Node (the `node` feature): they hold napi values, call JS functions or
//! read JS strings. Everything they decide is in the pure files beside this folder.

pub mod callback;
pub mod fetch_fn;
pub mod js_text;
pub mod mcp;
pub mod registry;
pub mod reply;
pub mod run;
pub mod run_channel;
pub mod store;
pub mod tool_bridge;
