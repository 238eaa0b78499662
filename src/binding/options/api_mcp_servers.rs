//! `mcpServers`: remote MCP servers that Anthropic's API connects to for the run (the MCP
//! connector), `[{ name, url, authorizationToken?, tools? }]`, read into the engine's
//! [`McpConnectorServer`]s.
//!
//! An `authorizationToken` is a credential: it is held as a [`Secret`], no message here shows it
//! (nor the entry that holds it, nor the URL, which may carry a credential of its own), and it
//! joins the secrets taken out of what the API says back.

use serde_json::{Map, Value};

use super::read::{bad, bad_kind, Given};
use crate::engine::wire::api_mcp_servers::McpConnectorServer;
use crate::engine::{RunError, Secret};

/// The keys a server entry may have.
const KEYS: &[&str] = &["name", "url", "authorizationToken", "tools"];

/// What an entry must be, as messages say it.
const ENTRY: &str = "an object { name, url, authorizationToken?, tools? }";

/// `mcpServers`, checked entry by entry. `extra_body`: the run's `extraBody`, which may not send
/// `mcp_servers` of its own beside them.
pub fn mcp_servers(
    option: Given,
    extra_body: &[(String, Box<serde_json::value::RawValue>)],
) -> Result<Vec<McpConnectorServer>, RunError> {
    let Some(v) = option.value() else {
        return Ok(Vec::new());
    };
    let Value::Array(entries) = &v else {
        let expected = "an array of servers { name, url, authorizationToken?, tools? }";
        return Err(bad_kind(option.name, expected, &v));
    };
    let mut servers: Vec<McpConnectorServer> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("{}[{i}]", option.name);
        let Value::Object(fields) = entry else {
            return Err(bad_kind(&at, ENTRY, entry));
        };
        let server = server(&at, fields)?;
        if let Some(first) = servers.iter().position(|s| s.name == server.name) {
            return Err(RunError::invalid_request(format!(
                "Option {at}.name {:?} is also the name of {}[{first}]; each server needs a name of its own. Nothing was sent.",
                server.name, option.name
            )));
        }
        servers.push(server);
    }
    if !servers.is_empty() && extra_body.iter().any(|(k, _)| k == "mcp_servers") {
        return Err(RunError::invalid_request(
            "Option extraBody sets \"mcp_servers\", which would replace the servers mcpServers sends; give them all through mcpServers. Nothing was sent.",
        ));
    }
    Ok(servers)
}

/// One entry (at `at`, like `mcpServers[0]`).
fn server(at: &str, fields: &Map<String, Value>) -> Result<McpConnectorServer, RunError> {
    // Unknown keys are refused, as unknown options are: a misspelt `authorizationToken` would
    // otherwise send no token at all. The smallest is named, whatever order they came in.
    if let Some(key) = fields.keys().filter(|k| !KEYS.contains(&k.as_str())).min() {
        return Err(RunError::invalid_request(format!(
            "Option {at} has an unknown key {key:?}; a server takes {}. Nothing was sent.",
            KEYS.join(", ")
        )));
    }
    let given = |key: &str| fields.get(key).filter(|v| !v.is_null());
    let name = match given("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        Some(other) => return Err(bad(&format!("{at}.name"), "a non-empty string", other)),
        None => {
            return Err(missing(
                at,
                "name",
                "a non-empty string, unique among the servers",
            ))
        }
    };
    let url = match given("url") {
        Some(Value::String(url)) => https_url(at, url)?,
        Some(other) => return Err(bad_kind(&format!("{at}.url"), "an https:// URL", other)),
        None => return Err(missing(at, "url", "the server's https:// URL")),
    };
    let authorization_token = match given("authorizationToken") {
        None => None,
        Some(Value::String(token)) if !token.is_empty() => Some(Secret::new(token.as_str())),
        Some(other) => {
            return Err(bad_kind(
                &format!("{at}.authorizationToken"),
                "a non-empty string",
                other,
            ))
        }
    };
    let tools = match given("tools") {
        None => None,
        Some(list) => Some(tool_names(&format!("{at}.tools"), list)?),
    };
    Ok(McpConnectorServer {
        name,
        url,
        authorization_token,
        tools,
    })
}

/// The refusal of an entry without `key`, which must be `what`.
fn missing(at: &str, key: &str, what: &str) -> RunError {
    RunError::invalid_request(format!(
        "Option {at} has no {key}: each server needs one ({what}). Nothing was sent."
    ))
}

/// `url`: it must parse as a URL whose scheme is `https`; neither message quotes it.
fn https_url(at: &str, url: &str) -> Result<String, RunError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        RunError::invalid_request(format!(
            "Option {at}.url is not a URL ({e}); it must be https://, like \"https://mcp.example.com/mcp\". Nothing was sent."
        ))
    })?;
    if parsed.scheme() != "https" {
        return Err(RunError::invalid_request(format!(
            "Option {at}.url must be https:// (Anthropic connects to MCP servers over TLS only); got a {}: URL. Nothing was sent.",
            parsed.scheme()
        )));
    }
    Ok(url.to_owned())
}

/// `tools`: the server's tools to enable, each a non-empty string; at least one (leaving `tools`
/// out enables them all). A name given twice is enabled once.
fn tool_names(at: &str, list: &Value) -> Result<Vec<String>, RunError> {
    let expected = "a non-empty array of the server's tool names (non-empty strings)";
    let Value::Array(items) = list else {
        return Err(bad(at, expected, list));
    };
    if items.is_empty() {
        return Err(RunError::invalid_request(format!(
            "Option {at} is empty, which would offer none of the server's tools; name at least one, or leave tools out to offer them all. Nothing was sent."
        )));
    }
    let mut names: Vec<String> = Vec::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        match item {
            Value::String(name) if !name.is_empty() => {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
            _ => {
                return Err(bad(
                    &format!("{at}[{k}]"),
                    "a tool name (a non-empty string)",
                    item,
                ))
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
