//! Reading one option: its value checked against what it must be, or an `invalid_request` that
//! names the option, says what it must be and shows what it got (never a secret).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::engine::tools::tool::kind_of;
use crate::engine::{RunError, Secret};

/// One option as the caller gave it: its name, for messages, and its JSON text (`None` when
/// the options did not have it).
#[derive(Clone, Copy)]
pub struct Given<'a> {
    /// The option's name, as the caller writes it.
    pub name: &'static str,
    /// The option's value, as the JSON text it came as.
    pub raw: Option<&'a RawValue>,
}

impl<'a> Given<'a> {
    /// An option the caller did not give.
    pub const fn absent(name: &'static str) -> Self {
        Given { name, raw: None }
    }

    /// The JSON text, `None` when absent or `null`.
    pub fn raw(self) -> Option<&'a RawValue> {
        self.raw.filter(|raw| raw.get() != "null")
    }

    /// The value parsed for checking (small: never the history); `None` when absent or `null`.
    pub fn value(self) -> Option<Value> {
        self.raw.map(value).filter(|v| !v.is_null())
    }

    /// The JSON text to send as given, with its value parsed for checking; `None` when absent
    /// or `null`.
    pub fn to_send(self) -> Option<(&'a RawValue, Value)> {
        let raw = self.raw?;
        Some((raw, value(raw))).filter(|(_, v)| !v.is_null())
    }

    /// The refusal of this option's value: it must be `expected`, and got `got`.
    pub fn bad(self, expected: &str, got: &Value) -> RunError {
        bad(self.name, expected, got)
    }

    /// A non-empty string.
    pub fn string(self) -> Result<Option<String>, RunError> {
        match self.value() {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
            Some(other) => Err(self.bad("a non-empty string", &other)),
        }
    }

    /// A non-empty string that is a credential: the message never shows its value.
    pub fn secret(self) -> Result<Option<Secret>, RunError> {
        match self.value() {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(Secret::new(s))),
            Some(other) => Err(bad_kind(self.name, "a non-empty string", &other)),
        }
    }

    /// A whole number from `min` to `max`.
    pub fn int(self, min: u64, max: u64) -> Result<Option<u32>, RunError> {
        match self.value() {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 => {
                    Ok(Some(n as u32))
                }
                _ => Err(self.bad(&format!("an integer from {min} to {max}"), &v)),
            },
        }
    }

    /// A positive number of milliseconds that fits a JS timer.
    pub fn millis(self) -> Result<Option<Duration>, RunError> {
        match self.value() {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(ms) if ms.is_finite() && ms > 0.0 && ms <= 2_147_483_647.0 => {
                    Ok(Some(Duration::from_secs_f64(ms / 1000.0)))
                }
                _ => Err(self.bad("a positive number of milliseconds", &v)),
            },
        }
    }

    /// One of the strings of `choices`, as what it stands for.
    pub fn choice<T: Copy>(self, choices: &[(&str, T)]) -> Result<Option<T>, RunError> {
        let Some(v) = self.value() else {
            return Ok(None);
        };
        if let Some(s) = v.as_str() {
            if let Some((_, t)) = choices.iter().find(|(c, _)| *c == s) {
                return Ok(Some(*t));
            }
        }
        let names: Vec<String> = choices.iter().map(|(c, _)| format!("{c:?}")).collect();
        Err(self.bad(&names.join(" or "), &v))
    }

    /// `true` or `false`.
    pub fn bool(self) -> Result<Option<bool>, RunError> {
        match self.value() {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(v) => Err(self.bad("true or false", &v)),
        }
    }
}

/// A raw JSON text as a value, for checking (small: never the history).
pub fn value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// `option` (or a part of it, like `approvals[2]`) must be `expected`, and got `got`.
pub fn bad(option: &str, expected: &str, got: &Value) -> RunError {
    RunError::invalid_request(format!(
        "Option {option} must be {expected}; got {}. Nothing was sent.",
        show(got)
    ))
}

/// Like [`bad`], for an option whose value may be a credential: only its kind is shown.
pub fn bad_kind(option: &str, expected: &str, got: &Value) -> RunError {
    RunError::invalid_request(format!(
        "Option {option} must be {expected}; got {}. Nothing was sent.",
        kind_of(got)
    ))
}

/// A value as it appears in a message: short, and never a secret (only option values are shown,
/// and the key options are never passed here).
fn show(v: &Value) -> String {
    let text = v.to_string();
    if text.len() > 80 {
        format!(
            "{}… ({})",
            &text[..text.char_indices().nth(77).map_or(text.len(), |(i, _)| i)],
            kind_of(v)
        )
    } else {
        text
    }
}

/// An environment variable the JS layer read at call time; `None` when unset or empty.
pub fn env_str<'a>(env: &'a BTreeMap<String, Value>, name: &str) -> Option<&'a str> {
    env.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}
