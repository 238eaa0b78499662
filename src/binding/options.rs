//! Turns what `runWithTools(prompt, options)` was given (as JSON, with the environment the JS
//! layer read at call time) into the engine's [`RunConfig`] and history, or an `invalid_request`
//! error naming the option. Pure Rust, so it is tested without Node, and run off the JS thread.
//!
//! Whatever the caller gave that goes on the wire (the prompt's messages, `system`,
//! `toolChoice`, the pass-through fields) is checked through borrowed views and kept as the JSON
//! text it came as (`RawValue`): keys keep their order, byte for byte.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::engine::approval::{Decision, Signer, DEFAULT_APPROVAL_TTL};
use crate::engine::config::{DEFAULT_BASE_URL, DEFAULT_MODEL};
use crate::engine::feedback as fb;
use crate::engine::protocol::{self, RawMessage};
use crate::engine::secret::MIN_APPROVAL_SECRET_CHARS;
use crate::engine::tool::kind_of;
use crate::engine::{OnMaxIterations, OnToolError, RunConfig, RunError, Secret, ToolChoice};

/// Request fields passed through as given: (option, wire name, the JSON type it must have).
const PASS_THROUGH: &[(&str, &str, Json)] = &[
    ("thinking", "thinking", Json::Object),
    ("stopSequences", "stop_sequences", Json::Strings),
    ("topP", "top_p", Json::Number),
    ("topK", "top_k", Json::Integer),
    ("metadata", "metadata", Json::Object),
    ("serviceTier", "service_tier", Json::String),
    ("cacheControl", "cache_control", Json::Object),
    ("outputConfig", "output_config", Json::Object),
    ("contextManagement", "context_management", Json::Object),
];

/// Every option `runWithTools` knows besides the pass-through ones (and `signal` and
/// `context`, which stay in JS).
pub const KNOWN_OPTIONS: &[&str] = &[
    "model",
    "maxTokens",
    "system",
    "temperature",
    "toolChoice",
    "tools",
    "maxToolIterations",
    "onMaxIterations",
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
    "serverTools",
    "betas",
    "headers",
    "extraBody",
    "container",
    "approvals",
    "approvalSecret",
    "approvalTtlMs",
    "approvalScope",
];

/// Headers the `headers` option may not replace.
const OWN_HEADERS: &[&str] = &[
    "x-api-key",
    "authorization",
    "anthropic-version",
    "content-type",
];
/// Body fields `extraBody` may not replace: the loop owns them.
const OWN_FIELDS: &[&str] = &["model", "messages", "tools", "stream"];

/// The JSON type a pass-through option must have.
#[derive(Clone, Copy)]
enum Json {
    Object,
    String,
    Number,
    Integer,
    Strings,
}

impl Json {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Json::Object => v.is_object(),
            Json::String => v.is_string(),
            Json::Number => v.is_number(),
            Json::Integer => v.is_i64() || v.is_u64(),
            Json::Strings => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Json::Object => "an object",
            Json::String => "a string",
            Json::Number => "a number",
            Json::Integer => "an integer",
            Json::Strings => "an array of strings",
        }
    }
}

/// A checked run request.
pub struct RunRequest {
    pub config: RunConfig,
    pub messages: Vec<RawMessage>,
    /// The `tools` option: names of registered tools to offer; `None` offers all.
    pub tool_names: Option<Vec<String>>,
}

/// What the JS layer sends: `{ prompt, options, env }`, read without re-encoding anything.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow, default)]
    prompt: Option<&'a RawValue>,
    #[serde(borrow, default)]
    options: Option<&'a RawValue>,
    #[serde(default)]
    env: BTreeMap<String, Value>,
}

/// The options, each value as the JSON text it came as.
type Options<'a> = BTreeMap<String, &'a RawValue>;

/// Parses `{ prompt, options, env }`, the JSON the JS layer sends.
pub fn parse_request(json: &str) -> Result<RunRequest, RunError> {
    let incoming: Incoming = serde_json::from_str(json).map_err(|e| {
        RunError::invalid_request(format!("The run request is not valid JSON: {e}."))
    })?;
    let options: Options = match incoming.options {
        None => Options::new(),
        Some(raw) if raw.get() == "null" => Options::new(),
        Some(raw) => serde_json::from_str(raw.get()).map_err(|_| {
            RunError::invalid_request(format!(
                "options must be an object, got {}.",
                kind_of(&value(raw))
            ))
        })?,
    };
    let messages = parse_prompt(incoming.prompt)?;
    let (config, tool_names) = parse_options(&options, &incoming.env)?;
    Ok(RunRequest {
        config,
        messages,
        tool_names,
    })
}

/// A raw option as a value, for checking (small: never the history).
fn value(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
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

/// A message of the prompt, seen through borrowed fields only.
#[derive(Deserialize)]
struct MessageView<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// A content block, seen through its `type` only.
#[derive(Deserialize)]
struct BlockView<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
}

fn parse_prompt(prompt: Option<&RawValue>) -> Result<Vec<RawMessage>, RunError> {
    let text = prompt.map_or("null", |p| p.get());
    match text.as_bytes().first() {
        Some(b'"') => {
            let s: String = serde_json::from_str(text).map_err(|e| {
                RunError::invalid_request(format!("prompt is not a valid string: {e}. Nothing was sent."))
            })?;
            if s.trim().is_empty() {
                return Err(RunError::invalid_request(
                    "prompt is an empty string; pass the user's question. Nothing was sent.",
                ));
            }
            Ok(vec![protocol::user_text(&s)])
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| {
                RunError::invalid_request(format!("prompt is not a valid array: {e}. Nothing was sent."))
            })?;
            if items.is_empty() {
                return Err(RunError::invalid_request(
                    "prompt is an empty array; pass at least one message. Nothing was sent.",
                ));
            }
            items.into_iter().enumerate().map(|(i, m)| message(i, m)).collect()
        }
        _ => Err(RunError::invalid_request(format!(
            "prompt must be a string or an array of messages ({{ role, content }}); got {}. Nothing was sent.",
            kind_of(&value(prompt.unwrap_or(&*null())))
        ))),
    }
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("null is JSON")
}

fn message(i: usize, m: &RawValue) -> Result<RawMessage, RunError> {
    let bad_message =
        |why: &str| RunError::invalid_request(format!("prompt[{i}] {why}. Nothing was sent."));
    let view: MessageView = if m.get().starts_with('{') {
        serde_json::from_str(m.get()).map_err(|e| bad_message(&e.to_string()))?
    } else {
        return Err(bad_message(&format!(
            "must be a message {{ role, content }}, got {}",
            kind_of(&value(m))
        )));
    };
    match view.role.as_deref() {
        Some("user") | Some("assistant") => {}
        _ => return Err(bad_message("needs role \"user\" or \"assistant\"")),
    }
    let content = view.content.map_or("null", |c| c.get());
    match content.as_bytes().first() {
        Some(b'"') => {}
        Some(b'[') => {
            let blocks: Vec<&RawValue> =
                serde_json::from_str(content).map_err(|e| bad_message(&e.to_string()))?;
            for block in blocks {
                let typed = block.get().starts_with('{')
                    && serde_json::from_str::<BlockView>(block.get())
                        .ok()
                        .is_some_and(|b| b.kind.is_some());
                if !typed {
                    return Err(bad_message("has a content block without a string type"));
                }
            }
        }
        _ => {
            return Err(bad_message(
                "needs content: a string or an array of content blocks",
            ))
        }
    }
    Ok(m.to_owned().into())
}

/// One option, parsed for checking; `None` when absent or `null`.
fn opt(options: &Options, name: &str) -> Option<Value> {
    options
        .get(name)
        .map(|raw| value(raw))
        .filter(|v| !v.is_null())
}

fn string_opt(options: &Options, name: &str) -> Result<Option<String>, RunError> {
    match opt(options, name) {
        None => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
        Some(other) => Err(bad(name, "a non-empty string", &other)),
    }
}

/// A secret option: the message never shows its value.
fn secret_opt(options: &Options, name: &str) -> Result<Option<Secret>, RunError> {
    match opt(options, name) {
        None => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(Secret::new(s))),
        Some(other) => Err(bad_kind(name, "a non-empty string", &other)),
    }
}

/// Like [`bad`], for an option whose value may be a credential: only its kind is shown.
fn bad_kind(option: &str, expected: &str, got: &Value) -> RunError {
    RunError::invalid_request(format!(
        "Option {option} must be {expected}; got {}. Nothing was sent.",
        kind_of(got)
    ))
}

/// `approvalSecret`, else `ANTHROPIC_TOOL_CALLING_SECRET`. A short one is refused whether or not
/// this run needs it: a short secret given is always a mistake, better found on the first run
/// than on the first one that pauses for approval.
fn approval_secret(
    options: &Options,
    env: &BTreeMap<String, Value>,
) -> Result<Option<Secret>, RunError> {
    let (secret, source) = match secret_opt(options, "approvalSecret")? {
        Some(secret) => (secret, "Option approvalSecret"),
        None => match env_str(env, "ANTHROPIC_TOOL_CALLING_SECRET") {
            Some(secret) => (Secret::from(secret), "ANTHROPIC_TOOL_CALLING_SECRET"),
            None => return Ok(None),
        },
    };
    let chars = secret.expose().chars().count();
    if chars < MIN_APPROVAL_SECRET_CHARS {
        return Err(fb::short_approval_secret(source, chars));
    }
    Ok(Some(secret))
}

fn int_opt(options: &Options, name: &str, min: u64, max: u64) -> Result<Option<u32>, RunError> {
    match opt(options, name) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 => Ok(Some(n as u32)),
            _ => Err(bad(name, &format!("an integer from {min} to {max}"), &v)),
        },
    }
}

fn millis_opt(options: &Options, name: &str) -> Result<Option<Duration>, RunError> {
    match opt(options, name) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(ms) if ms.is_finite() && ms > 0.0 && ms <= 2_147_483_647.0 => {
                Ok(Some(Duration::from_secs_f64(ms / 1000.0)))
            }
            _ => Err(bad(name, "a positive number of milliseconds", &v)),
        },
    }
}

fn enum_opt<T: Copy>(
    options: &Options,
    name: &str,
    choices: &[(&str, T)],
) -> Result<Option<T>, RunError> {
    let Some(v) = opt(options, name) else {
        return Ok(None);
    };
    if let Some(s) = v.as_str() {
        if let Some((_, t)) = choices.iter().find(|(c, _)| *c == s) {
            return Ok(Some(*t));
        }
    }
    let names: Vec<String> = choices.iter().map(|(c, _)| format!("{c:?}")).collect();
    Err(bad(name, &names.join(" or "), &v))
}

fn env_str<'a>(env: &'a BTreeMap<String, Value>, name: &str) -> Option<&'a str> {
    env.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn parse_options(
    options: &Options,
    env: &BTreeMap<String, Value>,
) -> Result<(RunConfig, Option<Vec<String>>), RunError> {
    if let Some(unknown) = options.keys().find(|k| {
        !KNOWN_OPTIONS.contains(&k.as_str()) && !PASS_THROUGH.iter().any(|(o, _, _)| o == k)
    }) {
        let pass: Vec<&str> = PASS_THROUGH.iter().map(|(o, _, _)| *o).collect();
        return Err(RunError::invalid_request(format!(
            "Unknown option {unknown:?}. Known options: {}, {}, signal, context. Nothing was sent.",
            KNOWN_OPTIONS.join(", "),
            pass.join(", ")
        )));
    }
    // Explicit credentials win, and then the environment's are not read at all: a caller who
    // points baseURL at a gateway with its own token must not send ANTHROPIC_API_KEY there.
    let api_key = secret_opt(options, "apiKey")?;
    let auth_token = secret_opt(options, "authToken")?;
    let (api_key, auth_token) = if api_key.is_some() || auth_token.is_some() {
        (api_key, auth_token)
    } else {
        (
            env_str(env, "ANTHROPIC_API_KEY").map(Secret::from),
            env_str(env, "ANTHROPIC_AUTH_TOKEN").map(Secret::from),
        )
    };
    let from_option = string_opt(options, "baseURL")?;
    let base_url = check_base_url(
        from_option
            .clone()
            .or_else(|| env_str(env, "ANTHROPIC_BASE_URL").map(str::to_owned))
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
        from_option.is_some(),
    )?;
    let mut cfg = RunConfig::new(api_key, base_url);
    cfg.api.auth_token = auth_token;
    cfg.model = string_opt(options, "model")?
        .or_else(|| env_str(env, "ANTHROPIC_MODEL").map(str::to_owned))
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    if let Some(v) = string_opt(options, "apiVersion")? {
        cfg.api.api_version = v;
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
    if let Some(v) = opt(options, "temperature") {
        match v.as_f64() {
            Some(t) if (0.0..=1.0).contains(&t) => cfg.temperature = Some(t),
            _ => return Err(bad("temperature", "a number from 0 to 1", &v)),
        }
    }
    let modes = [
        ("stop", OnToolError::Stop),
        ("continue", OnToolError::Continue),
    ];
    if let Some(mode) = enum_opt(options, "onToolError", &modes)? {
        cfg.on_tool_error = mode;
    }
    let limits = [
        ("error", OnMaxIterations::Error),
        ("answer", OnMaxIterations::Answer),
    ];
    if let Some(mode) = enum_opt(options, "onMaxIterations", &limits)? {
        cfg.on_max_iterations = mode;
    }
    if let Some(v) = opt(options, "parallelToolCalls") {
        match v {
            Value::Bool(b) => cfg.parallel_tool_calls = b,
            v => return Err(bad("parallelToolCalls", "true or false", &v)),
        }
    }
    if let Some(v) = opt(options, "system") {
        let text_blocks = v.as_array().is_some_and(|blocks| {
            blocks.iter().all(|b| {
                b.get("type") == Some(&Value::from("text"))
                    && b.get("text").is_some_and(Value::is_string)
            })
        });
        if !v.is_string() && !text_blocks {
            return Err(bad(
                "system",
                "a string or an array of text blocks { type: \"text\", text }",
                &v,
            ));
        }
        cfg.system = Some(options["system"].to_owned());
    }
    if let Some(v) = opt(options, "toolChoice") {
        cfg.tool_choice = Some(tool_choice(&v, options["toolChoice"])?);
    }
    for (option, wire, json) in PASS_THROUGH {
        if let Some(v) = opt(options, option) {
            if !json.accepts(&v) {
                return Err(bad(option, json.name(), &v));
            }
            cfg.fields.push((wire, options[*option].to_owned()));
        }
    }
    cfg.server_tools = server_tools(options)?;
    cfg.container = string_opt(options, "container")?;
    cfg.approval_scope = string_opt(options, "approvalScope")?.unwrap_or_default();
    cfg.extra_body = extra_body(options)?;
    cfg.api.headers = headers(options)?;
    let secret = approval_secret(options, env)?;
    let ttl = millis_opt(options, "approvalTtlMs")?.unwrap_or(DEFAULT_APPROVAL_TTL);
    cfg.api.unsent_secrets.extend(secret.clone());
    cfg.signer = secret.map(|secret| Signer { secret, ttl });
    cfg.approvals = approvals(options)?;
    let tool_names = match opt(options, "tools") {
        None => None,
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
        Some(v) => return Err(bad("tools", "an array of registered tool names", &v)),
    };
    Ok((cfg, tool_names))
}

/// `toolChoice`, checked; kept as given, with the `auto` choice that follows a forcing one.
fn tool_choice(v: &Value, raw: &RawValue) -> Result<ToolChoice, RunError> {
    let expected = "{ type: \"auto\" | \"any\" | \"none\" } or { type: \"tool\", name }";
    let Value::Object(obj) = v else {
        return Err(bad("toolChoice", expected, v));
    };
    let kind = obj.get("type").and_then(Value::as_str);
    match kind {
        Some("auto") | Some("any") | Some("none") => {}
        Some("tool") if obj.get("name").is_some_and(Value::is_string) => {}
        _ => return Err(bad("toolChoice", expected, v)),
    }
    match obj.get("disable_parallel_tool_use") {
        None => {}
        Some(Value::Bool(_)) if kind != Some("none") => {}
        Some(Value::Bool(_)) => {
            return Err(RunError::invalid_request(
                "Option toolChoice { type: \"none\" } cannot carry disable_parallel_tool_use (the API refuses it). Nothing was sent.",
            ))
        }
        Some(other) => return Err(bad("toolChoice.disable_parallel_tool_use", "true or false", other)),
    }
    Ok(ToolChoice::new(raw.to_owned()))
}

/// `approvals`: `[{ approvalId, approved, reason? }]`, the person's answers.
fn approvals(options: &Options) -> Result<Vec<Decision>, RunError> {
    let expected = "an array of { approvalId: string, approved: boolean, reason?: string }";
    let Some(v) = opt(options, "approvals") else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = &v else {
        return Err(bad("approvals", expected, &v));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let id = item.get("approvalId").and_then(Value::as_str);
            let approved = item.get("approved").and_then(Value::as_bool);
            let reason = match item.get("reason") {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(r)) => Ok(Some(r.clone())),
                Some(_) => Err(()),
            };
            match (id, approved, reason) {
                (Some(id), Some(approved), Ok(reason)) => Ok(Decision {
                    approval_id: id.to_owned(),
                    approved,
                    reason,
                }),
                _ => Err(bad(
                    &format!("approvals[{i}]"),
                    "{ approvalId: string, approved: boolean, reason?: string }",
                    item,
                )),
            }
        })
        .collect()
}

/// `serverTools`: definitions with a `type`, sent as given after the client tools.
fn server_tools(options: &Options) -> Result<Vec<Box<RawValue>>, RunError> {
    let expected = "an array of server tool definitions { type, name, … }";
    let Some(v) = opt(options, "serverTools") else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = &v else {
        return Err(bad("serverTools", expected, &v));
    };
    for (i, item) in items.iter().enumerate() {
        let typed = item.get("type").is_some_and(Value::is_string)
            && item.get("name").is_some_and(Value::is_string);
        if !typed {
            return Err(bad(
                &format!("serverTools[{i}]"),
                "an object with a string type and name",
                item,
            ));
        }
    }
    let raws: Vec<&RawValue> = serde_json::from_str(options["serverTools"].get())
        .map_err(|_| bad("serverTools", expected, &v))?;
    Ok(raws.into_iter().map(|r| r.to_owned()).collect())
}

/// `extraBody`: merged into the body last; the loop's own fields are refused.
fn extra_body(options: &Options) -> Result<Vec<(String, Box<RawValue>)>, RunError> {
    let Some(raw) = options.get("extraBody").filter(|r| r.get() != "null") else {
        return Ok(Vec::new());
    };
    let fields: Vec<(String, Box<RawValue>)> = serde_json::from_str::<BTreeMapInOrder>(raw.get())
        .map_err(|_| bad("extraBody", "an object of request fields", &value(raw)))?
        .0;
    if let Some((key, _)) = fields
        .iter()
        .find(|(k, _)| OWN_FIELDS.contains(&k.as_str()))
    {
        return Err(RunError::invalid_request(format!(
            "Option extraBody may not set {key:?}: the loop owns {}. Nothing was sent.",
            OWN_FIELDS.join(", ")
        )));
    }
    Ok(fields)
}

/// An object's fields in the order they came.
struct BTreeMapInOrder(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for BTreeMapInOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = BTreeMapInOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    out.retain(|(key, _): &(String, Box<RawValue>)| key != &k);
                    out.push((k, v));
                }
                Ok(BTreeMapInOrder(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// `betas` and `headers`: extra request headers; the credential, version and content-type
/// headers are the loop's own.
fn headers(options: &Options) -> Result<Vec<(HeaderName, HeaderValue)>, RunError> {
    let mut out = Vec::new();
    if let Some(v) = opt(options, "betas") {
        let names: Option<Vec<&str>> = v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect());
        match names {
            Some(names) if !names.is_empty() => {
                let joined = names.join(",");
                let value = HeaderValue::from_str(&joined)
                    .map_err(|_| bad("betas", "an array of beta names", &v))?;
                out.push((HeaderName::from_static("anthropic-beta"), value));
            }
            _ => {
                return Err(bad(
                    "betas",
                    "a non-empty array of beta names (strings)",
                    &v,
                ))
            }
        }
    }
    // The `headers` option's values are shown in no message (they may be credentials) and
    // marked sensitive: never quoted from what the API says back, never indexed by HTTP/2.
    if let Some(v) = opt(options, "headers") {
        let Value::Object(map) = &v else {
            return Err(bad_kind(
                "headers",
                "an object of header names and string values",
                &v,
            ));
        };
        for (name, value) in map {
            let lower = name.to_ascii_lowercase();
            if OWN_HEADERS.contains(&lower.as_str()) {
                return Err(RunError::invalid_request(format!(
                    "Option headers may not set {name:?}: credentials go in apiKey / authToken, and {} are the loop's own. Nothing was sent.",
                    OWN_HEADERS.join(", ")
                )));
            }
            let header = HeaderName::from_bytes(lower.as_bytes()).map_err(|_| {
                bad(
                    "headers",
                    "valid HTTP header names",
                    &Value::from(name.as_str()),
                )
            })?;
            let Some(text) = value.as_str() else {
                return Err(bad_kind(&format!("headers[{name:?}]"), "a string", value));
            };
            let mut value = HeaderValue::from_str(text).map_err(|_| {
                RunError::invalid_request(format!(
                    "Option headers[{name:?}] must be a valid header value (no line breaks or control characters). Nothing was sent."
                ))
            })?;
            value.set_sensitive(true);
            out.push((header, value));
        }
    }
    Ok(out)
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
mod tests;
