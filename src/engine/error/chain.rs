//! An error's chain of causes as one line, for a message.

/// Which part of an error [`source_chain`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chain {
    /// The error's own sentence, then each of its causes.
    Whole,
    /// Only the causes (the error's own sentence when it has none): for an error whose own
    /// sentence says nothing the message does not say already.
    Causes,
}

/// An error and the causes it wraps, joined by ": ". The innermost cause names what really
/// happened (refused, reset, timed out…), which the outer ones often leave out.
pub fn source_chain(e: &(dyn std::error::Error + 'static), chain: Chain) -> String {
    let mut parts = Vec::new();
    if chain == Chain::Whole {
        parts.push(e.to_string());
    }
    let mut cause = e.source();
    while let Some(err) = cause {
        parts.push(err.to_string());
        cause = err.source();
    }
    if parts.is_empty() {
        e.to_string()
    } else {
        parts.join(": ")
    }
}
