//! The engine's instants as the milliseconds a trace part carries: time since one instant of
//! the process, on the engine's monotonic clock (`Instant`). JS reads the same clock through
//! [`now_ms`] to tie it to its own, once per thread, and each run ties that to the wall clock
//! OpenTelemetry's SDK times spans in (lib/telemetry.js): a clock step between runs moves the
//! next run's spans with the app's, and the spans of one run keep their exact order.

use std::sync::OnceLock;
use std::time::Instant;

/// The instant trace times count from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// `at` in milliseconds since the process's trace epoch (negative for an instant before it).
pub fn ms(at: Instant) -> f64 {
    let epoch = epoch();
    match at.checked_duration_since(epoch) {
        Some(after) => after.as_secs_f64() * 1000.0,
        None => -(epoch.duration_since(at).as_secs_f64() * 1000.0),
    }
}

/// Now, as [`ms`] counts.
pub fn now_ms() -> f64 {
    ms(Instant::now())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn instants_keep_their_distance() {
        let now = Instant::now();
        let later = now + Duration::from_micros(1500);
        assert!((ms(later) - ms(now) - 1.5).abs() < 1e-6);
        let before = epoch() - Duration::from_millis(2);
        assert!((ms(before) + 2.0).abs() < 1e-6);
        assert!(now_ms() >= ms(now));
    }
}
