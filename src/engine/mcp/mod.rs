//! MCP servers as tools: the engine is the MCP client (the official Rust SDK, `rmcp`), so a call
//! of a server's tool goes from the model's reply to the server and back on the engine's
//! threads, like any tool as far as the loop is concerned (validation, timeouts, approval,
//! events).

pub mod call;
pub mod capped;
pub mod catalog;
pub mod config;
pub mod connect;
pub mod content;
pub mod list;
pub mod listing;
pub mod server;
pub mod stdio;

pub use catalog::Catalog;
pub use config::{ServerConfig, Transport};
pub use server::McpServer;
