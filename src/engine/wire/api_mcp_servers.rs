//! The API's own MCP connector (`mcpServers`): remote MCP servers that Anthropic connects to and
//! calls while it answers. Each is sent in `mcp_servers` and offered to the model by one
//! `mcp_toolset` tool; the calls come back as `mcp_tool_use` / `mcp_tool_result` blocks of the
//! reply, which are history like any server tool's blocks: the loop runs nothing for them.

use serde::ser::{Serialize, Serializer};

use crate::engine::wire::secret::Secret;

/// One server of `mcpServers`, already checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConnectorServer {
    /// Its name, unique among the run's servers: the toolset refers to the server by it.
    pub name: String,
    /// Where Anthropic connects to it: an `https://` URL.
    pub url: String,
    /// Sent as `authorization_token`. A credential like the API key: the run's redactor takes it
    /// out of anything the API says back.
    pub authorization_token: Option<Secret>,
    /// The server's tools the model may call, each once; `None`: every tool the server lists.
    pub tools: Option<Vec<String>>,
}

impl McpConnectorServer {
    /// Its `mcp_servers` entry: `{"type":"url","url","name","authorization_token"?}`. The one
    /// place the token is written out, into the request body.
    pub fn definition(&self) -> String {
        #[derive(serde::Serialize)]
        struct Definition<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            url: &'a str,
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            authorization_token: Option<&'a str>,
        }
        let definition = Definition {
            kind: "url",
            url: &self.url,
            name: &self.name,
            authorization_token: self.authorization_token.as_ref().map(Secret::expose),
        };
        serde_json::to_string(&definition).expect("strings always serialise")
    }

    /// Its `mcp_toolset` tool. With `tools`, the server's other tools are disabled by
    /// `default_config` and the named ones enabled by `configs`, in the order given; without, the
    /// API's default enables every tool.
    pub fn toolset(&self) -> String {
        #[derive(serde::Serialize)]
        struct Enabled {
            enabled: bool,
        }
        /// The named tools, each enabled, as one JSON object in their order.
        struct Configs<'a>(&'a [String]);
        impl Serialize for Configs<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map(self.0.iter().map(|name| (name, Enabled { enabled: true })))
            }
        }
        #[derive(serde::Serialize)]
        struct Toolset<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            mcp_server_name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            default_config: Option<Enabled>,
            #[serde(skip_serializing_if = "Option::is_none")]
            configs: Option<Configs<'a>>,
        }
        let toolset = Toolset {
            kind: "mcp_toolset",
            mcp_server_name: &self.name,
            default_config: self.tools.as_ref().map(|_| Enabled { enabled: false }),
            configs: self.tools.as_deref().map(Configs),
        };
        serde_json::to_string(&toolset).expect("strings always serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(token: Option<&str>, tools: Option<&[&str]>) -> McpConnectorServer {
        McpConnectorServer {
            name: "docs".into(),
            url: "https://mcp.example.com/mcp".into(),
            authorization_token: token.map(Secret::from),
            tools: tools.map(|t| t.iter().map(|s| (*s).to_owned()).collect()),
        }
    }

    #[test]
    fn a_server_is_its_definition_and_one_toolset() {
        let all = server(None, None);
        assert_eq!(
            all.definition(),
            r#"{"type":"url","url":"https://mcp.example.com/mcp","name":"docs"}"#
        );
        assert_eq!(
            all.toolset(),
            r#"{"type":"mcp_toolset","mcp_server_name":"docs"}"#
        );
        let some = server(Some("tok-1"), Some(&["search", "fetch"]));
        assert_eq!(
            some.definition(),
            r#"{"type":"url","url":"https://mcp.example.com/mcp","name":"docs","authorization_token":"tok-1"}"#
        );
        assert_eq!(
            some.toolset(),
            r#"{"type":"mcp_toolset","mcp_server_name":"docs","default_config":{"enabled":false},"configs":{"search":{"enabled":true},"fetch":{"enabled":true}}}"#
        );
    }

    #[test]
    fn the_token_never_prints() {
        let text = format!("{:?}", server(Some("tok-secret-1"), None));
        assert!(!text.contains("tok-secret-1"), "{text}");
    }
}
