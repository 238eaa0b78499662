//! The run's secrets taken out of what the API says back, before we quote it.
//!
//! Our error messages pass the API's own words on, and a gateway in front of the API may answer a
//! bad key with `invalid x-api-key sk-ant-…`: without this, the key would reach `error.message`,
//! a log line and the stream's finish part. Matching is on decoded text: the API's JSON is parsed
//! before its strings are quoted, so an echo written with JSON escapes (`sk\u002dant…`) is caught
//! like a plain one.

mod derive;

use std::borrow::Cow;

use serde_json::Value;

use crate::engine::error::RunError;
use crate::engine::wire::settings::ApiConfig;

pub use derive::{of_header, of_url, shown_url, MIN_HEADER_VALUE_CHARS};

/// What a secret is replaced with (the same text a [`Secret`](crate::engine::Secret) prints).
pub const REDACTED: &str = "[redacted]";

/// How much of a body that is not the JSON we expected is quoted, in characters.
pub const QUOTE_CHARS: usize = 80;

/// The secrets of one run, ready to be taken out of any text.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Non-empty and distinct.
    secrets: Vec<String>,
}

impl Redactor {
    /// Redacts these values (empty ones are skipped: they would match everywhere).
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let mut out: Vec<String> = Vec::new();
        for secret in secrets {
            // The server sees a header value without its surrounding whitespace, and echoes it so.
            let secret = secret.trim();
            if !secret.is_empty() && !out.iter().any(|s| s == secret) {
                out.push(secret.to_owned());
            }
        }
        Redactor { secrets: out }
    }

    /// The secrets of a run's API settings: the key, the auth token, the secrets that are never
    /// sent ([`ApiConfig::unsent_secrets`]) and those the body carries
    /// ([`ApiConfig::body_secrets`]); and by the rule an MCP server's credentials follow too,
    /// those of the `headers` option's values (marked sensitive; [`of_header`]) and of
    /// `baseURL` ([`of_url`]).
    pub fn of(cfg: &ApiConfig) -> Self {
        let credentials = [&cfg.api_key, &cfg.auth_token]
            .into_iter()
            .flatten()
            .chain(&cfg.unsent_secrets)
            .chain(&cfg.body_secrets)
            .map(|s| s.expose().to_owned());
        let headers = cfg
            .headers
            .iter()
            .filter(|(_, value)| value.is_sensitive())
            .filter_map(|(_, value)| std::str::from_utf8(value.as_bytes()).ok())
            .flat_map(of_header);
        let derived: Vec<String> = credentials
            .chain(headers)
            .chain(of_url(&cfg.base_url))
            .collect();
        Redactor::new(derived.iter().map(String::as_str))
    }

    /// These secrets and `more` (credentials fetched for one request).
    pub fn with<'a>(&self, more: impl IntoIterator<Item = &'a str>) -> Self {
        let mut all = self.secrets.clone();
        all.extend(more.into_iter().map(str::to_owned));
        Redactor::new(all.iter().map(String::as_str))
    }

    /// `text` with every secret in it replaced by [`REDACTED`]. Every character inside any
    /// occurrence of any secret is covered, and overlapping or adjacent occurrences become one
    /// `[redacted]`: no part of a longer secret survives because a shorter one matched first.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for secret in &self.secrets {
            let mut from = 0;
            while let Some(at) = text[from..].find(secret.as_str()) {
                let start = from + at;
                spans.push((start, start + secret.len()));
                // Occurrences of one secret may overlap ("abab" twice in "ababab"): look again
                // one character on, not after the match.
                from = start + text[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        spans.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut written = 0;
        let mut spans = spans.into_iter().peekable();
        while let Some((start, mut end)) = spans.next() {
            while let Some(&(next, next_end)) = spans.peek() {
                if next > end {
                    break;
                }
                end = end.max(next_end);
                spans.next();
            }
            out.push_str(&text[written..start]);
            out.push_str(REDACTED);
            written = end;
        }
        out.push_str(&text[written..]);
        Cow::Owned(out)
    }

    /// The error with the secrets taken out of everything in it the API may have written.
    pub fn error(&self, mut error: RunError) -> RunError {
        if let Cow::Owned(clean) = self.redact(&error.message) {
            error.message = clean;
        }
        if let Some(Cow::Owned(clean)) = error.request_id.as_deref().map(|id| self.redact(id)) {
            error.request_id = Some(clean);
        }
        let code = error
            .api_error_code
            .as_deref()
            .map(|code| self.redact(code));
        if let Some(Cow::Owned(clean)) = code {
            error.api_error_code = Some(clean);
        }
        error
    }

    /// A short quote of a body that is not what we expected (an HTML page, JSON of another
    /// shape), for a message: at most [`QUOTE_CHARS`] characters, [clipped](Self::clip). JSON is quoted as it came unless one of
    /// its strings, decoded, holds a secret; then it is quoted re-encoded, with those redacted.
    pub fn quote(&self, body: &[u8]) -> String {
        if !self.secrets.is_empty() {
            if let Ok(mut json) = serde_json::from_slice::<Value>(body) {
                if self.redact_json(&mut json) {
                    return self.clip(&json.to_string(), QUOTE_CHARS);
                }
            }
        }
        // Only what the quote shows, and enough after it for a secret that starts inside it.
        let longest = self.secrets.iter().map(String::len).max().unwrap_or(0);
        let window = &body[..body.len().min(QUOTE_CHARS * 4 + longest)];
        self.clip(&String::from_utf8_lossy(window), QUOTE_CHARS)
    }

    /// `text` with the secrets taken out, then cut to at most `max` characters, `…` marking a
    /// cut: the one way a text that may hold a secret is shortened. In this order only: cut
    /// first, a secret straddling the cut would be left half-shown, no longer whole to be found.
    pub fn clip(&self, text: &str, max: usize) -> String {
        let clean = self.redact(text);
        if clean.chars().count() <= max {
            return clean.into_owned();
        }
        cut_to(&clean, max.saturating_sub(1)) + "…"
    }

    /// Redacts every string (and key) of a JSON value in place; whether anything changed.
    pub fn redact_json(&self, value: &mut Value) -> bool {
        let clean = |s: &mut String| match self.redact(s) {
            Cow::Owned(clean) => {
                *s = clean;
                true
            }
            Cow::Borrowed(_) => false,
        };
        match value {
            Value::String(s) => clean(s),
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, item| self.redact_json(item) | changed),
            Value::Object(map) => {
                let mut changed = false;
                for (key, mut item) in std::mem::take(map) {
                    let mut key = key;
                    changed |= clean(&mut key);
                    changed |= self.redact_json(&mut item);
                    map.insert(key, item);
                }
                changed
            }
            _ => false,
        }
    }
}

fn cut_to(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-ant-api03-abcdefghijklmnop";

    #[test]
    fn replaces_every_occurrence() {
        let r = Redactor::new([KEY]);
        assert_eq!(
            r.redact(&format!("invalid x-api-key {KEY}; again: {KEY}.")),
            "invalid x-api-key [redacted]; again: [redacted]."
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn an_empty_secret_redacts_nothing() {
        let r = Redactor::new(["", "  "]);
        assert_eq!(r.redact("every word stays"), "every word stays");
        assert!(Redactor::new([]).quote(b"plain").eq("plain"));
    }

    #[test]
    fn overlapping_and_nested_secrets_leave_no_part_behind() {
        // One secret inside another, in either order.
        for r in [
            Redactor::new(["abc", "xxabcxx"]),
            Redactor::new(["xxabcxx", "abc"]),
        ] {
            assert_eq!(r.redact("[xxabcxx] abc"), "[[redacted]] [redacted]");
        }
        // Two secrets that overlap without one holding the other: one span.
        let r = Redactor::new(["AAAABB", "BBBBCC"]);
        assert_eq!(r.redact("<AAAABBBBCC>"), "<[redacted]>");
        // A secret overlapping itself.
        assert_eq!(Redactor::new(["abab"]).redact("xababab"), "x[redacted]");
        // Adjacent occurrences.
        assert_eq!(Redactor::new(["k3y!"]).redact("k3y!k3y!"), "[redacted]");
    }

    #[test]
    fn works_on_any_characters() {
        let r = Redactor::new(["pässwörd-ß"]);
        assert_eq!(r.redact("é pässwörd-ß é"), "é [redacted] é");
        assert_eq!(r.redact("ééé"), "ééé");
    }

    #[test]
    fn a_quote_is_cut_after_the_secrets_are_out() {
        let r = Redactor::new([KEY]);
        // The key starts inside the quoted part and ends after it.
        let body = format!(
            "<html>{}{KEY} and more</html>",
            "x".repeat(QUOTE_CHARS - 10)
        );
        let quote = r.quote(body.as_bytes());
        assert_eq!(quote.chars().count(), QUOTE_CHARS);
        assert!(quote.ends_with("x[re…"), "{quote}");
        // Short bodies are quoted whole.
        assert_eq!(r.quote(b"Bad gateway"), "Bad gateway");
    }

    #[test]
    fn a_clip_cuts_after_the_secrets_are_out() {
        let r = Redactor::new([KEY]);
        // The key starts 5 characters before the cut: cut first, "sk-an" would be left.
        let text = format!("{}{KEY} and more", "x".repeat(35));
        let clipped = r.clip(&text, 40);
        assert_eq!(clipped, format!("{}[red…", "x".repeat(35)));
        assert_eq!(r.clip("short", 40), "short");
        assert_eq!(r.clip(&format!("a {KEY}"), 40), "a [redacted]");
    }

    #[test]
    fn a_json_body_is_matched_on_its_decoded_strings() {
        let r = Redactor::new([KEY]);
        let escaped = KEY.replace('-', "\\u002d");
        let body = format!(r#"{{"detail":"bad key {escaped}","code":7}}"#);
        let quote = r.quote(body.as_bytes());
        assert!(
            !quote.contains("sk") && quote.contains("[redacted]"),
            "{quote}"
        );
        // Without a secret in it, JSON is quoted as it came (key order and escapes kept).
        let plain = br#"{"z":1,"a":"\u002d"}"#;
        assert_eq!(r.quote(plain), String::from_utf8_lossy(plain));
    }

    #[test]
    fn a_config_gives_its_credentials_and_its_sensitive_headers_long_enough() {
        use reqwest::header::{HeaderName, HeaderValue};
        let header = |value: &'static str, sensitive: bool| {
            let mut value = HeaderValue::from_static(value);
            value.set_sensitive(sensitive);
            value
        };
        let mut cfg = crate::engine::RunConfig::new(Some("sk-key-1".into()), "http://x").api;
        cfg.auth_token = Some("tok-2".into());
        cfg.unsent_secrets = vec!["approval-3".into()];
        cfg.body_secrets = vec!["mcp-token-4".into()];
        cfg.headers = vec![
            // `betas`: not a secret, and the API's message naming a bad beta is worth reading.
            (
                HeaderName::from_static("anthropic-beta"),
                header("beta-2025-01-01", false),
            ),
            (
                HeaderName::from_static("x-long"),
                header("long-enough", true),
            ),
            (HeaderName::from_static("x-short"), header("1234567", true)),
        ];
        assert_eq!(
            Redactor::of(&cfg).redact(
                "sk-key-1 tok-2 approval-3 mcp-token-4 long-enough 1234567 beta-2025-01-01"
            ),
            "[redacted] [redacted] [redacted] [redacted] [redacted] 1234567 beta-2025-01-01"
        );
    }

    #[test]
    fn an_error_loses_the_secrets_of_its_message_and_request_id() {
        let r = Redactor::new([KEY]);
        let mut e = RunError::unknown(format!("invalid x-api-key {KEY}"));
        e.request_id = Some(format!("req_{KEY}"));
        let e = r.error(e);
        assert_eq!(e.message, "invalid x-api-key [redacted]");
        assert_eq!(e.request_id.as_deref(), Some("req_[redacted]"));
    }
}
