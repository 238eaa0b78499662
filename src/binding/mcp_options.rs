//! The options of `registerMcpServer` (as JSON, `needsApproval` taken out by lib/mcp.js) read
//! into the engine's [`ServerConfig`]. Pure Rust, tested without Node.

use serde_json::{Map, Value};

use crate::engine::mcp::{ServerConfig, Transport};
use crate::engine::tools::tool::kind_of;
use crate::engine::Secret;

/// The keys an options object may have (besides `needsApproval`, read in JS).
const KEYS: &[&str] = &[
    "name", "url", "headers", "command", "args", "env", "cwd", "prefix", "tools",
];

/// Reads the options; the error is the sentence after `registerMcpServer: `.
pub fn read(json: &str) -> Result<ServerConfig, String> {
    let value: Value =
        serde_json::from_str(json).map_err(|e| format!("options are not valid JSON: {e}"))?;
    let Value::Object(o) = value else {
        return Err(format!(
            "expected {{ name, url }} or {{ name, command }}, got {}",
            kind_of(&value)
        ));
    };
    let name = match o.get("name") {
        Some(Value::String(n)) if valid_server_name(n) => n.clone(),
        Some(Value::String(n)) => {
            return Err(format!(
                "name {n:?} must be 1 to 64 letters, digits, _ or -"
            ))
        }
        None => return Err("name is missing (the server's name, e.g. \"docs\")".into()),
        Some(other) => return Err(format!("name must be a string, got {}", kind_of(other))),
    };
    let at = |field: &str| format!("{field} of the MCP server {name:?}");
    if let Some(key) = o
        .keys()
        .find(|k| !KEYS.contains(&k.as_str()) && *k != "needsApproval")
    {
        return Err(format!(
            "{} is not an option (the options are {} and needsApproval)",
            at(key),
            KEYS.join(", ")
        ));
    }
    let transport = match (o.get("url"), o.get("command")) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "the MCP server {name:?} has both url and command: give url for Streamable HTTP or command for stdio"
            ))
        }
        (None, None) => {
            return Err(format!(
                "the MCP server {name:?} needs url (Streamable HTTP) or command (stdio)"
            ))
        }
        (Some(url), None) => {
            for key in ["args", "env", "cwd"] {
                if o.contains_key(key) {
                    return Err(format!("{} is for a stdio server (command); this one has url", at(key)));
                }
            }
            let headers = strings(o.get("headers"), &at("headers"))?;
            for (key, value) in &headers {
                if reqwest::header::HeaderName::from_bytes(key.as_bytes()).is_err() {
                    return Err(format!("{}: {key:?} is not a valid HTTP header name", at("headers")));
                }
                if reqwest::header::HeaderValue::from_str(value).is_err() {
                    return Err(format!(
                        "{}: the value of {key:?} is not a valid header value (no line breaks or control characters)",
                        at("headers")
                    ));
                }
            }
            Transport::Http {
                url: http_url(url, &at("url"))?,
                headers: headers.into_iter().map(|(k, v)| (k, Secret::new(v))).collect(),
            }
        }
        (None, Some(command)) => {
            if o.contains_key("headers") {
                return Err(format!("{} is for an HTTP server (url); this one has command", at("headers")));
            }
            let command = match command {
                Value::String(c) if !c.is_empty() => c.clone(),
                other => return Err(format!("{} must be a non-empty string, got {}", at("command"), kind_of(other))),
            };
            Transport::Stdio {
                command,
                args: list(o.get("args"), &at("args"), true)?.unwrap_or_default(),
                env: strings(o.get("env"), &at("env"))?,
                cwd: match o.get("cwd") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(c)) => Some(c.clone()),
                    Some(other) => return Err(format!("{} must be a string, got {}", at("cwd"), kind_of(other))),
                },
            }
        }
    };
    let prefix = match o.get("prefix") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(p))
            if p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
        {
            p.clone()
        }
        Some(Value::String(p)) => {
            return Err(format!(
                "{} {p:?} may hold only letters, digits, _ and - (it starts every tool name)",
                at("prefix")
            ))
        }
        Some(other) => {
            return Err(format!(
                "{} must be a string, got {}",
                at("prefix"),
                kind_of(other)
            ))
        }
    };
    let tools = list(o.get("tools"), &at("tools"), false)?;
    Ok(ServerConfig {
        name,
        transport,
        prefix,
        tools,
    })
}

fn valid_server_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// An `http://` or `https://` URL.
fn http_url(url: &Value, at: &str) -> Result<String, String> {
    let Value::String(url) = url else {
        return Err(format!("{at} must be a string, got {}", kind_of(url)));
    };
    match reqwest::Url::parse(url) {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => Ok(url.clone()),
        Ok(u) => Err(format!(
            "{at} must be an http:// or https:// URL, got a {}: URL",
            u.scheme()
        )),
        Err(e) => Err(format!("{at} is not a URL ({e})")),
    }
}

/// An object of string values, as pairs (none when absent).
fn strings(value: Option<&Value>, at: &str) -> Result<Vec<(String, String)>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => pairs(map, at),
        Some(other) => Err(format!(
            "{at} must be an object of strings, got {}",
            kind_of(other)
        )),
    }
}

fn pairs(map: &Map<String, Value>, at: &str) -> Result<Vec<(String, String)>, String> {
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            // Never quote the value: headers carry tokens.
            other => Err(format!(
                "{at}: the value of {k:?} must be a string, got {}",
                kind_of(other)
            )),
        })
        .collect()
}

/// An array of strings (non-empty ones unless `empty_ok`).
fn list(value: Option<&Value>, at: &str, empty_ok: bool) -> Result<Option<Vec<String>>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) if empty_ok || !s.is_empty() => Ok(s.clone()),
                other => Err(format!(
                    "{at} must be an array of {}strings, got {} in it",
                    if empty_ok { "" } else { "non-empty " },
                    if other.is_string() {
                        "an empty string"
                    } else {
                        kind_of(other)
                    }
                )),
            })
            .collect::<Result<_, _>>()
            .map(Some),
        Some(other) => Err(format!(
            "{at} must be an array of strings, got {}",
            kind_of(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_kinds() {
        let c = read(r#"{"name":"docs","url":"https://mcp.example.com/mcp","headers":{"authorization":"Bearer sk-1"},"prefix":"docs_","tools":["search"]}"#).unwrap();
        assert_eq!(c.prefix, "docs_");
        assert_eq!(c.tools, Some(vec!["search".to_owned()]));
        match c.transport {
            Transport::Http { url, headers } => {
                assert_eq!(url, "https://mcp.example.com/mcp");
                assert_eq!(headers[0].1.expose(), "Bearer sk-1");
            }
            other => panic!("{other:?}"),
        }
        let c = read(r#"{"name":"files","command":"npx","args":["-y","srv"],"env":{"ROOT":"/data"},"cwd":"/tmp","needsApproval":true}"#).unwrap();
        match c.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                assert_eq!(
                    (command.as_str(), args.len(), cwd.as_deref()),
                    ("npx", 2, Some("/tmp"))
                );
                assert_eq!(env, [("ROOT".to_owned(), "/data".to_owned())]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn refuses_bad_options_without_quoting_secrets() {
        let cases = [
            (r#"[]"#, "expected { name, url }"),
            (r#"{"url":"http://a"}"#, "name is missing"),
            (r#"{"name":"a b","url":"http://a"}"#, "must be 1 to 64"),
            (r#"{"name":"d"}"#, "needs url (Streamable HTTP) or command (stdio)"),
            (r#"{"name":"d","url":"http://a","command":"x"}"#, "has both url and command"),
            (r#"{"name":"d","url":"ftp://a"}"#, "must be an http:// or https:// URL, got a ftp: URL"),
            (r#"{"name":"d","url":"not a url"}"#, "url of the MCP server \"d\" is not a URL"),
            (r#"{"name":"d","url":"http://a","headers":{"x":1}}"#, "headers of the MCP server \"d\": the value of \"x\" must be a string, got a number"),
            (r#"{"name":"d","url":"http://a","args":[]}"#, "args of the MCP server \"d\" is for a stdio server"),
            (r#"{"name":"d","url":"http://a","headers":{"a b":"x"}}"#, "\"a b\" is not a valid HTTP header name"),
            (r#"{"name":"d","url":"http://a","headers":{"x":"1\n2"}}"#, "the value of \"x\" is not a valid header value"),
            (r#"{"name":"d","command":""}"#, "command of the MCP server \"d\" must be a non-empty string"),
            (r#"{"name":"d","command":"x","args":[1]}"#, "args of the MCP server \"d\" must be an array of strings, got a number in it"),
            (r#"{"name":"d","command":"x","headers":{}}"#, "is for an HTTP server"),
            (r#"{"name":"d","command":"x","prefix":"a.b"}"#, "may hold only letters"),
            (r#"{"name":"d","command":"x","tools":[""]}"#, "non-empty strings, got an empty string"),
            (r#"{"name":"d","command":"x","tool":["a"]}"#, "tool of the MCP server \"d\" is not an option"),
        ];
        for (json, expected) in cases {
            let err = read(json).unwrap_err();
            assert!(err.contains(expected), "{json}: {err}");
        }
    }
}
