//! `mcpServers` read from the options JSON: what is sent, the beta it adds, and every refusal,
//! none of which shows the token.
use crate::binding::options::{parse_request, RunRequest};
use crate::engine::{ErrorCode, RunError, Secret};

const TOKEN: &str = "mcp-token-5f2e9a1c7b3d";

fn parse(options: &str) -> Result<RunRequest, RunError> {
    parse_request(&format!(
        r#"{{"prompt":"hi","options":{options},"env":{{"ANTHROPIC_API_KEY":"k"}}}}"#
    ))
}

fn beta_header(r: &RunRequest) -> Option<String> {
    r.config
        .api
        .headers
        .iter()
        .find(|(name, _)| name == "anthropic-beta")
        .map(|(_, v)| v.to_str().unwrap().to_owned())
}

#[test]
fn servers_are_read_in_order_with_their_tokens_as_secrets() {
    let r = parse(&format!(
        r#"{{"mcpServers":[{{"name":"docs","url":"https://docs.example.com/mcp","authorizationToken":"{TOKEN}","tools":["search","fetch","search"]}},{{"name":"files","url":"https://files.example.com/mcp","authorizationToken":null,"tools":null}}]}}"#
    ))
    .unwrap();
    let servers = &r.config.mcp_servers;
    assert_eq!(servers.len(), 2);
    assert_eq!(
        (servers[0].name.as_str(), servers[0].url.as_str()),
        ("docs", "https://docs.example.com/mcp")
    );
    assert_eq!(servers[0].authorization_token, Some(Secret::new(TOKEN)));
    // A tool named twice is enabled once.
    assert_eq!(
        servers[0].tools.as_deref(),
        Some(&["search".to_owned(), "fetch".to_owned()][..])
    );
    assert_eq!(
        (&servers[1].authorization_token, &servers[1].tools),
        (&None, &None)
    );
    // The token is redacted like the key, and never printed with the config.
    assert_eq!(r.config.api.body_secrets, [Secret::new(TOKEN)]);
    assert!(!format!("{:?}", r.config).contains(TOKEN));
    assert_eq!(beta_header(&r).as_deref(), Some("mcp-client-2025-11-20"));
}

#[test]
fn the_beta_is_added_once_beside_the_betas_option_and_not_without_servers() {
    let r = parse(
        r#"{"betas":["mcp-client-2025-11-20","other-2026-01-01"],"mcpServers":[{"name":"a","url":"https://a.example.com/mcp"}]}"#,
    )
    .unwrap();
    assert_eq!(
        beta_header(&r).as_deref(),
        Some("mcp-client-2025-11-20,other-2026-01-01")
    );
    for options in [r#"{}"#, r#"{"mcpServers":[]}"#, r#"{"mcpServers":null}"#] {
        let r = parse(options).unwrap();
        assert!(r.config.mcp_servers.is_empty(), "{options}");
        assert_eq!(beta_header(&r), None, "{options}");
    }
}

#[test]
fn bad_servers_are_refused_naming_the_field_and_never_showing_the_token() {
    let entry = |extra: &str| {
        format!(
            r#"{{"mcpServers":[{{"name":"docs","url":"https://docs.example.com/mcp","authorizationToken":"{TOKEN}"{extra}}}]}}"#
        )
    };
    let cases = [
        // Given as one server rather than an array of them.
        (
            format!(r#"{{"mcpServers":{{"name":"docs","url":"https://x.example","authorizationToken":"{TOKEN}"}}}}"#),
            "Option mcpServers must be an array of servers { name, url, authorizationToken?, tools? }; got an object",
        ),
        (r#"{"mcpServers":"docs"}"#.to_owned(), "Option mcpServers must be an array"),
        (format!(r#"{{"mcpServers":["{TOKEN}"]}}"#), "Option mcpServers[0] must be an object { name, url, authorizationToken?, tools? }; got a string"),
        (r#"{"mcpServers":[{"url":"https://a.example.com"}]}"#.to_owned(), "Option mcpServers[0] has no name"),
        (r#"{"mcpServers":[{"name":5,"url":"https://a.example.com"}]}"#.to_owned(), "Option mcpServers[0].name must be a non-empty string; got 5"),
        (r#"{"mcpServers":[{"name":"","url":"https://a.example.com"}]}"#.to_owned(), "Option mcpServers[0].name must be a non-empty string"),
        (
            r#"{"mcpServers":[{"name":"a","url":"https://a.example.com"},{"name":"a","url":"https://b.example.com"}]}"#.to_owned(),
            "Option mcpServers[1].name \"a\" is also the name of mcpServers[0]",
        ),
        (r#"{"mcpServers":[{"name":"a"}]}"#.to_owned(), "Option mcpServers[0] has no url"),
        (r#"{"mcpServers":[{"name":"a","url":7}]}"#.to_owned(), "Option mcpServers[0].url must be an https:// URL; got a number"),
        (r#"{"mcpServers":[{"name":"a","url":"http://a.example.com/mcp"}]}"#.to_owned(), "Option mcpServers[0].url must be https://"),
        (r#"{"mcpServers":[{"name":"a","url":"ftp://a.example.com/mcp"}]}"#.to_owned(), "got a ftp: URL"),
        (r#"{"mcpServers":[{"name":"a","url":"not a url"}]}"#.to_owned(), "Option mcpServers[0].url is not a URL"),
        (entry(r#","tools":"search""#), "Option mcpServers[0].tools must be a non-empty array of the server's tool names"),
        (entry(r#","tools":[]"#), "Option mcpServers[0].tools is empty"),
        (entry(r#","tools":["search",""]"#), "Option mcpServers[0].tools[1] must be a tool name"),
        (entry(r#","tools":[3]"#), "Option mcpServers[0].tools[0] must be a tool name (a non-empty string); got 3"),
        (entry(r#","headers":{"x":"y"},"Tools":[]"#), "Option mcpServers[0] has an unknown key \"Tools\"; a server takes name, url, authorizationToken, tools"),
        (entry(r#","authorization_token":"x""#), "has an unknown key \"authorization_token\""),
        (r#"{"mcpServers":[{"name":"a","url":"https://a.example.com","authorizationToken":42}]}"#.to_owned(), "Option mcpServers[0].authorizationToken must be a non-empty string; got a number"),
        (r#"{"mcpServers":[{"name":"a","url":"https://a.example.com","authorizationToken":""}]}"#.to_owned(), "Option mcpServers[0].authorizationToken must be a non-empty string"),
        (
            format!(r#"{{"extraBody":{{"mcp_servers":[]}},"mcpServers":[{{"name":"a","url":"https://a.example.com","authorizationToken":"{TOKEN}"}}]}}"#),
            "Option extraBody sets \"mcp_servers\"",
        ),
    ];
    for (options, expected) in cases {
        let err = parse(&options)
            .err()
            .unwrap_or_else(|| panic!("accepted {options}"));
        assert_eq!(err.code, ErrorCode::InvalidRequest, "{options}");
        assert!(err.message.contains(expected), "{options}: {}", err.message);
        assert!(
            err.message.ends_with("Nothing was sent."),
            "{}",
            err.message
        );
        assert!(!err.message.contains(TOKEN), "{options}: {}", err.message);
        // The URL may hold a credential too: no message quotes it.
        assert!(
            !err.message.contains("a.example.com/mcp"),
            "{}",
            err.message
        );
    }
}
