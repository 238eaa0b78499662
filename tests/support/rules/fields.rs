//! The request's optional top-level fields and the thinking settings: the type and range each
//! must have, and what thinking rules out.

use serde_json::Value;

const THINKING_DOCS: &str = "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking";

fn expect(problems: &mut Vec<String>, ok: bool, what: &str) {
    if !ok {
        problems.push(what.to_owned());
    }
}

/// The optional top-level fields, each with the JSON type the API expects.
pub(super) fn check_fields(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let present = |key: &str| body.get(key).filter(|v| !v.is_null());
    if let Some(v) = present("system") {
        expect(
            &mut problems,
            v.is_string()
                || v.as_array().is_some_and(|blocks| {
                    blocks.iter().all(|b| {
                        b["type"] == "text" && b["text"].as_str().is_some_and(|t| !t.is_empty())
                    })
                }),
            "system: Input should be a valid string or a list of non-empty text blocks",
        );
        for (i, block) in v.as_array().into_iter().flatten().enumerate() {
            if let Some(Err(why)) = block
                .get("cache_control")
                .map(|c| cache_control(c, &format!("system.{i}.cache_control")))
            {
                problems.push(why);
            }
        }
    }
    if let Some(v) = present("stream") {
        expect(
            &mut problems,
            v.is_boolean(),
            "stream: Input should be a valid boolean",
        );
    }
    if let Some(v) = present("stop_sequences") {
        expect(
            &mut problems,
            v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            "stop_sequences: Input should be a valid list of strings",
        );
    }
    if let Some(v) = present("top_p") {
        expect(
            &mut problems,
            v.as_f64().is_some_and(|p| (0.0..=1.0).contains(&p)),
            "top_p: Input should be a number between 0 and 1",
        );
    }
    if let Some(v) = present("top_k") {
        expect(
            &mut problems,
            v.as_u64().is_some(),
            "top_k: Input should be a valid integer",
        );
    }
    if let Some(v) = present("metadata") {
        expect(
            &mut problems,
            v.as_object().is_some_and(|m| {
                m.iter()
                    .all(|(k, v)| k == "user_id" && (v.is_string() || v.is_null()))
            }),
            "metadata: Input should be a dictionary with an optional string user_id",
        );
    }
    if let Some(v) = present("service_tier") {
        expect(
            &mut problems,
            v == "auto" || v == "standard_only",
            "service_tier: Input should be 'auto' or 'standard_only'",
        );
    }
    if let Some(v) = present("cache_control") {
        if let Err(why) = cache_control(v, "cache_control") {
            problems.push(why);
        }
    }
    if let Some(v) = present("container") {
        expect(
            &mut problems,
            v.is_string() || v["id"].is_string(),
            "container: Input should be a valid string",
        );
    }
    if let Some(v) = present("inference_geo") {
        expect(
            &mut problems,
            v.is_string(),
            "inference_geo: Input should be a valid string",
        );
    }
    if let Some(v) = present("thinking") {
        problems.extend(check_thinking_config(v, &body["max_tokens"]));
    }
    problems
}

/// `v` is an integer of at least `min`; the error names the field `at`.
pub(super) fn integer_at_least(v: &Value, min: i64, at: &str) -> Option<String> {
    match v.as_i64() {
        _ if !(v.is_i64() || v.is_u64()) => Some(format!("{at}: Input should be a valid integer")),
        Some(n) if n < min => Some(format!(
            "{at}: Input should be greater than or equal to {min}"
        )),
        _ => None,
    }
}

pub(super) fn cache_control(v: &Value, at: &str) -> Result<(), String> {
    let Some(cc) = v.as_object() else {
        return Err(format!("{at}: Input should be a valid dictionary"));
    };
    if cc.get("type").is_none_or(|t| t != "ephemeral") {
        return Err(format!("{at}.type: Input should be 'ephemeral'"));
    }
    if let Some(extra) = cc.keys().find(|k| *k != "type" && *k != "ttl") {
        return Err(format!("{at}.{extra}: Extra inputs are not permitted"));
    }
    match cc.get("ttl") {
        None => Ok(()),
        Some(t) if t == "5m" || t == "1h" => Ok(()),
        Some(_) => Err(format!("{at}.ttl: Input should be '5m' or '1h'")),
    }
}

/// The API's words for a tag that is none of `tags` (listed in their order).
pub(super) fn unknown_tag(at: &str, tag: &Value, tags: &[&str]) -> String {
    let expected: Vec<String> = tags.iter().map(|t| format!("'{t}'")).collect();
    format!(
        "{at}: Input tag '{}' found using 'type' does not match any of the expected tags: {}",
        tag.as_str().unwrap_or_default(),
        expected.join(", ")
    )
}

/// A problem for each key of `object` that is not `allowed`.
pub(super) fn extra_keys(
    object: &serde_json::Map<String, Value>,
    allowed: &[&str],
    at: &str,
) -> Vec<String> {
    object
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .map(|k| format!("{at}.{k}: Extra inputs are not permitted"))
        .collect()
}

/// A tagged object (`{"type": …}`): its tag, and a problem for each field its variant does not
/// allow; or the API's words for a tag that is none of `variants` (listed in their order).
pub(super) fn tagged<'a>(
    at: &str,
    object: &'a serde_json::Map<String, Value>,
    variants: &[(&str, &[&str])],
) -> Result<(&'a str, Vec<String>), String> {
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some((_, allowed)) = variants.iter().find(|(tag, _)| *tag == kind) else {
        let tags: Vec<&str> = variants.iter().map(|(tag, _)| *tag).collect();
        return Err(unknown_tag(at, &Value::from(kind), &tags));
    };
    Ok((kind, extra_keys(object, allowed, &format!("{at}.{kind}"))))
}

fn check_thinking_config(thinking: &Value, max_tokens: &Value) -> Vec<String> {
    let Some(config) = thinking.as_object() else {
        return vec!["thinking: Input should be a valid dictionary".into()];
    };
    let (kind, mut problems) = match tagged(
        "thinking",
        config,
        &[
            ("enabled", &["type", "budget_tokens"]),
            ("disabled", &["type"]),
            ("adaptive", &["type"]),
        ],
    ) {
        Ok(read) => read,
        Err(problem) => return vec![problem],
    };
    if kind == "enabled" {
        match config.get("budget_tokens").map(Value::as_u64) {
            None => problems.push("thinking.enabled.budget_tokens: Field required".into()),
            Some(None) => problems.push("thinking.enabled.budget_tokens: Input should be a valid integer".into()),
            Some(Some(b)) if b < 1024 => problems.push(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into(),
            ),
            Some(Some(b)) if max_tokens.as_u64().is_some_and(|m| b >= m) => problems.push(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at \
                 https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
                    .into(),
            ),
            Some(Some(_)) => {}
        }
    }
    problems
}

pub(super) fn thinking_on(body: &Value) -> bool {
    matches!(
        body["thinking"]["type"].as_str(),
        Some("enabled" | "adaptive")
    )
}

/// What thinking rules out: sampling changes and forced tool use.
pub(super) fn check_thinking_compatibility(body: &Value) -> Vec<String> {
    if !thinking_on(body) {
        return Vec::new();
    }
    let mut problems = Vec::new();
    if body
        .get("temperature")
        .is_some_and(|t| t.as_f64() != Some(1.0))
    {
        problems.push(format!("`temperature` may only be set to 1 when thinking is enabled or in adaptive mode. {THINKING_DOCS}"));
    }
    if body.get("top_k").is_some() {
        problems.push(format!(
            "`top_k` must be unset when thinking is enabled. {THINKING_DOCS}"
        ));
    }
    if body["top_p"].as_f64().is_some_and(|p| p < 0.95) {
        problems.push(format!("`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled. {THINKING_DOCS}"));
    }
    if matches!(body["tool_choice"]["type"].as_str(), Some("any" | "tool")) {
        problems.push("Thinking may not be enabled when tool_choice forces tool use.".into());
    }
    problems
}
