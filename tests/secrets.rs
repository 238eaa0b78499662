//! Secrets never echo: an API, or a gateway in front of it, that writes the request's credentials
//! into its error text does not get them into the run's error or a log line, whether the answer
//! is an HTTP error, an error event in a stream, JSON with escapes, or a page that is not JSON.

mod support;

use std::io::Write;
use std::sync::{Mutex, Once};

use anthropic_tool_calling::engine::run::main_loop::run_observed;
use anthropic_tool_calling::engine::{ApiClient, ErrorCode, RunConfig, RunError, RunEvent, Secret};
use reqwest::header::{HeaderName, HeaderValue};
use support::*;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;

const TOKEN: &str = "gateway-token-7c1e5a90b3d2f486aa";
/// A `headers` option value that is a credential.
const HEADER_SECRET: &str = "hdr-secret-4b8d2f6a1c3e5079";
/// A `headers` option value too short to be one: it is left as it is.
const SHORT_HEADER: &str = "web";
/// Never sent, so the stand-in can only "echo" it by writing it into its script.
const APPROVAL_SECRET: &str = "approval-secret-0f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// Every secret of the runs below.
const SECRETS: [&str; 4] = [API_KEY, TOKEN, HEADER_SECRET, APPROVAL_SECRET];

/// What the echoing gateway writes back: every credential header of the request.
const ECHO: &str = "invalid x-api-key {echo:x-api-key}; authorization {echo:authorization}; \
                    x-gateway-secret {echo:x-gateway-secret}; x-source {echo:x-source}";

/// A run with the key (or, with `token`, the auth token only), the two `headers` values marked
/// sensitive as the binding marks them, and the approval secret, no retries.
fn echoed_config(server: &Server, token: bool, stream: bool) -> RunConfig {
    let mut cfg = config(server);
    if token {
        cfg.api.api_key = None;
        cfg.api.auth_token = Some(Secret::new(TOKEN));
        server.accept_credential(TOKEN);
    }
    for (name, value) in [
        ("x-gateway-secret", HEADER_SECRET),
        ("x-source", SHORT_HEADER),
    ] {
        let mut value = HeaderValue::from_static(value);
        value.set_sensitive(true);
        cfg.api.headers.push((HeaderName::from_static(name), value));
    }
    cfg.api.unsent_secrets = vec![Secret::new(APPROVAL_SECRET)];
    cfg.api.max_retries = 0;
    cfg.stream = stream;
    cfg
}

/// Runs once, streamed (with a sink, as `streamWithTools` runs) or not, and returns the error.
async fn fails(cfg: &RunConfig) -> RunError {
    let sink = |_: RunEvent| {};
    run_observed(
        &ApiClient::new(),
        cfg,
        &[],
        prompt("Hi"),
        &CancellationToken::new(),
        cfg.stream
            .then_some(&sink as &dyn anthropic_tool_calling::engine::EventSink),
    )
    .await
    .expect_err("the run fails")
}

/// No secret anywhere in the error: message, request id, `Debug`, JSON.
fn assert_clean(error: &RunError) {
    let debug = format!("{error:?}");
    let json = serde_json::to_string(error).unwrap();
    for secret in SECRETS {
        for (what, text) in [
            ("message", &error.message),
            ("Debug", &debug),
            ("JSON", &json),
        ] {
            assert!(
                !text.contains(secret),
                "{secret} leaked into the {what}: {text}"
            );
        }
    }
}

#[tokio::test]
async fn an_http_error_that_echoes_the_credentials_names_none_of_them() {
    for stream in [false, true] {
        for token in [false, true] {
            let message = format!("{ECHO}; approval {APPROVAL_SECRET}");
            let server = Server::start([Step::error(401, &message)]).await;
            let error = fails(&echoed_config(&server, token, stream)).await;
            assert_eq!(error.code, ErrorCode::AuthenticationError);
            assert_clean(&error);
            let sent = &server.requests()[0].headers;
            let (credential, other) = if token {
                (
                    "authorization Bearer [redacted]",
                    "invalid x-api-key (none)",
                )
            } else {
                ("invalid x-api-key [redacted]", "authorization (none)")
            };
            for part in [
                credential,
                other,
                "x-gateway-secret [redacted]",
                // Too short to be a credential: left alone.
                "x-source web",
                "approval [redacted]",
            ] {
                assert!(
                    error.message.contains(part),
                    "stream {stream}, token {token}: {part:?} not in {}",
                    error.message
                );
            }
            assert!(sent.contains_key(if token { "authorization" } else { "x-api-key" }));
        }
    }
}

#[tokio::test]
async fn the_token_of_a_headers_value_with_a_scheme_is_redacted_when_echoed_alone() {
    const GATEWAY_TOKEN: &str = "cf-aig-token-5d2e8a1b7c3f9064e1";
    for stream in [false, true] {
        let echo = "invalid token {echo-token:cf-aig-authorization}";
        let server = if stream {
            Server::start([Step::text("Hello there.").sse_error_after(
                2,
                "authentication_error",
                echo,
            )])
            .await
        } else {
            Server::start([Step::error(401, echo)]).await
        };
        let mut cfg = echoed_config(&server, false, stream);
        let mut value = HeaderValue::from_str(&format!("Bearer {GATEWAY_TOKEN}")).unwrap();
        value.set_sensitive(true);
        cfg.api
            .headers
            .push((HeaderName::from_static("cf-aig-authorization"), value));
        let error = fails(&cfg).await;
        assert_eq!(error.code, ErrorCode::AuthenticationError);
        assert!(
            error.message.contains("invalid token [redacted]")
                && !error.message.contains(GATEWAY_TOKEN),
            "stream {stream}: {}",
            error.message
        );
    }
}

#[tokio::test]
async fn an_error_event_after_http_200_that_echoes_them_is_redacted() {
    for escaped in [false, true] {
        let echo = if escaped {
            ECHO.replace("{echo:", "{echo-escaped:")
        } else {
            ECHO.to_owned()
        };
        let server = Server::start([Step::text("Hello there.").sse_error_after(
            3,
            "authentication_error",
            &format!("{echo}; approval {APPROVAL_SECRET}"),
        )])
        .await;
        let error = fails(&echoed_config(&server, false, true)).await;
        assert_eq!(error.code, ErrorCode::AuthenticationError);
        assert!(server.requests()[0].streamed);
        assert_clean(&error);
        assert!(
            error.message.contains("in the stream after HTTP 200")
                && error.message.contains("invalid x-api-key [redacted]")
                && error.message.contains("x-gateway-secret [redacted]"),
            "{}",
            error.message
        );
    }
}

#[tokio::test]
async fn an_echo_written_with_json_escapes_is_caught_after_decoding() {
    // The API's error shape, and a gateway's own JSON that we quote instead.
    let bodies = [
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key {echo-escaped:x-api-key}"}}"#,
        r#"{"detail":"invalid x-api-key {echo-escaped:x-api-key}","x":1}"#,
    ];
    for stream in [false, true] {
        for body in bodies {
            let server = Server::start([Step::Raw {
                status: 401,
                content_type: "application/json".into(),
                body: body.into(),
            }])
            .await;
            let error = fails(&echoed_config(&server, false, stream)).await;
            assert_eq!(error.code, ErrorCode::AuthenticationError);
            assert_clean(&error);
            assert!(error.message.contains("[redacted]"), "{}", error.message);
            // Nor as the escapes themselves, which decode to the key.
            assert!(
                !error.message.contains("\\u0073\\u006b"),
                "{}",
                error.message
            );
        }
    }
}

#[tokio::test]
async fn a_body_that_is_not_json_is_quoted_without_the_secrets_even_at_the_cut() {
    // The key starts inside the first 80 characters we quote and ends after them.
    let page = format!("<html>{}{{echo:x-api-key}}</html>", "x".repeat(60));
    let server = Server::start([Step::Raw {
        status: 502,
        content_type: "text/html".into(),
        body: page,
    }])
    .await;
    let error = fails(&echoed_config(&server, false, false)).await;
    assert_eq!(error.code, ErrorCode::UnknownError);
    assert_clean(&error);
    // Not even the key's first characters are shown.
    assert!(!error.message.contains("sk-ant"), "{}", error.message);
    assert!(error.message.contains("xxxx[redac"), "{}", error.message);

    // A 200 that is not a Messages API response, quoting a gateway's JSON.
    let server = Server::start([Step::Raw {
        status: 200,
        content_type: "application/json".into(),
        body: r#"{"note":"forwarded {echo-escaped:x-gateway-secret}"}"#.into(),
    }])
    .await;
    let error = fails(&echoed_config(&server, false, false)).await;
    assert_eq!(error.code, ErrorCode::UnknownError);
    assert!(
        error.message.contains("not a Messages API response"),
        "{}",
        error.message
    );
    assert_clean(&error);
}

#[tokio::test]
async fn a_redirect_that_carries_the_key_is_reported_without_it() {
    let server = Server::start([Step::redirect(
        "https://elsewhere.example/login?key={echo:x-api-key}",
    )])
    .await;
    let error = fails(&echoed_config(&server, false, false)).await;
    assert_eq!(error.code, ErrorCode::UnknownError);
    assert_clean(&error);
    assert!(
        error
            .message
            .contains("to https://elsewhere.example/login?key=[redacted]"),
        "{}",
        error.message
    );
}

/// The crate's log lines, as `ANTHROPIC_TOOL_CALLING_LOG=debug` prints them, from the moment
/// [`capture_logs`] was first called. One subscriber for the whole process: a per-thread one
/// misses events whose callsite another test thread has already found uninteresting.
static LOG: Mutex<Vec<u8>> = Mutex::new(Vec::new());

struct Lines;

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        LOG.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn capture_logs() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The crate's own events, as the binding's logger lets through.
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(|| Lines)
            .finish()
            .with(Targets::new().with_target("anthropic_tool_calling", tracing::Level::DEBUG));
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    });
}

#[tokio::test]
async fn log_lines_name_no_secret_even_in_an_echoed_request_id() {
    for stream in [false, true] {
        let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"busy for {echo:x-api-key}"},"request_id":"req_{echo:x-api-key}"}"#;
        let server = Server::start([
            Step::Raw {
                status: 529,
                content_type: "application/json".into(),
                body: body.into(),
            },
            Step::error(401, ECHO),
        ])
        .await;
        let mut cfg = echoed_config(&server, false, stream);
        cfg.api.max_retries = 1;
        capture_logs();
        let error = fails(&cfg).await;
        // Every line so far, this test's and any other's: none may hold a secret.
        let log = String::from_utf8(LOG.lock().unwrap().clone()).unwrap();
        assert!(log.contains("api attempt: failed"), "{log}");
        for secret in SECRETS {
            assert!(!log.contains(secret), "{secret} leaked into the log: {log}");
        }
        assert!(log.contains("req_[redacted]"), "{log}");
        assert_eq!(error.code, ErrorCode::AuthenticationError);
        assert_clean(&error);
    }
}
