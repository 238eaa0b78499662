//! Turns what `runWithTools(prompt, options)` was given (as JSON, with the environment the JS
//! layer read at call time) into the engine's [`RunConfig`] and history, or an `invalid_request`
//! error naming the option. Pure Rust, so it is tested without Node, and run off the JS thread.
//!
//! Every option is listed once, in `list.rs`. Whatever the caller gave that goes on the wire
//! (the prompt's messages, `system`, `toolChoice`, the pass-through fields) is checked through
//! borrowed views and kept as the JSON text it came as (`RawValue`): keys keep their order, byte
//! for byte.

mod api_mcp_servers;
mod api_version;
mod approvals;
mod betas;
mod connection;
mod credentials;
pub mod list;
mod output;
mod prompt;
mod provider;
pub mod read;
mod telemetry;
mod thread;
mod wire;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use self::list::{unknown_option, RunOptions};
use self::read::{env_str, value};
use crate::engine::run::config::{DEFAULT_BASE_URL, DEFAULT_MODEL};
use crate::engine::tools::tool::kind_of;
use crate::engine::wire::protocol::RawMessage;
use crate::engine::{OnMaxIterations, OnToolError, RunConfig, RunError};

/// A checked run request.
pub struct RunRequest {
    /// Everything the loop needs to know about the run.
    pub config: RunConfig,
    /// The history the run starts from (the prompt), each message as the JSON text it came as.
    pub messages: Vec<RawMessage>,
    /// The `tools` option: names of registered tools to offer; `None` offers all.
    pub tool_names: Option<Vec<String>>,
    /// The stored thread the run goes on in (`store` and `thread`).
    pub thread: Option<crate::engine::store::ThreadRef>,
    /// The run as its store knows it (a run in a thread): set by the binding.
    pub durable: Option<crate::engine::store::DurableRun>,
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
    /// A run taken over whose run had a thread of its own (no `thread`): that thread. Set only
    /// by the binding (`resumeRun`), never from a caller's options.
    #[serde(default, rename = "ownThread")]
    own_thread: Option<String>,
}

/// Parses `{ prompt, options, env }`, the JSON the JS layer sends.
pub fn parse_request(json: &str) -> Result<RunRequest, RunError> {
    let incoming: Incoming = serde_json::from_str(json).map_err(|e| {
        RunError::invalid_request(format!("The run request is not valid JSON: {e}."))
    })?;
    let options = match incoming.options {
        Some(raw) if raw.get() != "null" => serde_json::from_str(raw.get()).map_err(|_| {
            RunError::invalid_request(format!(
                "options must be an object, got {}.",
                kind_of(&value(raw))
            ))
        })?,
        _ => RunOptions::default(),
    };
    // In a stored thread an empty prompt resumes a pause (with `approvals`): the history is the
    // store's, so there is nothing else to send.
    let resumes_thread = (options.thread.raw().is_some() || incoming.own_thread.is_some())
        && incoming.prompt.is_some_and(|p| p.get().trim() == "[]");
    let prompt = if resumes_thread {
        prompt::Prompt::default()
    } else {
        prompt::parse_prompt(incoming.prompt)?
    };
    let (config, tool_names) = parse_options(&options, &incoming.env, &prompt)?;
    let thread = thread::thread(
        options.store,
        options.thread,
        incoming.own_thread.as_deref(),
    )?;
    Ok(RunRequest {
        config,
        messages: prompt.messages,
        tool_names,
        thread,
        durable: None,
    })
}

/// The options onto the run's configuration, checked in a fixed order (the first bad one is
/// the one reported).
fn parse_options(
    o: &RunOptions,
    env: &BTreeMap<String, Value>,
    prompt: &prompt::Prompt,
) -> Result<(RunConfig, Option<Vec<String>>), RunError> {
    if let Some(unknown) = &o.unknown {
        return Err(unknown_option(unknown));
    }
    let provider = provider::provider(o.provider)?;
    let mut aws = None;
    let mut token = None;
    let (api_key, auth_token, base_url) = if provider.is_anthropic() {
        let (api_key, auth_token) = connection::credentials(o.api_key, o.auth_token, env)?;
        let base_url = connection::base_url(o.base_url, env, DEFAULT_BASE_URL)?;
        (api_key, auth_token, base_url)
    } else {
        // A platform's settings come from its own variables: never ANTHROPIC_API_KEY,
        // ANTHROPIC_AUTH_TOKEN or ANTHROPIC_BASE_URL.
        provider.check_credentials(o.api_key, o.auth_token)?;
        let own_var = provider
            .base_url_var()
            .filter(|v| env_str(env, v).is_some());
        let base_url = match (o.base_url.string()?, own_var) {
            (Some(_), _) => connection::base_url(o.base_url, &BTreeMap::new(), "")?,
            (None, Some(var)) => connection::base_url_from(o.base_url, env, var, "")?,
            (None, None) => provider.default_base_url(env)?,
        };
        let (api_key, signing) = provider.credential(o.api_key.secret()?, env)?;
        aws = signing;
        let auth_token = o.auth_token.secret()?;
        token = provider.token_auth(auth_token.is_some(), env);
        (api_key, auth_token, base_url)
    };
    let mut cfg = RunConfig::new(api_key, base_url);
    cfg.api.auth_token = auth_token;
    cfg.api.aws = aws;
    cfg.api.token = token;
    cfg.model = o
        .model
        .string()?
        .or_else(|| env_str(env, "ANTHROPIC_MODEL").map(str::to_owned))
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    cfg.api.platform = provider.platform(env, &cfg.model)?;
    if let Some(version) = api_version::api_version(o.api_version)? {
        cfg.api.api_version = version;
    }
    api_version::removed_options(o, &cfg.api.api_version)?;
    if let Some(n) = o.max_tokens.int(1, u32::MAX as u64)? {
        cfg.max_tokens = n;
    }
    if let Some(n) = o.max_tool_iterations.int(0, 10_000)? {
        cfg.max_tool_iterations = n;
    }
    if let Some(n) = o.max_tool_failures.int(1, 10_000)? {
        cfg.max_tool_failures = n;
    }
    if let Some(n) = o.max_retries.int(0, 100)? {
        cfg.api.max_retries = n;
    }
    if let Some(d) = o.timeout_ms.millis()? {
        cfg.api.timeout = d;
    }
    cfg.tool_timeout = o.tool_timeout_ms.millis()?;
    if let Some(v) = o.temperature.value() {
        match v.as_f64() {
            Some(t) if (0.0..=1.0).contains(&t) => cfg.temperature = Some(t),
            _ => return Err(o.temperature.bad("a number from 0 to 1", &v)),
        }
    }
    let modes = [
        ("stop", OnToolError::Stop),
        ("continue", OnToolError::Continue),
    ];
    if let Some(mode) = o.on_tool_error.choice(&modes)? {
        cfg.on_tool_error = mode;
    }
    let limits = [
        ("error", OnMaxIterations::Error),
        ("answer", OnMaxIterations::Answer),
    ];
    if let Some(mode) = o.on_max_iterations.choice(&limits)? {
        cfg.on_max_iterations = mode;
    }
    if let Some(parallel) = o.parallel_tool_calls.bool()? {
        cfg.parallel_tool_calls = parallel;
    }
    if let Some(threads) = o.api_threads.bool()? {
        cfg.api_threads = threads;
    }
    cfg.max_total_tokens = o.max_total_tokens.int(1, u32::MAX as u64)?.map(u64::from);
    cfg.max_identical_calls = o.max_identical_calls.int(1, 10_000)?;
    cfg.system = wire::system(o.system)?;
    cfg.tool_choice = wire::tool_choice(o.tool_choice)?;
    cfg.fields.extend(wire::pass_through(o)?);
    cfg.server_tools = wire::server_tools(o.server_tools)?;
    cfg.container = o.container.string()?;
    cfg.approval_scope = o.approval_scope.string()?.unwrap_or_default();
    cfg.extra_body = wire::extra_body(o.extra_body)?;
    api_version::removed_fields(&cfg.extra_body, &cfg.api.api_version)?;
    cfg.mcp_servers = api_mcp_servers::mcp_servers(o.mcp_servers, &cfg.extra_body)?;
    let tokens = cfg
        .mcp_servers
        .iter()
        .filter_map(|s| s.authorization_token.clone());
    cfg.api.body_secrets.extend(tokens);
    output::output(o.output, &mut cfg)?;
    cfg.trace = telemetry::telemetry(o.telemetry)?;
    if cfg.max_total_tokens.is_some() && cfg.extra_body.iter().any(|(k, _)| k == "max_tokens") {
        return Err(RunError::invalid_request(
            "Option extraBody may not set max_tokens together with maxTotalTokens, which lowers each request's max_tokens to what the budget leaves; use maxTokens. Nothing was sent.",
        ));
    }
    let features = betas::of_features(&cfg, prompt.tool_changes);
    cfg.api.headers = connection::headers(o.betas, o.headers, &features)?;
    let secret = approvals::approval_secret(o.approval_secret, env)?;
    cfg.api.unsent_secrets.extend(secret.clone());
    cfg.signer = approvals::signer(secret, o.approval_ttl_ms)?;
    cfg.approvals = approvals::approvals(o.approvals)?;
    let tool_names = tool_names(o.tools)?;
    Ok((cfg, tool_names))
}

/// `tools`: the names of the registered tools to offer.
fn tool_names(option: read::Given) -> Result<Option<Vec<String>>, RunError> {
    let expected = "an array of registered tool names";
    match option.value() {
        None => Ok(None),
        Some(Value::Array(names)) => names
            .iter()
            .map(|n| {
                n.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| option.bad(expected, n))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(v) => Err(option.bad(expected, &v)),
    }
}

#[cfg(test)]
mod tests;
