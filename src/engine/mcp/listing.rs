//! A server's `tools/list` answer as tool definitions: the ones the `tools` option keeps, under
//! their prefixed names, each checked as any registered tool is.

use serde_json::{json, Map, Value};

use super::config::ServerConfig;
use super::list::Listing;
use crate::engine::tools::tool::{valid_name, ToolSpec};

/// One of a server's tools as the engine offers it.
#[derive(Clone)]
pub struct Listed {
    /// Its name on the server (what `tools/call` names).
    pub remote: String,
    /// Its definition under the name the model sees.
    pub spec: ToolSpec,
}

/// The tools of `listing` that `config` keeps, and one `"name" (why)` line per tool that cannot
/// be offered.
pub fn definitions(config: &ServerConfig, listing: &Listing) -> (Vec<Listed>, Vec<String>) {
    let mut kept = Vec::new();
    let mut problems = Vec::new();
    let taken = |remote: &str| {
        config
            .tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == remote))
    };
    for (remote, why) in &listing.oversized {
        if taken(remote) {
            problems.push(format!(
                "{} ({why})",
                quoted(&format!("{}{remote}", config.prefix))
            ));
        }
    }
    let listed = &listing.tools;
    for tool in listed {
        let Some(remote) = tool.get("name").and_then(Value::as_str) else {
            problems.push("a tool without a name (the server's list is malformed)".to_owned());
            continue;
        };
        if !taken(remote) {
            continue;
        }
        let name = format!("{}{remote}", config.prefix);
        if !valid_name(&name) {
            problems.push(format!(
                "{} (not a name the Messages API accepts: ^[a-zA-Z0-9_-]{{1,128}}$)",
                quoted(&name)
            ));
            continue;
        }
        if kept.iter().any(|k: &Listed| k.spec.name == name) {
            problems.push(format!("{} (the server lists it twice)", quoted(&name)));
            continue;
        }
        let mut def = Map::new();
        def.insert("name".into(), name.clone().into());
        if let Some(d) = tool.get("description").filter(|d| d.is_string()) {
            def.insert("description".into(), d.clone());
        }
        def.insert(
            "input_schema".into(),
            tool.get("inputSchema")
                .cloned()
                .unwrap_or_else(|| json!({ "type": "object" })),
        );
        match ToolSpec::new(&Value::Object(def).to_string()) {
            Ok(spec) => kept.push(Listed {
                remote: remote.to_owned(),
                spec,
            }),
            Err(why) => problems.push(format!("{} ({why})", quoted(&name))),
        }
    }
    if let Some(only) = &config.tools {
        for wanted in only {
            let offered = listed
                .iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some(wanted))
                || listing.oversized.iter().any(|(name, _)| name == wanted);
            if !offered {
                problems.push(format!(
                    "{} (named in tools, but the server does not offer it)",
                    quoted(wanted)
                ));
            }
        }
    }
    (kept, problems)
}

/// A name from the server, quoted and cut for a message.
pub fn quoted(name: &str) -> String {
    let cut: String = name.chars().take(128).collect();
    format!("{cut:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mcp::config::Transport;

    fn config(prefix: &str, tools: Option<&[&str]>) -> ServerConfig {
        ServerConfig {
            name: "docs".into(),
            transport: Transport::Stdio {
                command: "x".into(),
                args: vec![],
                env: vec![],
                cwd: None,
            },
            prefix: prefix.into(),
            tools: tools.map(|t| t.iter().map(|s| (*s).to_owned()).collect()),
        }
    }

    fn tool(name: &str) -> Value {
        json!({ "name": name, "description": "d", "inputSchema": { "type": "object" } })
    }

    #[test]
    fn prefixes_filters_and_names_every_problem() {
        let listed = [
            tool("search"),
            tool("bad name!"),
            tool("fetch"),
            json!({ "name": "weird", "inputSchema": { "type": "array" } }),
        ];
        let listing = |tools: &[Value]| Listing {
            tools: tools.to_vec(),
            oversized: vec![("huge".into(), "too large".into())],
        };
        let (kept, problems) = definitions(&config("docs_", None), &listing(&listed));
        let names: Vec<&str> = kept.iter().map(|k| k.spec.name.as_str()).collect();
        assert_eq!(names, ["docs_search", "docs_fetch"]);
        assert_eq!(kept[0].remote, "search");
        assert_eq!(
            kept[0].spec.definition.get(),
            r#"{"description":"d","input_schema":{"type":"object"},"name":"docs_search"}"#
        );
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert_eq!(problems[0], "\"docs_huge\" (too large)");
        assert!(problems[1].starts_with("\"docs_bad name!\" (not a name"));
        assert!(problems[2].contains("\"docs_weird\""));

        let (kept, problems) =
            definitions(&config("", Some(&["fetch", "gone"])), &listing(&listed));
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].spec.name, "fetch");
        assert_eq!(
            problems,
            ["\"gone\" (named in tools, but the server does not offer it)"]
        );
    }
}
