//! When to retry an API request and how long to wait first, as `@anthropic-ai/sdk` does.
//!
//! Hand-written rather than taken from a backoff crate: the schedule must match the official SDK
//! to the formula (`min(0.5·2^n, 8)` s with up to 25 % jitter taken off, server hints honoured in
//! 0–60 s), and the whole policy is a dozen lines that crates like `backoff` would only wrap.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::StatusCode;

use crate::engine::error::RunError;

/// One failed attempt at a request: the error the run ends with if no other attempt follows,
/// and what decides whether one does.
pub struct AttemptFailure {
    /// The run's error, should this attempt be the last.
    pub error: RunError,
    /// Whether a retry may cure it (a broken connection, a 429, a 5xx…), as the SDK judges.
    pub retryable: bool,
    /// What the server said about waiting.
    pub hint: Hint,
    /// A streamed reply had begun when the attempt failed: the API may hold all of it or none,
    /// so a request continuing a thread is sent again as a new one.
    pub reply_started: bool,
}

impl AttemptFailure {
    /// A failure no retry would change (an answer we cannot read, a redirect).
    pub fn fatal(error: RunError) -> Self {
        AttemptFailure {
            error,
            retryable: false,
            hint: Hint::None,
            reply_started: false,
        }
    }

    /// A failure to get any answer (refused, reset, timed out): worth another attempt.
    pub fn network(error: RunError) -> Self {
        AttemptFailure {
            error,
            retryable: true,
            hint: Hint::None,
            reply_started: false,
        }
    }

    /// How long to wait before the next attempt, or `None` when there is none: the failure is
    /// not retryable, `retries_done` reached `max_retries`, or the server asked for a wait
    /// longer than we sit on a request (reported to the caller as `retryAfter` instead).
    pub fn wait_before_retry(&self, retries_done: u32, max_retries: u32) -> Option<Duration> {
        match self.hint {
            Hint::TooLong(_) => None,
            _ if !self.retryable || retries_done >= max_retries => None,
            Hint::Wait(hint) => Some(hint),
            Hint::None => Some(backoff(retries_done)),
        }
    }
}

/// Whether a response with this status and these headers may be retried.
pub fn should_retry(status: StatusCode, headers: &HeaderMap) -> bool {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// The longest server hint we are willing to wait for.
pub const MAX_HINT: Duration = Duration::from_secs(60);

/// What the server said about waiting before a retry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hint {
    /// Nothing usable (absent, unreadable, zero, negative, a date in the past): back off as the
    /// SDK does.
    None,
    /// Wait this long (more than 0, less than [`MAX_HINT`]).
    Wait(Duration),
    /// Longer than we wait: the run ends at once and reports it as `retryAfter`.
    TooLong(Duration),
}

impl Hint {
    /// The wait the server asked for, if it asked for one we can report.
    pub fn asked(self) -> Option<Duration> {
        match self {
            Hint::None => None,
            Hint::Wait(d) | Hint::TooLong(d) => Some(d),
        }
    }
}

/// The wait the server asked for, read as the SDK's `retryRequest` reads it: `retry-after-ms`
/// (milliseconds) if it is a number other than 0, else `retry-after` (seconds, or an HTTP date
/// measured from now). A value that is not in (0, 60 s) means the SDK's own backoff — except that
/// a hint of 60 s or more ends the run: a caller is better told to come back later than left
/// waiting a minute or more on one request.
pub fn server_hint(headers: &HeaderMap) -> Hint {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let mut millis: Option<f64> = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok());
    // The SDK reads `retry-after` only when `retry-after-ms` gave nothing or 0 (falsy in JS); a
    // negative `retry-after-ms` is truthy there, so it hides `retry-after` and means backoff.
    if millis.is_none_or(|ms| ms == 0.0) {
        if let Some(value) = header("retry-after") {
            millis = match value.parse::<f64>() {
                Ok(secs) => Some(secs * 1000.0),
                Err(_) => httpdate::parse_http_date(value)
                    .ok()
                    .map(signed_millis_from_now),
            };
        }
    }
    match millis {
        Some(ms) if ms.is_finite() && ms > 0.0 && ms < MAX_HINT.as_millis() as f64 => {
            Hint::Wait(Duration::from_secs_f64(ms / 1000.0))
        }
        Some(ms) if ms.is_finite() && ms >= MAX_HINT.as_millis() as f64 => {
            Hint::TooLong(Duration::from_secs_f64(ms / 1000.0))
        }
        _ => Hint::None,
    }
}

fn signed_millis_from_now(at: SystemTime) -> f64 {
    let now = SystemTime::now();
    match at.duration_since(now) {
        Ok(ahead) => ahead.as_secs_f64() * 1000.0,
        Err(behind) => -behind.duration().as_secs_f64() * 1000.0,
    }
}

/// The SDK's backoff after `retries_done` retries: `min(0.5 · 2^n, 8)` s, minus up to 25 % jitter.
pub fn backoff(retries_done: u32) -> Duration {
    let base = (0.5 * 2f64.powi(retries_done.min(16) as i32)).min(8.0);
    let jitter = 1.0 - fastrand::f64() * 0.25;
    Duration::from_secs_f64(base * jitter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn retries_the_sdk_statuses_and_obeys_x_should_retry() {
        let none = HeaderMap::new();
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(should_retry(StatusCode::from_u16(s).unwrap(), &none), "{s}");
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(
                !should_retry(StatusCode::from_u16(s).unwrap(), &none),
                "{s}"
            );
        }
        let yes = headers(&[("x-should-retry", "true")]);
        let no = headers(&[("x-should-retry", "false")]);
        assert!(should_retry(StatusCode::BAD_REQUEST, &yes));
        assert!(!should_retry(StatusCode::TOO_MANY_REQUESTS, &no));
    }

    #[test]
    fn reads_every_form_of_hint() {
        let wait = |ms: u64| Hint::Wait(Duration::from_millis(ms));
        assert_eq!(
            server_hint(&headers(&[("retry-after-ms", "1500")])),
            wait(1500)
        );
        assert_eq!(server_hint(&headers(&[("retry-after", "2")])), wait(2000));
        // retry-after-ms wins over retry-after
        assert_eq!(
            server_hint(&headers(&[("retry-after-ms", "10"), ("retry-after", "30")])),
            wait(10)
        );
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        let Hint::Wait(hint) = server_hint(&headers(&[("retry-after", &later)])) else {
            panic!("a date 30 s ahead is a wait");
        };
        assert!(
            hint > Duration::from_secs(27) && hint <= Duration::from_secs(30),
            "{hint:?}"
        );
        assert_eq!(
            server_hint(&headers(&[("retry-after", "soon")])),
            Hint::None
        );
        assert_eq!(server_hint(&HeaderMap::new()), Hint::None);
        assert_eq!(
            server_hint(&headers(&[("retry-after", "120")])),
            Hint::TooLong(Duration::from_secs(120))
        );
    }

    #[test]
    fn hints_the_sdk_ignores_mean_backoff() {
        // A date in the past: the SDK computes a negative wait and backs off (not 0 s).
        let past = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(30));
        assert_eq!(server_hint(&headers(&[("retry-after", &past)])), Hint::None);
        assert_eq!(server_hint(&headers(&[("retry-after", "-3")])), Hint::None);
        assert_eq!(server_hint(&headers(&[("retry-after", "0")])), Hint::None);
        // A negative retry-after-ms is not "no hint": it hides retry-after, and means backoff.
        assert_eq!(
            server_hint(&headers(&[("retry-after-ms", "-5"), ("retry-after", "2")])),
            Hint::None
        );
        // retry-after-ms of 0 is falsy in the SDK: retry-after is read instead.
        assert_eq!(
            server_hint(&headers(&[("retry-after-ms", "0"), ("retry-after", "2")])),
            Hint::Wait(Duration::from_secs(2))
        );
        assert_eq!(
            server_hint(&headers(&[
                ("retry-after-ms", "nope"),
                ("retry-after", "1")
            ])),
            Hint::Wait(Duration::from_secs(1))
        );
    }

    #[test]
    fn backoff_follows_the_sdk_formula() {
        for (n, base) in [
            (0u32, 0.5f64),
            (1, 1.0),
            (2, 2.0),
            (3, 4.0),
            (4, 8.0),
            (9, 8.0),
        ] {
            for _ in 0..50 {
                let d = backoff(n).as_secs_f64();
                assert!(d <= base + 1e-9 && d >= base * 0.75 - 1e-9, "n={n} d={d}");
            }
        }
    }
}
