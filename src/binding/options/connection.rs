//! Where requests go and what they carry besides the body: the credentials, the base URL and
//! the extra headers (`betas`, `headers`).

use std::collections::BTreeMap;

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;

use super::read::{bad_kind, env_str, Given};
use crate::engine::wire::redact::shown_url;
use crate::engine::{RunError, Secret};

/// Headers the `headers` option may not replace.
const OWN_HEADERS: &[&str] = &[
    "x-api-key",
    "authorization",
    "anthropic-version",
    "content-type",
];

/// `apiKey` and `authToken`. Explicit credentials win, and then the environment's are not read
/// at all: a caller who points baseURL at a gateway with its own token must not send
/// ANTHROPIC_API_KEY there.
pub fn credentials(
    api_key: Given,
    auth_token: Given,
    env: &BTreeMap<String, Value>,
) -> Result<(Option<Secret>, Option<Secret>), RunError> {
    let api_key = api_key.secret()?;
    let auth_token = auth_token.secret()?;
    if api_key.is_some() || auth_token.is_some() {
        return Ok((api_key, auth_token));
    }
    Ok((
        env_str(env, "ANTHROPIC_API_KEY").map(Secret::from),
        env_str(env, "ANTHROPIC_AUTH_TOKEN").map(Secret::from),
    ))
}

/// `baseURL`, else `ANTHROPIC_BASE_URL`, else `default`: an http(s) URL without a trailing
/// slash, whose path does not end with `/v1` (the loop adds `/v1/messages` to its path).
pub fn base_url(
    option: Given,
    env: &BTreeMap<String, Value>,
    default: &str,
) -> Result<String, RunError> {
    base_url_from(option, env, "ANTHROPIC_BASE_URL", default)
}

/// [`base_url`] with the variable `var` instead of `ANTHROPIC_BASE_URL` (a platform's own).
pub fn base_url_from(
    option: Given,
    env: &BTreeMap<String, Value>,
    var: &'static str,
    default: &str,
) -> Result<String, RunError> {
    let (url, source) = match option.string()? {
        Some(url) => (url, "Option baseURL"),
        None => (env_str(env, var).unwrap_or(default).to_owned(), var),
    };
    // The URL is quoted as messages show URLs (no user, password or query: they may be
    // credentials), or not at all when it cannot be read.
    let parsed = reqwest::Url::parse(&url).map_err(|e| {
        RunError::invalid_request(format!("{source} is not a URL ({e}). Nothing was sent."))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        let shown = shown_url(&url);
        return Err(RunError::invalid_request(format!(
            "{source} {shown:?} must be an http(s) URL. Nothing was sent."
        )));
    }
    if parsed.path().trim_end_matches('/').ends_with("/v1") {
        let shown = shown_url(&url);
        return Err(RunError::invalid_request(format!(
            "{source} {shown:?} must not end with /v1: /v1/messages is added to its path. Nothing was sent."
        )));
    }
    // A trailing slash is the path's; a query is kept as it is (a slash ending it is its own).
    Ok(match parsed.query() {
        Some(_) => url,
        None => url.trim_end_matches('/').to_owned(),
    })
}

/// `betas` and `headers`: extra request headers; the credential, version and content-type
/// headers are the loop's own. `features`: the betas the run's features need. The `betas`
/// option's and the features' go in one `anthropic-beta` header, each once, leaving out those
/// an `anthropic-beta` of the `headers` option already names (that one is sent as it is,
/// sensitive like every `headers` value).
pub fn headers(
    betas: Given,
    headers: Given,
    features: &[&str],
) -> Result<Vec<(HeaderName, HeaderValue)>, RunError> {
    let mut out = Vec::new();
    let mut names: Vec<String> = Vec::new();
    if let Some(v) = betas.value() {
        let given: Option<Vec<&str>> = v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect());
        match given {
            Some(given) if !given.is_empty() && given.iter().all(|n| !n.trim().is_empty()) => {
                // Checked as given, before anything is added to it.
                HeaderValue::from_str(&given.join(","))
                    .map_err(|_| betas.bad("an array of beta names", &v))?;
                names.extend(given.iter().map(|n| (*n).to_owned()));
            }
            _ => return Err(betas.bad("a non-empty array of beta names (strings)", &v)),
        }
    }
    let mut in_headers: Vec<String> = Vec::new();
    // The `headers` option's values are shown in no message (they may be credentials) and
    // marked sensitive: never quoted from what the API says back, never indexed by HTTP/2.
    if let Some(v) = headers.value() {
        let Value::Object(map) = &v else {
            return Err(bad_kind(
                headers.name,
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
            let header = HeaderName::from_bytes(lower.as_bytes())
                .map_err(|_| headers.bad("valid HTTP header names", &Value::from(name.as_str())))?;
            let Some(text) = value.as_str() else {
                return Err(bad_kind(&format!("headers[{name:?}]"), "a string", value));
            };
            let mut value = HeaderValue::from_str(text).map_err(|_| {
                RunError::invalid_request(format!(
                    "Option headers[{name:?}] must be a valid header value (no line breaks or control characters). Nothing was sent."
                ))
            })?;
            if lower == "anthropic-beta" {
                in_headers.extend(text.split(',').map(|b| b.trim().to_owned()));
            }
            value.set_sensitive(true);
            out.push((header, value));
        }
    }
    let mut betas: Vec<&str> = Vec::new();
    let given = names.iter().flat_map(|n| n.split(','));
    for beta in given.chain(features.iter().copied()) {
        let beta = beta.trim();
        if !beta.is_empty() && !betas.contains(&beta) && !in_headers.iter().any(|b| b == beta) {
            betas.push(beta);
        }
    }
    if !betas.is_empty() {
        let value = HeaderValue::from_str(&betas.join(",")).expect("checked above, and our own");
        out.insert(0, (HeaderName::from_static("anthropic-beta"), value));
    }
    Ok(out)
}
