//! The MCP connector (a beta): `mcp_servers`, the remote MCP servers Anthropic connects to for
//! the request, each offered to the model through exactly one `mcp_toolset` entry of `tools`; the
//! `mcp_tool_use` / `mcp_tool_result` blocks its calls leave in assistant messages, and their
//! pairing.

use std::collections::HashSet;

use serde_json::Value;

use super::context_management::need_beta;
use super::fields::{cache_control, extra_keys, unknown_tag};

pub const MCP_CLIENT_BETA: &str = "mcp-client-2025-11-20";

const SERVER_FIELDS: &[&str] = &["type", "url", "name", "authorization_token"];
const TOOLSET_FIELDS: &[&str] = &[
    "type",
    "mcp_server_name",
    "default_config",
    "configs",
    "cache_control",
];
const TOOL_CONFIG_FIELDS: &[&str] = &["enabled", "defer_loading"];
const MCP_TOOL_USE_FIELDS: &[&str] = &[
    "type",
    "id",
    "name",
    "server_name",
    "input",
    "cache_control",
];
const MCP_TOOL_RESULT_FIELDS: &[&str] = &[
    "type",
    "tool_use_id",
    "content",
    "is_error",
    "cache_control",
];

/// `mcp_servers`, by shape: the servers' names, in order (none without the field), and what is
/// wrong with them.
pub(super) fn check_mcp_servers(body: &Value, betas: &[String]) -> (Vec<String>, Vec<String>) {
    let Some(servers) = body.get("mcp_servers").filter(|v| !v.is_null()) else {
        return (Vec::new(), Vec::new());
    };
    if let Some(problem) = need_beta(betas, MCP_CLIENT_BETA, "mcp_servers", "the MCP connector") {
        return (Vec::new(), vec![problem]);
    }
    let Some(servers) = servers.as_array() else {
        return (
            Vec::new(),
            vec!["mcp_servers: Input should be a valid list".into()],
        );
    };
    let (mut names, mut problems) = (Vec::new(), Vec::new());
    for (k, server) in servers.iter().enumerate() {
        let at = format!("mcp_servers.{k}");
        let Some(fields) = server.as_object() else {
            problems.push(format!("{at}: Input should be a valid dictionary"));
            continue;
        };
        if server["type"] != "url" {
            problems.push(unknown_tag(&at, &server["type"], &["url"]));
            continue;
        }
        problems.extend(extra_keys(fields, SERVER_FIELDS, &at));
        for field in ["url", "name"] {
            match fields.get(field) {
                None => problems.push(format!("{at}.{field}: Field required")),
                Some(v) if !v.is_string() => {
                    problems.push(format!("{at}.{field}: Input should be a valid string"));
                }
                Some(_) => {}
            }
        }
        if server["url"]
            .as_str()
            .is_some_and(|url| !url.starts_with("https://"))
        {
            problems.push(format!(
                "{at}.url: the URL of an MCP server must start with https://"
            ));
        }
        if let Some(name) = server["name"].as_str() {
            if name.is_empty() {
                problems.push(format!(
                    "{at}.name: String should have at least 1 character"
                ));
            } else if names.iter().any(|n| n == name) {
                problems.push(format!(
                    "mcp_servers: MCP server names must be unique ({name})"
                ));
            }
            names.push(name.to_owned());
        }
        match fields.get("authorization_token") {
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(_) => problems.push(format!(
                "{at}.authorization_token: Input should be a valid string"
            )),
        }
    }
    (names, problems)
}

/// `default_config`, or one entry of `configs`: `{ enabled?, defer_loading? }`.
fn tool_config_problems(config: &Value, at: &str) -> Vec<String> {
    let Some(fields) = config.as_object() else {
        return vec![format!("{at}: Input should be a valid dictionary")];
    };
    let mut problems = extra_keys(fields, TOOL_CONFIG_FIELDS, at);
    for field in TOOL_CONFIG_FIELDS {
        if fields.get(*field).is_some_and(|v| !v.is_boolean()) {
            problems.push(format!("{at}.{field}: Input should be a valid boolean"));
        }
    }
    problems
}

/// One `mcp_toolset` entry of `tools` (at index `i`), by shape; which server it names is checked
/// by [`check_mcp_toolsets`].
pub(super) fn toolset_problems(tool: &Value, i: usize, betas: &[String]) -> Vec<String> {
    if let Some(problem) = need_beta(
        betas,
        MCP_CLIENT_BETA,
        &format!("tools.{i}"),
        "the `mcp_toolset` tool",
    ) {
        return vec![problem];
    }
    let at = format!("tools.{i}.mcp_toolset");
    let Some(fields) = tool.as_object() else {
        return Vec::new();
    };
    let mut problems = extra_keys(fields, TOOLSET_FIELDS, &at);
    match fields.get("mcp_server_name") {
        None => problems.push(format!("{at}.mcp_server_name: Field required")),
        Some(v) if !v.is_string() => problems.push(format!(
            "{at}.mcp_server_name: Input should be a valid string"
        )),
        Some(_) => {}
    }
    if let Some(config) = fields.get("default_config").filter(|v| !v.is_null()) {
        problems.extend(tool_config_problems(
            config,
            &format!("{at}.default_config"),
        ));
    }
    match fields.get("configs") {
        None | Some(Value::Null) => {}
        Some(Value::Object(configs)) => {
            for (name, config) in configs {
                problems.extend(tool_config_problems(
                    config,
                    &format!("{at}.configs.{name}"),
                ));
            }
        }
        Some(_) => problems.push(format!("{at}.configs: Input should be a valid dictionary")),
    }
    if let Some(Err(why)) = fields
        .get("cache_control")
        .map(|c| cache_control(c, &format!("{at}.cache_control")))
    {
        problems.push(why);
    }
    problems
}

/// The `mcp_toolset` entries of `tools` against the servers' `names`: every server is named by
/// exactly one toolset, and every toolset names one of them.
pub(super) fn check_mcp_toolsets(body: &Value, names: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut configured: HashSet<&str> = HashSet::new();
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    for (i, tool) in tools.iter().enumerate() {
        let Some(name) = tool["mcp_server_name"]
            .as_str()
            .filter(|_| tool["type"] == "mcp_toolset")
        else {
            continue;
        };
        let at = format!("tools.{i}.mcp_toolset.mcp_server_name");
        if !names.iter().any(|n| n == name) {
            problems.push(format!(
                "{at}: MCP server '{name}' is not defined in `mcp_servers`"
            ));
        }
        if !configured.insert(name) {
            problems.push(format!(
                "{at}: MCP server '{name}' is already configured by another `mcp_toolset`; each server takes exactly one"
            ));
        }
    }
    for (k, name) in names.iter().enumerate() {
        if !configured.contains(name.as_str()) {
            problems.push(format!(
                "mcp_servers.{k}: MCP server '{name}' is not used by any `mcp_toolset` in `tools`; each server needs exactly one"
            ));
        }
    }
    problems
}

/// An `mcp_tool_use` or `mcp_tool_result` block (at `at`) of an assistant message: what is wrong
/// with it. `text_problems` checks a text block of a result's content.
pub(super) fn block_problems(
    block: &Value,
    at: &str,
    betas: &[String],
    text_problems: impl Fn(&Value, &str) -> Vec<String>,
) -> Vec<String> {
    let kind = block["type"].as_str().unwrap_or_default();
    if let Some(problem) = need_beta(betas, MCP_CLIENT_BETA, at, &format!("an `{kind}` block")) {
        return vec![problem];
    }
    let Some(fields) = block.as_object() else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    if kind == "mcp_tool_use" {
        problems.extend(extra_keys(fields, MCP_TOOL_USE_FIELDS, at));
        for field in ["id", "name", "server_name", "input"] {
            if !fields.contains_key(field) {
                problems.push(format!("{at}.{field}: Field required"));
            }
        }
        for field in ["id", "name", "server_name"] {
            if fields.get(field).is_some_and(|v| !v.is_string()) {
                problems.push(format!("{at}.{field}: Input should be a valid string"));
            }
        }
        if fields.get("input").is_some_and(|v| !v.is_object()) {
            problems.push(format!("{at}.input: Input should be a valid dictionary"));
        }
        return problems;
    }
    problems.extend(extra_keys(fields, MCP_TOOL_RESULT_FIELDS, at));
    match fields.get("tool_use_id") {
        None => problems.push(format!("{at}.tool_use_id: Field required")),
        Some(v) if !v.is_string() => {
            problems.push(format!("{at}.tool_use_id: Input should be a valid string"));
        }
        Some(_) => {}
    }
    if fields.get("is_error").is_some_and(|v| !v.is_boolean()) {
        problems.push(format!("{at}.is_error: Input should be a valid boolean"));
    }
    match fields.get("content") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(items)) => {
            for (k, item) in items.iter().enumerate() {
                let at = format!("{at}.content.{k}");
                if item["type"] == "text" {
                    problems.extend(text_problems(item, &at));
                } else {
                    problems.push(unknown_tag(&at, &item["type"], &["text"]));
                }
            }
        }
        Some(_) => problems.push(format!(
            "{at}.content: Input should be a valid string or list"
        )),
    }
    problems
}

/// Anthropic runs an MCP call within the turn: its `mcp_tool_result` follows its `mcp_tool_use`
/// in the same assistant message, except in the final message (a paused turn sent back).
pub fn check_mcp_pairing(messages: &[Value]) -> Result<(), String> {
    let last = messages.len() - 1;
    for (n, message) in messages.iter().enumerate() {
        if message["role"] != "assistant" {
            continue;
        }
        let mut open: Vec<&str> = Vec::new();
        let blocks = message["content"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for (m, block) in blocks.iter().enumerate() {
            if block["type"] == "mcp_tool_use" {
                open.push(block["id"].as_str().unwrap_or_default());
            } else if block["type"] == "mcp_tool_result" {
                let id = block["tool_use_id"].as_str().unwrap_or_default();
                match open.iter().position(|o| *o == id) {
                    Some(at) => {
                        open.remove(at);
                    }
                    None => return Err(format!(
                        "messages.{n}.content.{m}: `mcp_tool_result` block has tool_use_id {id}, which matches no `mcp_tool_use` block before it in this message."
                    )),
                }
            }
        }
        if !open.is_empty() && n != last {
            return Err(format!(
                "messages.{n}: `mcp_tool_use` ids were found without `mcp_tool_result` blocks: {}. \
                 An `mcp_tool_use` block must be followed by its result in the same message.",
                open.join(", ")
            ));
        }
    }
    Ok(())
}
