//! When to retry an API request and how long to wait first, as `@anthropic-ai/sdk` does.
//!
//! Hand-written rather than taken from a backoff crate: the schedule must match the official SDK
//! to the formula (`min(0.5·2^n, 8)` s with up to 25 % jitter taken off, server hints honoured in
//! 0–60 s), and the whole policy is a dozen lines that crates like `backoff` would only wrap.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::StatusCode;

/// The longest server hint we are willing to wait for.
pub const MAX_HINT: Duration = Duration::from_secs(60);

/// Whether a response with this status and these headers may be retried.
pub fn should_retry(status: StatusCode, headers: &HeaderMap) -> bool {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// The wait the server asked for: `retry-after-ms` (milliseconds), else `retry-after`
/// (seconds, or an HTTP date). `None` when there is no readable, non-negative hint.
pub fn server_hint(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return seconds(ms / 1000.0);
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return seconds(secs);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

fn seconds(s: f64) -> Option<Duration> {
    (s.is_finite() && s >= 0.0).then(|| Duration::from_secs_f64(s))
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
        assert_eq!(
            server_hint(&headers(&[("retry-after-ms", "1500")])),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            server_hint(&headers(&[("retry-after", "2")])),
            Some(Duration::from_secs(2))
        );
        // retry-after-ms wins over retry-after
        assert_eq!(
            server_hint(&headers(&[("retry-after-ms", "10"), ("retry-after", "30")])),
            Some(Duration::from_millis(10))
        );
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        let hint = server_hint(&headers(&[("retry-after", &later)])).unwrap();
        assert!(
            hint > Duration::from_secs(27) && hint <= Duration::from_secs(30),
            "{hint:?}"
        );
        assert_eq!(server_hint(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(server_hint(&headers(&[("retry-after", "-3")])), None);
        assert_eq!(server_hint(&HeaderMap::new()), None);
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
