//! What a registered MCP server is: how to reach it, which of its tools to take and under which
//! names, and the environment a stdio server starts with.

use std::time::Duration;

use crate::engine::wire::redact::{of_header, of_url, shown_url};
use crate::engine::wire::secret::Secret;

/// How long connecting, initialising and listing the tools may take together before
/// `registerMcpServer` gives up (a server that accepts the connection and never answers would
/// otherwise hold the Promise forever). A reconnect for a call has the same limit.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Pages of `tools/list` followed at most: a server whose cursors never end is refused rather
/// than listed forever.
pub const MAX_LIST_PAGES: usize = 100;

/// The most a server's tool list may take, in bytes of JSON: each page as it arrives (a larger
/// one is not read on), and the tools of all its pages together. A list is copied, checked and
/// compiled into validators, each many times its size, and a server may send it again at any
/// time (`list_changed`), so its size is the server's to keep small, not ours to take.
pub const MAX_LISTING_BYTES: usize = 2 * 1024 * 1024;

/// The most one tool's definition (its name, description, schemas and the rest) may take.
pub const MAX_TOOL_BYTES: usize = 256 * 1024;

/// The most one tool's input schema may take.
pub const MAX_SCHEMA_BYTES: usize = 128 * 1024;

/// The variables a stdio server inherits from this process, as the MCP TypeScript SDK's default:
/// enough to find programs and a home, and nothing else (no `ANTHROPIC_API_KEY`, no approval
/// secret, no database URL) unless the `env` option names it.
#[cfg(not(windows))]
pub const INHERITED_ENV: &[&str] = &["HOME", "PATH", "SHELL", "TERM", "USER", "LANG"];
/// The variables a stdio server inherits from this process on Windows (the TypeScript SDK's list).
#[cfg(windows)]
pub const INHERITED_ENV: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// How the engine reaches an MCP server.
#[derive(Clone, Debug)]
pub enum Transport {
    /// Streamable HTTP at `url`; redirects are not followed.
    Http {
        /// The endpoint (`http://` or `https://`).
        url: String,
        /// Sent with every request; their values are secrets.
        headers: Vec<(String, Secret)>,
    },
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Added to the minimal inherited environment ([`INHERITED_ENV`]).
        env: Vec<(String, String)>,
        /// Its working directory; this process's when `None`.
        cwd: Option<String>,
    },
}

/// A server as `registerMcpServer` describes it.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The server's name: its tools' owner in messages, unique among registered servers.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Put before each of its tools' names (`""`: the names as the server gives them).
    pub prefix: String,
    /// Only these of its tools (by the server's names); all when `None`.
    pub tools: Option<Vec<String>>,
}

impl ServerConfig {
    /// The secrets to take out of anything this server, its transport or its results say: those
    /// of each header value and of the URL, by the rule the run options follow too
    /// ([`of_header`], [`of_url`]).
    pub fn secrets(&self) -> Vec<String> {
        let Transport::Http { url, headers } = &self.transport else {
            return Vec::new();
        };
        headers
            .iter()
            .flat_map(|(_, value)| of_header(value.expose()))
            .chain(of_url(url))
            .collect()
    }

    /// Where the server is, for messages: its command, or its URL without what may carry a
    /// credential (the user and password, the query).
    pub fn location(&self) -> String {
        match &self.transport {
            Transport::Http { url, .. } => shown_url(url),
            Transport::Stdio { command, .. } => command.clone(),
        }
    }
}

/// The environment a stdio server starts with: the inherited variables that are set (from
/// `lookup`, this process's environment in use), then `env`, which wins.
pub fn child_env(
    lookup: impl Fn(&str) -> Option<String>,
    env: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = INHERITED_ENV
        .iter()
        .filter_map(|key| {
            let value = lookup(key)?;
            // A shell function exported into the environment (`() { …`) is code, not a value;
            // the TypeScript SDK skips those too.
            (!value.starts_with("()")).then(|| ((*key).to_owned(), value))
        })
        .collect();
    for (key, value) in env {
        out.retain(|(k, _)| k != key);
        out.push((key.clone(), value.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secrets_of_a_server_are_its_credentials_wherever_they_may_be_echoed() {
        use base64::Engine;
        let basic = base64::engine::general_purpose::STANDARD.encode("alice:pw-0123456789");
        let config = ServerConfig {
            name: "docs".into(),
            transport: Transport::Http {
                url: "https://bob:url-pass-123@mcp.example.com:8443/s/zk-0123456789abcdefghij/mcp?api_key=KEY-0123456789&v=2".into(),
                headers: vec![
                    ("authorization".into(), Secret::new("Bearer tok-0123456789")),
                    ("x-basic".into(), Secret::new(format!("Basic {basic}"))),
                    ("x-version".into(), Secret::new("2")),
                ],
            },
            prefix: String::new(),
            tools: None,
        };
        let secrets = config.secrets();
        for s in [
            "Bearer tok-0123456789",
            "tok-0123456789",
            "pw-0123456789",
            "alice:pw-0123456789",
            "url-pass-123",
            "KEY-0123456789",
            "zk-0123456789abcdefghij",
        ] {
            assert!(secrets.iter().any(|x| x == s), "{s} in {secrets:?}");
        }
        assert!(
            !secrets.iter().any(|x| x == "2"),
            "a short value is no secret"
        );
        assert!(!secrets.iter().any(|x| x == "mcp" || x == "s"));
        assert_eq!(
            config.location(),
            "https://mcp.example.com:8443/s/zk-0123456789abcdefghij/mcp",
            "the path is kept where it is quoted, and redacted there"
        );
    }

    #[test]
    fn a_child_inherits_only_the_minimal_variables_plus_env() {
        let parent = |key: &str| match key {
            "PATH" => Some("/usr/bin".to_owned()),
            "HOME" => Some("/home/a".to_owned()),
            "SHELL" => Some("() { evil; }".to_owned()),
            "ANTHROPIC_API_KEY" => Some("sk-ant-secret".to_owned()),
            _ => None,
        };
        let env = child_env(
            parent,
            &[
                ("ROOT".to_owned(), "/data".to_owned()),
                ("HOME".to_owned(), "/srv".to_owned()),
            ],
        );
        let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["PATH", "ROOT", "HOME"]);
        assert_eq!(env[2].1, "/srv");
        assert!(!env.iter().any(|(_, v)| v.contains("sk-ant")));
    }
}
