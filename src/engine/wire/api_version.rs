//! The Messages API's versions (the `anthropic-version` header): the one sent by default, the
//! older one a run can pin, and what each newer version no longer takes.
//!
//! A version is a date, `YYYY-MM-DD`, and a later date is a later version, so versions compare
//! as text. A version newer than this package knows is sent as given: it is taken to keep what
//! the newest known one removed.

use serde_json::Value;

/// The version sent by default: the one the official SDKs send since their 1.0.
pub const CURRENT: &str = "2026-10-21";

/// The version before it, which a run pins (`apiVersion`) to keep what [`CURRENT`] removed.
pub const LEGACY: &str = "2023-06-01";

/// The version that removed the sampling fields (`temperature`, `top_p`, `top_k`), the
/// `document` block directly in an assistant message and non-empty `citations` on a text block
/// in a user message.
pub const REMOVED_IN: &str = CURRENT;

/// The request fields [`REMOVED_IN`] refuses, as the body names them.
pub const REMOVED_FIELDS: &[&str] = &["temperature", "top_p", "top_k"];

/// Whether `version` comes after the removals of [`REMOVED_IN`].
pub fn has_removals(version: &str) -> bool {
    version >= REMOVED_IN
}

/// Whether `version` is a version date: `YYYY-MM-DD`, a day the calendar has.
pub fn is_version_date(version: &str) -> bool {
    let b = version.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b.get(r.clone())
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .map(|_| version[r].parse().unwrap_or(0))
    };
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Where, among `blocks` (content blocks bound for a user message, such as a tool's result), a
/// text block carries non-empty `citations` — directly, in a `search_result` or in a document's
/// own content — as `blocks[i]…`; a user message may not carry one from [`REMOVED_IN`] on.
pub fn cited_text(blocks: &[Value]) -> Option<String> {
    let cited =
        |b: &Value| b["type"] == "text" && b["citations"].as_array().is_some_and(|c| !c.is_empty());
    blocks.iter().enumerate().find_map(|(i, block)| {
        if cited(block) {
            return Some(format!("blocks[{i}]"));
        }
        let (inner, at) = match block["type"].as_str() {
            Some("search_result") => (&block["content"], "content"),
            Some("document") => (&block["source"]["content"], "source.content"),
            _ => return None,
        };
        let j = inner.as_array()?.iter().position(cited)?;
        Some(format!("blocks[{i}].{at}[{j}]"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_a_day_of_the_calendar() {
        for good in [
            "2023-06-01",
            "2026-10-21",
            "2027-01-01",
            "2028-02-29",
            "2000-02-29",
        ] {
            assert!(is_version_date(good), "{good}");
        }
        for bad in [
            "",
            "2026-10-2",
            "2026-1-021",
            "2026/10/21",
            "2026-13-01",
            "2026-00-10",
            "2026-02-29",
            "1900-02-29",
            "2026-04-31",
            "2026-10-00",
            "latest",
            "2026-10-21 ",
            "２０２６-10-21",
            "+026-10-21",
        ] {
            assert!(!is_version_date(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_cited_text_is_found_where_a_user_message_would_carry_it() {
        let cite = serde_json::json!([{ "type": "char_location", "cited_text": "x" }]);
        let text = |citations: &Value| serde_json::json!({ "type": "text", "text": "t", "citations": citations });
        let found = |blocks: Value| cited_text(blocks.as_array().unwrap());
        assert_eq!(
            found(serde_json::json!([
                text(&Value::Null),
                text(&serde_json::json!([]))
            ])),
            None
        );
        assert_eq!(
            found(serde_json::json!([{ "type": "image" }, text(&cite)])).as_deref(),
            Some("blocks[1]")
        );
        let search = serde_json::json!({ "type": "search_result", "source": "s", "title": "t", "content": [text(&Value::Null), text(&cite)] });
        assert_eq!(
            found(serde_json::json!([search])).as_deref(),
            Some("blocks[0].content[1]")
        );
        let document = serde_json::json!({ "type": "document", "source": { "type": "content", "content": [text(&cite)] }, "citations": { "enabled": true } });
        assert_eq!(
            found(serde_json::json!([document])).as_deref(),
            Some("blocks[0].source.content[0]")
        );
        // Turning citations on for a document or search result is no citation of a text.
        let enabled = serde_json::json!({ "type": "search_result", "source": "s", "title": "t", "content": [text(&Value::Null)], "citations": { "enabled": true } });
        assert_eq!(found(serde_json::json!([enabled])), None);
    }

    #[test]
    fn the_removals_hold_from_their_version_on() {
        assert!(!has_removals(LEGACY));
        assert!(!has_removals("2026-10-20"));
        assert!(has_removals(CURRENT));
        assert!(has_removals("2027-03-01"));
    }
}
