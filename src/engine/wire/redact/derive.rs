//! What a credential holds besides itself, and a URL as it may be shown: one rule for the
//! `headers` option, an MCP server's headers and URL, and `baseURL`. A server that was sent a
//! credential may echo a part of it (the token without its scheme, the password of a pair), and
//! the part must be taken out as the whole is.

use base64::Engine;

/// Values of the `headers` option shorter than this are not redacted. Not every header is a
/// credential (`true`, `1`, `web`, a version), and a short value would mangle every message it
/// happens to occur in ("1" in every status code) while hiding nothing worth hiding: a value
/// that short is no secret. The key, the auth token and the approval secret have no such floor.
pub const MIN_HEADER_VALUE_CHARS: usize = 8;

/// A URL path segment this long is taken for a credential (no route name is): some hosted
/// services put the key in the path (`/s/<key>/mcp`).
const PATH_SECRET_CHARS: usize = 20;

/// The secrets of a header value: the value, the credential after its scheme (`Bearer <token>`),
/// and for `Basic` the decoded `user:password` pair and its password. Parts shorter than
/// [`MIN_HEADER_VALUE_CHARS`] are no secret (`1`, `v2`) and are left out.
pub fn of_header(value: &str) -> Vec<String> {
    let value = value.trim();
    let mut out = vec![value.to_owned()];
    if let Some((scheme, credential)) = value.split_once(char::is_whitespace) {
        let credential = credential.trim();
        out.push(credential.to_owned());
        if scheme.eq_ignore_ascii_case("basic") {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(credential)
                .ok()
                .and_then(|b| String::from_utf8(b).ok());
            if let Some(pair) = decoded {
                out.extend(pair.split_once(':').map(|(_, pw)| pw.to_owned()));
                out.push(pair);
            }
        }
    }
    long_enough(out)
}

/// The secrets of a URL: its password, its query values and its long path segments, each as
/// written and decoded. Nothing for a text that is no URL.
pub fn of_url(url: &str) -> Vec<String> {
    if plainly_no_secret(url) {
        return Vec::new();
    }
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(password) = parsed.password() {
        out.push(password.to_owned());
        out.push(decoded(password));
    }
    if let Some(query) = parsed.query() {
        for pair in query.split('&') {
            let value = pair.split_once('=').map_or("", |(_, v)| v);
            out.push(value.to_owned());
        }
    }
    out.extend(parsed.query_pairs().map(|(_, v)| v.into_owned()));
    for segment in parsed.path_segments().into_iter().flatten() {
        if segment.len() >= PATH_SECRET_CHARS {
            out.push(segment.to_owned());
            out.push(decoded(segment));
        }
    }
    long_enough(out)
}

/// A URL text that cannot hold a secret, told without parsing it (every run derives its
/// secrets from its `baseURL`, and a parse is the costliest part): no userinfo (`@`), no query,
/// nothing a parse would encode or undo (only letters, digits, `:/._-`), and no piece between
/// slashes as long as a secret segment, host and scheme included (a dot segment a parse removes
/// is only one piece fewer). Anything else is parsed.
fn plainly_no_secret(url: &str) -> bool {
    url.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'/' | b'.' | b'_' | b'-'))
        && url.split('/').all(|piece| piece.len() < PATH_SECRET_CHARS)
}

/// `url` as a message may show it: scheme, host, port and path, without the user and password,
/// the query or the fragment (which may carry a credential).
pub fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => {
            let host = u.host_str().unwrap_or_default();
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            // The root path as it was written: `https://h` has none, `https://h/` has one.
            let given = url.split(['?', '#']).next().unwrap_or(url);
            let path = if u.path() == "/" && !given.ends_with('/') {
                ""
            } else {
                u.path()
            };
            format!("{}://{host}{port}{path}", u.scheme())
        }
        Err(_) => "(a URL that could not be read)".to_owned(),
    }
}

fn decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

fn long_enough(mut secrets: Vec<String>) -> Vec<String> {
    secrets.retain(|s| s.chars().count() >= MIN_HEADER_VALUE_CHARS);
    secrets.dedup();
    secrets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_gives_its_token_and_a_basic_password() {
        let basic = base64::engine::general_purpose::STANDARD.encode("alice:pw-0123456789");
        assert_eq!(
            of_header(" Bearer tok-0123456789 "),
            ["Bearer tok-0123456789", "tok-0123456789"]
        );
        assert_eq!(
            of_header(&format!("Basic {basic}")),
            [
                format!("Basic {basic}"),
                basic.clone(),
                "pw-0123456789".into(),
                "alice:pw-0123456789".into()
            ]
        );
        assert_eq!(of_header("hdr-secret-4b8d"), ["hdr-secret-4b8d"]);
        assert!(of_header("Bearer x").iter().all(|s| s != "x"), "too short");
        assert!(of_header("web").is_empty());
    }

    #[test]
    fn a_url_gives_its_password_query_values_and_long_path_segments() {
        let secrets = of_url(
            "https://bob:url%2Dpass-123@h.example:8443/s/zk-0123456789abcdefghij/mcp?api_key=KEY%2D0123456789&v=2",
        );
        for s in [
            "url%2Dpass-123",
            "url-pass-123",
            "KEY%2D0123456789",
            "KEY-0123456789",
            "zk-0123456789abcdefghij",
        ] {
            assert!(secrets.iter().any(|x| x == s), "{s} in {secrets:?}");
        }
        assert!(!secrets.iter().any(|x| x == "2" || x == "mcp" || x == "bob"));
        assert!(of_url("not a url").is_empty());
    }

    #[test]
    fn a_url_told_without_a_parse_is_one_a_parse_finds_no_secret_in() {
        for url in [
            "http://127.0.0.1:4010",
            "https://api.anthropic.com",
            "https://gw.example/proxy/v1/messages",
            "https://a-b_c.example:8443/x/./y/../z",
        ] {
            assert!(plainly_no_secret(url), "{url}");
            assert_eq!(of_url(url), Vec::<String>::new(), "{url}");
        }
        // Each of these is parsed, and each has a secret a parse finds.
        for (url, secret) in [
            (
                "https://h.example/s/zk-0123456789abcdefghij",
                "zk-0123456789abcdefghij",
            ),
            ("https://u:pw-0123456789@h.example", "pw-0123456789"),
            ("https://h.example/p?key=KEY-0123456789", "KEY-0123456789"),
            (
                "https://h.example/abc def ghi jkl mnop",
                "abc%20def%20ghi%20jkl%20mnop",
            ),
        ] {
            assert!(!plainly_no_secret(url), "{url}");
            assert!(
                of_url(url).iter().any(|s| s == secret),
                "{url}: {:?}",
                of_url(url)
            );
        }
    }

    #[test]
    fn a_url_is_shown_without_its_userinfo_query_and_fragment() {
        assert_eq!(
            shown_url("http://user:pass@127.0.0.1:9/proxy?key=abc#x"),
            "http://127.0.0.1:9/proxy"
        );
        assert_eq!(
            shown_url("https://api.anthropic.com"),
            "https://api.anthropic.com"
        );
        assert_eq!(shown_url("http://h/?key=abc"), "http://h/");
        assert_eq!(shown_url("nope"), "(a URL that could not be read)");
    }
}
