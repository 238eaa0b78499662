//! `apiVersion`, and the options the API version a run speaks no longer takes: `temperature`,
//! `topP` and `topK` (also as `extraBody` fields) are refused before anything is sent, with the
//! pin that keeps them.

use serde_json::value::RawValue;

use super::list::RunOptions;
use super::read::Given;
use crate::engine::wire::api_version::{
    has_removals, is_version_date, CURRENT, LEGACY, REMOVED_FIELDS, REMOVED_IN,
};
use crate::engine::RunError;

/// `apiVersion`: a version date (`YYYY-MM-DD`), sent as given; none keeps the default.
pub fn api_version(option: Given) -> Result<Option<String>, RunError> {
    let Some(v) = option.value() else {
        return Ok(None);
    };
    match v.as_str() {
        Some(version) if is_version_date(version) => Ok(Some(version.to_owned())),
        _ => Err(option.bad(
            &format!(
                "an API version date YYYY-MM-DD, such as {CURRENT:?} (the default) or {LEGACY:?}"
            ),
            &v,
        )),
    }
}

/// Refuses the sampling options (`temperature`, `topP`, `topK`) under a `version` that removed
/// them, whatever their value: the API refuses even its own defaults.
pub fn removed_options(o: &RunOptions, version: &str) -> Result<(), RunError> {
    if !has_removals(version) {
        return Ok(());
    }
    let sampling = [o.temperature, o.top_p, o.top_k];
    match sampling.iter().find(|option| option.value().is_some()) {
        Some(option) => Err(removed(&format!("Option {}", option.name), version)),
        None => Ok(()),
    }
}

/// Refuses an `extraBody` field a `version` removed (`temperature`, `top_p`, `top_k`), whatever
/// its value, `null` included: the API refuses the field itself.
pub fn removed_fields(
    extra_body: &[(String, Box<RawValue>)],
    version: &str,
) -> Result<(), RunError> {
    if !has_removals(version) {
        return Ok(());
    }
    match extra_body
        .iter()
        .find(|(key, _)| REMOVED_FIELDS.contains(&key.as_str()))
    {
        Some((key, _)) => Err(removed(&format!("Option extraBody.{key}"), version)),
        None => Ok(()),
    }
}

/// The refusal of `what` (an option, or an `extraBody` field) under `version`.
fn removed(what: &str, version: &str) -> RunError {
    let speaks = if version == REMOVED_IN {
        "which this run speaks".to_owned()
    } else {
        format!("and this run speaks the later {version}")
    };
    RunError::invalid_request(format!(
        "{what} was removed in API version {REMOVED_IN}, {speaks}: the API refuses temperature, top_p and top_k there, whatever their value. Leave it out, or pin the version that keeps it with apiVersion: \"{LEGACY}\". Nothing was sent."
    ))
}

#[cfg(test)]
mod tests {
    use super::super::{parse_request, RunRequest};
    use crate::engine::{ErrorCode, RunError};

    fn parse(options: &str) -> Result<RunRequest, RunError> {
        parse_request(&format!(
            r#"{{"prompt":"hi","options":{options},"env":{{"ANTHROPIC_API_KEY":"k"}}}}"#
        ))
    }

    fn refused(options: &str) -> String {
        let error = parse(options).err().expect(options);
        assert_eq!(error.code, ErrorCode::InvalidRequest, "{options}");
        error.message
    }

    #[test]
    fn the_version_is_2026_10_21_unless_a_version_date_is_pinned() {
        assert_eq!(parse("{}").unwrap().config.api.api_version, "2026-10-21");
        for pinned in ["2023-06-01", "2026-10-21", "2027-03-01", "2023-01-01"] {
            let r = parse(&format!(r#"{{"apiVersion":"{pinned}"}}"#)).unwrap();
            assert_eq!(
                r.config.api.api_version, pinned,
                "a newer version is sent as given"
            );
        }
        assert_eq!(
            parse(r#"{"apiVersion":null}"#)
                .unwrap()
                .config
                .api
                .api_version,
            "2026-10-21"
        );
        for bad in [
            r#""latest""#,
            r#""2026-13-01""#,
            r#""2026-02-30""#,
            r#""2026-10-21\r\nx: y""#,
            "20261021",
            r#""""#,
            "[]",
        ] {
            let message = refused(&format!(r#"{{"apiVersion":{bad}}}"#));
            assert!(
                message.starts_with("Option apiVersion must be an API version date YYYY-MM-DD, such as \"2026-10-21\" (the default) or \"2023-06-01\"; got "),
                "{bad}: {message}"
            );
            assert!(message.ends_with("Nothing was sent."), "{message}");
        }
    }

    #[test]
    fn the_sampling_options_are_refused_where_the_version_removed_them() {
        for (option, value) in [("temperature", "1"), ("topP", "0.9"), ("topK", "5")] {
            let message = refused(&format!(r#"{{"{option}":{value}}}"#));
            assert_eq!(
                message,
                format!("Option {option} was removed in API version 2026-10-21, which this run speaks: the API refuses temperature, top_p and top_k there, whatever their value. Leave it out, or pin the version that keeps it with apiVersion: \"2023-06-01\". Nothing was sent.")
            );
            let later = refused(&format!(
                r#"{{"{option}":{value},"apiVersion":"2027-01-01"}}"#
            ));
            assert!(
                later.contains("and this run speaks the later 2027-01-01"),
                "{later}"
            );
            // Given as null, nothing is sent: nothing to refuse.
            assert!(parse(&format!(r#"{{"{option}":null}}"#)).is_ok());
        }
        // Refused for being there, before their value is looked at.
        assert!(refused(r#"{"temperature":3}"#).contains("removed in API version 2026-10-21"));
        for field in ["temperature", "top_p", "top_k"] {
            for value in ["0.5", "null"] {
                let message = refused(&format!(r#"{{"extraBody":{{"{field}":{value}}}}}"#));
                assert!(
                    message.starts_with(&format!(
                        "Option extraBody.{field} was removed in API version 2026-10-21"
                    )),
                    "{message}"
                );
            }
        }
    }

    #[test]
    fn the_pinned_version_sends_the_sampling_options_as_before() {
        let r = parse(r#"{"apiVersion":"2023-06-01","temperature":0.5,"topP":0.9,"topK":5,"extraBody":{"top_k":7}}"#).unwrap();
        assert_eq!(r.config.temperature, Some(0.5));
        let sent = |k: &str| r.config.sent_field(k).map(|v| v.get().to_owned());
        assert_eq!(sent("top_p").as_deref(), Some("0.9"));
        assert_eq!(sent("top_k").as_deref(), Some("7"));
        // The range is still checked under the pin.
        let message = refused(r#"{"apiVersion":"2023-06-01","temperature":3}"#);
        assert!(
            message.contains("Option temperature must be a number from 0 to 1"),
            "{message}"
        );
    }
}
