//! `ANTHROPIC_TOOL_CALLING_LOG=debug|info|warn|error|trace` turns on one stderr line per API
//! attempt and per tool call (status, duration, request-id, retry number, tool, outcome).
//! Never the key, never bodies: the engine's events carry neither.

use std::sync::Once;

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The filter that lets through this crate's events only, up to `level`.
pub fn own_events(level: LevelFilter) -> Targets {
    Targets::new().with_target(env!("CARGO_CRATE_NAME"), level)
}

/// The environment variable that sets the level.
pub const LOG_ENV: &str = "ANTHROPIC_TOOL_CALLING_LOG";

/// Parses a level; `None` (logging off) for anything unknown or `off`.
pub fn level_of(value: &str) -> Option<LevelFilter> {
    match value.trim().to_ascii_lowercase().as_str() {
        "trace" => Some(LevelFilter::TRACE),
        "debug" => Some(LevelFilter::DEBUG),
        "info" => Some(LevelFilter::INFO),
        "warn" => Some(LevelFilter::WARN),
        "error" => Some(LevelFilter::ERROR),
        _ => None,
    }
}

/// Installs the stderr logger once per process if the variable asks for it.
pub fn init_from_env() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Some(level) = std::env::var(LOG_ENV).ok().as_deref().and_then(level_of) else {
            return;
        };
        // Only this crate's events: at debug, hyper and reqwest would print their internals
        // (connection pool keys carry the URL's authority).
        let _ = tracing_subscriber::fmt()
            .with_max_level(level)
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .finish()
            .with(own_events(level))
            .try_init();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_levels() {
        assert_eq!(level_of("debug"), Some(LevelFilter::DEBUG));
        assert_eq!(level_of(" INFO "), Some(LevelFilter::INFO));
        assert_eq!(level_of("off"), None);
        assert_eq!(level_of("verbose"), None);
    }

    #[test]
    fn lets_through_this_crates_events_only() {
        let filter = own_events(LevelFilter::TRACE);
        assert!(filter.would_enable(
            "anthropic_tool_calling::engine::api",
            &tracing::Level::DEBUG
        ));
        assert!(!filter.would_enable("hyper_util::client::legacy::pool", &tracing::Level::DEBUG));
        assert!(!filter.would_enable("reqwest::connect", &tracing::Level::ERROR));
    }
}
