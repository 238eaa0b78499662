//! `anthropic-tool-calling`: the tool-calling loop for Anthropic models.
//!
//! `engine` is the loop itself and knows nothing of Node; `binding` adapts it; the `#[napi]`
//! exports below only convert.

pub mod binding;
pub mod engine;

#[cfg(feature = "node")]
mod exports;
