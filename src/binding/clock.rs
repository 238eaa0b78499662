//! The engine's instants as the milliseconds JS spans are timed in. The engine measures with
//! `Instant` (monotonic); JS (and OpenTelemetry's SDK) with `performance.timeOrigin +
//! performance.now()`, the same monotonic clock counted from an epoch. One pair of readings,
//! taken when the addon loads, ties the two: the times of a span made from the engine's
//! instants and of one timed in JS agree to the microsecond, with no wall-clock step between.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One instant, and the JS time (ms since the epoch) it is.
static ANCHOR: OnceLock<(Instant, f64)> = OnceLock::new();

/// Ties the clocks: `now_ms` is JS's time now. The first call wins (every thread's JS reads the
/// same clock, so a later one would say the same).
pub fn anchor(now_ms: f64) {
    let _ = ANCHOR.set((Instant::now(), now_ms));
}

/// `at` in JS milliseconds since the epoch. Before any anchor (a test without JS), the wall
/// clock stands in.
pub fn js_ms(at: Instant) -> f64 {
    let (then, then_ms) = *ANCHOR.get_or_init(|| {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        (Instant::now(), wall.as_secs_f64() * 1000.0)
    });
    match at.checked_duration_since(then) {
        Some(after) => then_ms + after.as_secs_f64() * 1000.0,
        None => then_ms - then.duration_since(at).as_secs_f64() * 1000.0,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn instants_keep_their_distance() {
        let now = Instant::now();
        let later = now + Duration::from_micros(1500);
        let gap = js_ms(later) - js_ms(now);
        assert!((gap - 1.5).abs() < 1e-6, "{gap}");
        let earlier = now - Duration::from_millis(2);
        assert!((js_ms(now) - js_ms(earlier) - 2.0).abs() < 1e-6);
    }
}
