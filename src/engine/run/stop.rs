//! What a reply's `stop_reason` means for the loop — one place a reader can find it.

/// A reply's `stop_reason`, as the loop acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model asked for client tools: run them.
    ToolUse,
    /// The answer (`end_turn`, `stop_sequence`, and any reason we do not know).
    Answer,
    /// A long server-tool turn was paused: send the reply back to let it continue.
    PauseTurn,
    /// The API compacted the history and handed the turn back before the model answered
    /// (`pause_after_compaction`): send the reply back to let it answer. Not a tool round.
    Compaction,
    /// The output was cut (`max_tokens`, `model_context_window_exceeded`): an answer, unless it
    /// holds a `tool_use` whose input may be cut.
    Truncated,
    /// The model declined: an answer, whose tools never run and which stays out of the history.
    Refusal,
}

impl StopReason {
    /// Reads the wire value; a missing or unknown one is treated as `end_turn`.
    pub fn of(wire: Option<&str>) -> StopReason {
        match wire {
            Some("tool_use") => StopReason::ToolUse,
            Some("pause_turn") => StopReason::PauseTurn,
            Some("compaction") => StopReason::Compaction,
            Some("max_tokens") | Some("model_context_window_exceeded") => StopReason::Truncated,
            Some("refusal") => StopReason::Refusal,
            _ => StopReason::Answer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_documented_reason() {
        assert_eq!(StopReason::of(Some("tool_use")), StopReason::ToolUse);
        assert_eq!(StopReason::of(Some("end_turn")), StopReason::Answer);
        assert_eq!(StopReason::of(Some("stop_sequence")), StopReason::Answer);
        assert_eq!(StopReason::of(Some("pause_turn")), StopReason::PauseTurn);
        assert_eq!(StopReason::of(Some("compaction")), StopReason::Compaction);
        assert_eq!(StopReason::of(Some("max_tokens")), StopReason::Truncated);
        assert_eq!(
            StopReason::of(Some("model_context_window_exceeded")),
            StopReason::Truncated
        );
        assert_eq!(StopReason::of(Some("refusal")), StopReason::Refusal);
        assert_eq!(StopReason::of(Some("something_new")), StopReason::Answer);
        assert_eq!(StopReason::of(None), StopReason::Answer);
    }
}
