//! Turns what `runWithTools(prompt, options)` was given (as JSON, with the environment the JS
//! layer read at call time) into the engine's [`RunConfig`] and history, or an `invalid_request`
//! error naming the option. Pure Rust, so it is tested without Node.

use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::engine::config::{DEFAULT_BASE_URL, DEFAULT_MODEL};
use crate::engine::protocol::{self, RawMessage};
use crate::engine::tools::kind_of;
use crate::engine::{OnToolError, RunConfig, RunError};

/// Every option `runWithTools` knows (besides `signal` and `context`, which stay in JS).
pub const KNOWN_OPTIONS: &[&str] = &[
    "model",
    "maxTokens",
    "system",
    "temperature",
    "toolChoice",
    "tools",
    "maxToolIterations",
    "onToolError",
    "maxToolFailures",
    "toolTimeoutMs",
    "parallelToolCalls",
    "apiKey",
    "authToken",
    "baseURL",
    "apiVersion",
    "maxRetries",
    "timeoutMs",
];

/// A checked run request.
pub struct RunRequest {
    pub config: RunConfig,
    pub messages: Vec<RawMessage>,
    /// The `tools` option: names of registered tools to offer; `None` offers all.
    pub tool_names: Option<Vec<String>>,
}

/// Parses `{ prompt, options, env }`, the JSON the JS layer sends.
pub fn parse_request(json: &str) -> Result<RunRequest, RunError> {
    let root: Value = serde_json::from_str(json).map_err(|e| {
        RunError::invalid_request(format!("The run request is not valid JSON: {e}."))
    })?;
    let empty = Value::Object(Map::new());
    let prompt = root.get("prompt").unwrap_or(&Value::Null);
    let options = match root.get("options") {
        None | Some(Value::Null) => &empty,
        Some(o @ Value::Object(_)) => o,
        Some(other) => {
            return Err(RunError::invalid_request(format!(
                "options must be an object, got {}.",
                kind_of(other)
            )))
        }
    };
    let env = root.get("env").unwrap_or(&empty);
    let messages = parse_prompt(prompt)?;
    let (config, tool_names) = parse_options(options.as_object().expect("checked above"), env)?;
    Ok(RunRequest {
        config,
        messages,
        tool_names,
    })
}

fn bad(option: &str, expected: &str, got: &Value) -> RunError {
    RunError::invalid_request(format!(
        "Option {option} must be {expected}; got {}. Nothing was sent.",
        show(got)
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

fn parse_prompt(prompt: &Value) -> Result<Vec<RawMessage>, RunError> {
    match prompt {
        Value::String(s) if s.trim().is_empty() => {
            Err(RunError::invalid_request("prompt is an empty string; pass the user's question. Nothing was sent."))
        }
        Value::String(s) => Ok(vec![protocol::user_text(s)]),
        Value::Array(items) if items.is_empty() => {
            Err(RunError::invalid_request("prompt is an empty array; pass at least one message. Nothing was sent."))
        }
        Value::Array(items) => items.iter().enumerate().map(|(i, m)| message(i, m)).collect(),
        other => Err(RunError::invalid_request(format!(
            "prompt must be a string or an array of messages ({{ role, content }}); got {}. Nothing was sent.",
            kind_of(other)
        ))),
    }
}

fn message(i: usize, m: &Value) -> Result<RawMessage, RunError> {
    let bad_message =
        |why: &str| RunError::invalid_request(format!("prompt[{i}] {why}. Nothing was sent."));
    let Value::Object(obj) = m else {
        return Err(bad_message(&format!(
            "must be a message {{ role, content }}, got {}",
            kind_of(m)
        )));
    };
    match obj.get("role").and_then(Value::as_str) {
        Some("user") | Some("assistant") => {}
        _ => return Err(bad_message("needs role \"user\" or \"assistant\"")),
    }
    match obj.get("content") {
        Some(Value::String(_)) => {}
        Some(Value::Array(blocks))
            if blocks
                .iter()
                .all(|b| b.get("type").is_some_and(Value::is_string)) => {}
        Some(Value::Array(_)) => {
            return Err(bad_message("has a content block without a string type"))
        }
        _ => {
            return Err(bad_message(
                "needs content: a string or an array of content blocks",
            ))
        }
    }
    RawValue::from_string(m.to_string()).map_err(|e| bad_message(&e.to_string()))
}

fn string_opt<'a>(
    options: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, RunError> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
        Some(other) => Err(bad(name, "a non-empty string", other)),
    }
}

/// A secret option: the message never shows its value.
fn secret_opt(options: &Map<String, Value>, name: &str) -> Result<Option<String>, RunError> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(other) => Err(RunError::invalid_request(format!(
            "Option {name} must be a non-empty string; got {}. Nothing was sent.",
            kind_of(other)
        ))),
    }
}

fn int_opt(
    options: &Map<String, Value>,
    name: &str,
    min: u64,
    max: u64,
) -> Result<Option<u32>, RunError> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 => Ok(Some(n as u32)),
            _ => Err(bad(name, &format!("an integer from {min} to {max}"), v)),
        },
    }
}

fn millis_opt(options: &Map<String, Value>, name: &str) -> Result<Option<Duration>, RunError> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(ms) if ms.is_finite() && ms > 0.0 && ms <= 2_147_483_647.0 => {
                Ok(Some(Duration::from_secs_f64(ms / 1000.0)))
            }
            _ => Err(bad(name, "a positive number of milliseconds", v)),
        },
    }
}

fn env_str<'a>(env: &'a Value, name: &str) -> Option<&'a str> {
    env.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn parse_options(
    options: &Map<String, Value>,
    env: &Value,
) -> Result<(RunConfig, Option<Vec<String>>), RunError> {
    if let Some(unknown) = options
        .keys()
        .find(|k| !KNOWN_OPTIONS.contains(&k.as_str()))
    {
        return Err(RunError::invalid_request(format!(
            "Unknown option {unknown:?}. Known options: {}, signal, context. Nothing was sent.",
            KNOWN_OPTIONS.join(", ")
        )));
    }
    let api_key = secret_opt(options, "apiKey")?
        .or_else(|| env_str(env, "ANTHROPIC_API_KEY").map(str::to_owned));
    let base_url = match string_opt(options, "baseURL")? {
        Some(url) => url.to_owned(),
        None => env_str(env, "ANTHROPIC_BASE_URL")
            .unwrap_or(DEFAULT_BASE_URL)
            .to_owned(),
    };
    let base_url = check_base_url(base_url, options.contains_key("baseURL"))?;
    let mut cfg = RunConfig::new(api_key, base_url);
    cfg.api.auth_token = secret_opt(options, "authToken")?
        .or_else(|| env_str(env, "ANTHROPIC_AUTH_TOKEN").map(str::to_owned));
    cfg.model = string_opt(options, "model")?
        .or_else(|| env_str(env, "ANTHROPIC_MODEL"))
        .unwrap_or(DEFAULT_MODEL)
        .to_owned();
    if let Some(v) = string_opt(options, "apiVersion")? {
        cfg.api.api_version = v.to_owned();
    }
    if let Some(n) = int_opt(options, "maxTokens", 1, u32::MAX as u64)? {
        cfg.max_tokens = n;
    }
    if let Some(n) = int_opt(options, "maxToolIterations", 0, 10_000)? {
        cfg.max_tool_iterations = n;
    }
    if let Some(n) = int_opt(options, "maxToolFailures", 1, 10_000)? {
        cfg.max_tool_failures = n;
    }
    if let Some(n) = int_opt(options, "maxRetries", 0, 100)? {
        cfg.api.max_retries = n;
    }
    if let Some(d) = millis_opt(options, "timeoutMs")? {
        cfg.api.timeout = d;
    }
    cfg.tool_timeout = millis_opt(options, "toolTimeoutMs")?;
    match options.get("temperature") {
        None | Some(Value::Null) => {}
        Some(v) => match v.as_f64() {
            Some(t) if (0.0..=1.0).contains(&t) => cfg.temperature = Some(t),
            _ => return Err(bad("temperature", "a number from 0 to 1", v)),
        },
    }
    match options.get("onToolError") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "stop" => cfg.on_tool_error = OnToolError::Stop,
        Some(Value::String(s)) if s == "continue" => cfg.on_tool_error = OnToolError::Continue,
        Some(v) => return Err(bad("onToolError", "\"stop\" or \"continue\"", v)),
    }
    match options.get("parallelToolCalls") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => cfg.parallel_tool_calls = *b,
        Some(v) => return Err(bad("parallelToolCalls", "true or false", v)),
    }
    cfg.system = match options.get("system") {
        None | Some(Value::Null) => None,
        Some(v @ Value::String(_)) => Some(raw(v)),
        Some(v @ Value::Array(blocks))
            if blocks.iter().all(|b| {
                b.get("type") == Some(&Value::from("text"))
                    && b.get("text").is_some_and(Value::is_string)
            }) =>
        {
            Some(raw(v))
        }
        Some(v) => {
            return Err(bad(
                "system",
                "a string or an array of text blocks { type: \"text\", text }",
                v,
            ))
        }
    };
    cfg.tool_choice = match options.get("toolChoice") {
        None | Some(Value::Null) => None,
        Some(v) => Some(raw(check_tool_choice(v)?)),
    };
    let tool_names = match options.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Array(names)) => Some(
            names
                .iter()
                .map(|n| {
                    n.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad("tools", "an array of registered tool names", n))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(v) => return Err(bad("tools", "an array of registered tool names", v)),
    };
    Ok((cfg, tool_names))
}

fn raw(v: &Value) -> Box<RawValue> {
    RawValue::from_string(v.to_string()).expect("a serde_json value prints as JSON")
}

fn check_tool_choice(v: &Value) -> Result<&Value, RunError> {
    let expected = "{ type: \"auto\" | \"any\" | \"none\" } or { type: \"tool\", name }";
    let Value::Object(obj) = v else {
        return Err(bad("toolChoice", expected, v));
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("auto") | Some("any") | Some("none") => {}
        Some("tool") if obj.get("name").is_some_and(Value::is_string) => {}
        _ => return Err(bad("toolChoice", expected, v)),
    }
    match obj.get("disable_parallel_tool_use") {
        None | Some(Value::Bool(_)) => Ok(v),
        Some(other) => Err(bad(
            "toolChoice.disable_parallel_tool_use",
            "true or false",
            other,
        )),
    }
}

fn check_base_url(url: String, from_option: bool) -> Result<String, RunError> {
    let source = if from_option {
        "Option baseURL"
    } else {
        "ANTHROPIC_BASE_URL"
    };
    let trimmed = url.trim_end_matches('/');
    let parsed = reqwest::Url::parse(trimmed).map_err(|e| {
        RunError::invalid_request(format!(
            "{source} {trimmed:?} is not a URL ({e}). Nothing was sent."
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(RunError::invalid_request(format!(
            "{source} {trimmed:?} must be an http(s) URL. Nothing was sent."
        )));
    }
    if trimmed.ends_with("/v1") {
        return Err(RunError::invalid_request(format!(
            "{source} {trimmed:?} must not end with /v1: /v1/messages is added to it. Nothing was sent."
        )));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<RunRequest, RunError> {
        parse_request(json)
    }

    #[test]
    fn defaults_and_env() {
        let r = parse(r#"{"prompt":"hi","env":{"ANTHROPIC_API_KEY":"k","ANTHROPIC_MODEL":"m","ANTHROPIC_BASE_URL":"http://127.0.0.1:9/"}}"#)
            .unwrap();
        assert_eq!(r.config.model, "m");
        assert_eq!(r.config.api.api_key.as_deref(), Some("k"));
        assert_eq!(r.config.api.base_url, "http://127.0.0.1:9");
        assert_eq!(r.config.max_tokens, 4096);
        assert_eq!(r.config.max_tool_iterations, 5);
        assert_eq!(r.config.api.max_retries, 2);
        assert_eq!(r.config.api.timeout, Duration::from_secs(600));
        assert!(r.config.parallel_tool_calls);
        assert_eq!(r.messages.len(), 1);
        assert_eq!(r.messages[0].get(), r#"{"role":"user","content":"hi"}"#);
        let r = parse(r#"{"prompt":"hi","options":{"model":"o","apiKey":"ok"},"env":{"ANTHROPIC_API_KEY":"k","ANTHROPIC_MODEL":"m"}}"#).unwrap();
        assert_eq!(r.config.model, "o");
        assert_eq!(r.config.api.api_key.as_deref(), Some("ok"));
        assert_eq!(r.config.api.base_url, "https://api.anthropic.com");
    }

    #[test]
    fn bad_options_name_the_option() {
        let cases = [
            (r#"{"maxTokens":0}"#, "maxTokens"),
            (r#"{"maxTokens":1.5}"#, "maxTokens"),
            (r#"{"maxTokens":"9"}"#, "maxTokens"),
            (r#"{"temperature":3}"#, "temperature"),
            (r#"{"onToolError":"ignore"}"#, "onToolError"),
            (r#"{"maxToolIterations":-1}"#, "maxToolIterations"),
            (r#"{"toolChoice":{"type":"tool"}}"#, "toolChoice"),
            (r#"{"tools":"get_order_status"}"#, "tools"),
            (r#"{"baseURL":"ftp://x"}"#, "baseURL"),
            (r#"{"baseURL":"http://127.0.0.1:1/v1"}"#, "/v1"),
            (r#"{"timeoutMs":0}"#, "timeoutMs"),
            (r#"{"parallelToolCalls":"yes"}"#, "parallelToolCalls"),
            (r#"{"system":{"text":"x"}}"#, "system"),
            (r#"{"maxToken":5}"#, "Unknown option \"maxToken\""),
        ];
        for (options, expected) in cases {
            let err = parse(&format!(r#"{{"prompt":"hi","options":{options}}}"#))
                .err()
                .expect(options);
            assert_eq!(err.code, crate::engine::ErrorCode::InvalidRequest);
            assert!(err.message.contains(expected), "{options}: {}", err.message);
        }
    }

    #[test]
    fn bad_prompts_are_refused() {
        for prompt in [
            r#""""#,
            "[]",
            "5",
            r#"[{"role":"system","content":"x"}]"#,
            r#"[{"role":"user"}]"#,
        ] {
            let err = parse(&format!(r#"{{"prompt":{prompt}}}"#))
                .err()
                .expect(prompt);
            assert!(err.message.contains("prompt"), "{prompt}: {}", err.message);
        }
        let r = parse(r#"{"prompt":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}"#).unwrap();
        assert_eq!(r.messages.len(), 3);
    }

    #[test]
    fn secrets_are_never_shown() {
        let err = parse(r#"{"prompt":"hi","options":{"apiKey":12345}}"#)
            .err()
            .unwrap();
        assert!(!err.message.contains("12345"), "{}", err.message);
    }
}
