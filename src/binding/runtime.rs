//! How many Tokio worker threads the engine runs on.

/// The worker threads for `ANTHROPIC_TOOL_CALLING_THREADS` (`set`, when it is) on a machine
/// with `cores` cores: the variable's whole number if it is one above 0, else one fewer than the
/// cores (at least one). The JS thread needs a core of its own: with a worker on every core,
/// the workers took turns with it and with each other (waking, stealing each other's tasks), and
/// on 2 cores one worker did the same runs for ~30% less CPU per run (`bench/RESULTS.md`).
pub fn worker_threads(set: Option<&str>, cores: usize) -> usize {
    set.and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| cores.saturating_sub(1).max(1))
}

/// The cores this process may use, as Rust counts them (its affinity and cgroup quota); 1 when
/// it cannot tell.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

#[cfg(test)]
mod tests {
    use super::worker_threads;

    #[test]
    fn one_fewer_than_the_cores_unless_the_variable_says() {
        assert_eq!(worker_threads(None, 1), 1);
        assert_eq!(worker_threads(None, 2), 1);
        assert_eq!(worker_threads(None, 8), 7);
        assert_eq!(worker_threads(Some(" 3 "), 2), 3);
        assert_eq!(worker_threads(Some("0"), 4), 3, "0 is no count");
        assert_eq!(worker_threads(Some("many"), 4), 3);
        assert_eq!(worker_threads(Some(""), 0), 1);
    }
}
