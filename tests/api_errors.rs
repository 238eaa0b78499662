//! The API client: retries and backoff as the SDK does them, every HTTP outcome mapped to its
//! error code, network failures, timeouts and aborts.

mod support;

use std::time::{Duration, Instant};

use anthropic_tool_calling::engine::{run, ApiClient, ErrorCode, RunConfig};
use serde_json::json;
use support::*;
use tokio_util::sync::CancellationToken;

fn retries(server: &Server, max_retries: u32) -> RunConfig {
    let mut cfg = config(server);
    cfg.api.max_retries = max_retries;
    cfg
}

// ---- retries ----

#[tokio::test(flavor = "multi_thread")]
async fn overloaded_is_retried_with_the_retry_count_header() {
    let server = Server::start([
        Step::error(529, "Overloaded").header("retry-after-ms", "1"),
        Step::text("Fine now."),
    ])
    .await;
    let out = run_once(&config(&server), &[], prompt("Hi")).await.unwrap();
    assert_eq!(out.text, "Fine now.");
    assert_eq!(server.retry_counts(), [Some(0), Some(1)]);
    let requests = server.requests();
    assert_eq!(
        requests[0].raw_body, requests[1].raw_body,
        "a retry re-sends the same request"
    );
    assert_eq!(
        (out.usage.input_tokens, out.usage.output_tokens),
        (10, 5),
        "a failed attempt has no usage"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_ms_is_waited_instead_of_the_backoff() {
    let server = Server::start([
        Step::error(
            429,
            "Number of request tokens has exceeded your per-minute rate limit",
        )
        .header("retry-after-ms", "40"),
        Step::text("Done."),
    ])
    .await;
    run_once(&config(&server), &[], prompt("Hi")).await.unwrap();
    let requests = server.requests();
    let gap = requests[1].at - requests[0].at;
    // The SDK backoff for a first retry is 375–500 ms; the hint says 40 ms.
    assert!(
        gap >= Duration::from_millis(40) && gap < Duration::from_millis(350),
        "waited {gap:?}"
    );
    assert_eq!(server.retry_counts(), [Some(0), Some(1)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn x_should_retry_false_is_not_retried() {
    let server =
        Server::start([Step::error(529, "Overloaded").header("x-should-retry", "false")]).await;
    let err = run_once(&config(&server), &[], prompt("Hi"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Overloaded);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn x_should_retry_true_retries_even_a_400() {
    let server = Server::start([
        Step::error(400, "try again")
            .header("x-should-retry", "true")
            .header("retry-after-ms", "1"),
        Step::text("OK."),
    ])
    .await;
    let out = run_once(&config(&server), &[], prompt("Hi")).await.unwrap();
    assert_eq!(out.text, "OK.");
    assert_eq!(server.retry_counts(), [Some(0), Some(1)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hint_over_60_seconds_ends_the_run_at_once_as_rate_limited() {
    let server =
        Server::start([Step::error(429, "Rate limited").header("retry-after", "120")]).await;
    let started = Instant::now();
    let err = run_once(&config(&server), &[], prompt("Hi"))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(err.code, ErrorCode::RateLimited);
    assert_eq!(err.retry_after, Some(120.0));
    assert_eq!(err.status, Some(429));
    assert_eq!(
        err.request_id.as_deref(),
        Some(server.requests()[0].request_id.as_str())
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn exhausted_retries_end_with_the_last_error() {
    let server = Server::start([
        Step::error(529, "Overloaded").header("retry-after-ms", "1"),
        Step::error(503, "Service unavailable").header("retry-after-ms", "1"),
        Step::error(500, "Internal server error").header("retry-after-ms", "1"),
    ])
    .await;
    let err = run_once(&config(&server), &[], prompt("Hi"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::UnknownError);
    assert_eq!(err.status, Some(500));
    assert_eq!(
        err.request_id.as_deref(),
        Some(server.requests()[2].request_id.as_str())
    );
    assert!(
        err.message.contains("Internal server error"),
        "{}",
        err.message
    );
    assert_eq!(server.retry_counts(), [Some(0), Some(1), Some(2)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn max_retries_zero_sends_once() {
    let server =
        Server::start([Step::error(529, "Overloaded").header("retry-after-ms", "1")]).await;
    let err = run_once(&retries(&server, 0), &[], prompt("Hi"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Overloaded);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_never_run_again_on_a_retry() {
    let server = Server::start([
        Step::tool_uses(&[("toolu_1", "get_order_status", json!({ "orderId": "A1" }))]),
        Step::error(529, "Overloaded").header("retry-after-ms", "1"),
        Step::error(503, "Unavailable").header("retry-after-ms", "1"),
        Step::text("Shipped."),
    ])
    .await;
    let (order, calls) = order_tool();
    let out = run_once(&config(&server), &[order], prompt("A1?"))
        .await
        .unwrap();
    assert_eq!(out.text, "Shipped.");
    assert_eq!(count(&calls), 1);
    assert_eq!(out.tool_calls.len(), 1);
    assert_eq!(server.retry_counts(), [Some(0), Some(0), Some(1), Some(2)]);
    let requests = server.requests();
    assert!(
        requests[2].raw_body == requests[1].raw_body
            && requests[3].raw_body == requests[1].raw_body
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_connection_is_retried() {
    let server = Server::start([Step::Reset, Step::text("Recovered.")]).await;
    let out = run_once(&retries(&server, 1), &[], prompt("Hi"))
        .await
        .unwrap();
    assert_eq!(out.text, "Recovered.");
    assert_eq!(server.retry_counts(), [Some(0), Some(1)]);
}

// ---- error mapping ----

#[tokio::test(flavor = "multi_thread")]
async fn http_errors_map_to_their_codes_with_the_api_message() {
    let cases = [
        (400, ErrorCode::InvalidRequest),
        (401, ErrorCode::AuthenticationError),
        (402, ErrorCode::InvalidRequest),
        (403, ErrorCode::AuthenticationError),
        (404, ErrorCode::InvalidRequest),
        (408, ErrorCode::InvalidRequest),
        (409, ErrorCode::InvalidRequest),
        (413, ErrorCode::InvalidRequest),
        (422, ErrorCode::InvalidRequest),
        (429, ErrorCode::RateLimited),
        (500, ErrorCode::UnknownError),
        (502, ErrorCode::UnknownError),
        (503, ErrorCode::Overloaded),
        (504, ErrorCode::UnknownError),
        (529, ErrorCode::Overloaded),
    ];
    for (status, code) in cases {
        let api_message = format!("the API's own words for {status}");
        // Half of them end with a period, as many real API messages do.
        let sent = if status % 2 == 0 {
            format!("{api_message}.")
        } else {
            api_message.clone()
        };
        let server = Server::start([Step::error(status, &sent)]).await;
        let err = run_once(&retries(&server, 0), &[], prompt("Hi"))
            .await
            .unwrap_err();
        assert_eq!(err.code, code, "HTTP {status}: {}", err.message);
        assert_eq!(err.status, Some(status));
        assert_eq!(
            err.request_id.as_deref(),
            Some(server.requests()[0].request_id.as_str())
        );
        assert!(
            err.message.contains(&format!("{api_message}. ")),
            "HTTP {status}: {}",
            err.message
        );
        assert!(!err.message.contains(".."), "{}", err.message);
        assert!(
            err.message.contains(&status.to_string()),
            "HTTP {status}: {}",
            err.message
        );
        assert_eq!(err.retry_after, None);
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limited_reports_retry_after_in_seconds() {
    for (header, value, seconds) in [("retry-after", "7", 7.0), ("retry-after-ms", "2500", 2.5)] {
        let server = Server::start([Step::error(429, "Rate limited").header(header, value)]).await;
        let err = run_once(&retries(&server, 0), &[], prompt("Hi"))
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::RateLimited);
        assert_eq!(err.retry_after, Some(seconds), "{header}: {value}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_200_that_is_not_a_message_is_an_unknown_error_and_not_retried() {
    let bodies = [
        (
            "text/html",
            "<html><body>Welcome to the captive portal</body></html>".to_owned(),
        ),
        (
            "application/json",
            json!({ "type": "message", "role": "assistant", "content": "hi" }).to_string(),
        ),
        (
            "application/json",
            json!({ "type": "completion", "role": "assistant", "content": [] }).to_string(),
        ),
    ];
    for (content_type, body) in bodies {
        let server = Server::start([Step::Raw {
            status: 200,
            content_type: content_type.into(),
            body: body.clone(),
        }])
        .await;
        let err = run_once(&config(&server), &[], prompt("Hi"))
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::UnknownError, "{body}");
        assert_eq!(err.status, Some(200));
        assert_eq!(
            err.request_id.as_deref(),
            Some(server.requests()[0].request_id.as_str())
        );
        assert!(
            err.message.contains("not a Messages API response"),
            "{}",
            err.message
        );
        assert_eq!(server.requests().len(), 1, "{body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_without_a_json_body_keeps_the_request_id_header() {
    let server = Server::start([Step::Raw {
        status: 502,
        content_type: "text/html".into(),
        body: "<html>Bad gateway</html>".into(),
    }])
    .await;
    let err = run_once(&retries(&server, 0), &[], prompt("Hi"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::UnknownError);
    assert_eq!(err.status, Some(502));
    assert_eq!(
        err.request_id.as_deref(),
        Some(server.requests()[0].request_id.as_str())
    );
    assert!(err.message.contains("Bad gateway"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_connection_is_a_network_error() {
    let server = Server::start([Step::Reset]).await;
    let err = run_once(&retries(&server, 0), &[], prompt("Hi"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NetworkError, "{}", err.message);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connection_is_a_network_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let mut cfg = RunConfig::new(Some(API_KEY.into()), base_url.clone());
    cfg.api.max_retries = 0;
    let err = run_once(&cfg, &[], prompt("Hi")).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NetworkError);
    assert!(
        err.message.contains("Could not connect") && err.message.contains(&base_url),
        "{}",
        err.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_timeout_is_a_network_error() {
    let server = Server::start([Step::Hang]).await;
    let mut cfg = retries(&server, 0);
    cfg.api.timeout = Duration::from_millis(100);
    let started = Instant::now();
    let err = run_once(&cfg, &[], prompt("Hi")).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(err.code, ErrorCode::NetworkError);
    assert!(
        err.message.contains("timed out after 100 ms"),
        "{}",
        err.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn no_api_key_is_an_authentication_error_and_nothing_is_sent() {
    let server = Server::start([]).await;
    let mut cfg = config(&server);
    cfg.api.api_key = None;
    let err = run_once(&cfg, &[], prompt("Hi")).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::AuthenticationError);
    assert!(err.message.contains("ANTHROPIC_API_KEY"), "{}", err.message);
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_that_cannot_be_a_header_is_refused_without_quoting_it() {
    let server = Server::start([]).await;
    let mut cfg = config(&server);
    let bad_key = "sk-ant-secret-part\nsecond-line";
    cfg.api.api_key = Some(bad_key.into());
    let err = run_once(&cfg, &[], prompt("Hi")).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::AuthenticationError);
    assert!(
        !err.message.contains("sk-ant-secret-part")
            && !format!("{err:?}").contains("sk-ant-secret-part"),
        "{}",
        err.message
    );
    assert!(server.requests().is_empty());
}

// ---- abort ----

/// Runs with a token that is cancelled once the server has `requests` requests (+ 50 ms);
/// returns the result and how long the run took to end after the cancel.
async fn run_and_abort(
    server: &Server,
    cfg: &RunConfig,
    requests: usize,
) -> (Result<(), ErrorCode>, Duration) {
    let client = ApiClient::new();
    let cancel = CancellationToken::new();
    let canceller = async {
        server.wait_for_requests(requests).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
        Instant::now()
    };
    let (result, cancelled_at) =
        tokio::join!(run(&client, cfg, &[], prompt("Hi"), &cancel), canceller);
    if let Err(e) = &result {
        assert_no_key(e);
    }
    (
        result.map(|_| ()).map_err(|e| e.code),
        cancelled_at.elapsed(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_during_a_hanging_request_ends_at_once() {
    let server = Server::start([Step::Hang]).await;
    let (result, after_cancel) = run_and_abort(&server, &config(&server), 1).await;
    assert_eq!(result, Err(ErrorCode::Aborted));
    assert!(
        after_cancel < Duration::from_millis(500),
        "ended {after_cancel:?} after the abort"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_during_a_retry_wait_ends_at_once() {
    let server = Server::start([Step::error(529, "Overloaded").header("retry-after", "30")]).await;
    let (result, after_cancel) = run_and_abort(&server, &config(&server), 1).await;
    assert_eq!(result, Err(ErrorCode::Aborted));
    assert!(
        after_cancel < Duration::from_millis(500),
        "ended {after_cancel:?} after the abort"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_aborted_signal_sends_nothing() {
    let server = Server::start([]).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = run(
        &ApiClient::new(),
        &config(&server),
        &[],
        prompt("Hi"),
        &cancel,
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::Aborted);
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_over_32_mib_is_refused_unread() {
    let server = Server::start([Step::Huge(33 << 20)]).await;
    let err = run_once(&config(&server), &[], prompt("Hi"))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::UnknownError);
    assert!(err.message.contains("over 32 MiB"), "{}", err.message);
    assert_eq!(server.requests().len(), 1);
}
