use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_types::event_stream::{Header, HeaderValue as EsValue, Message};
use base64::Engine as _;
use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::StatusCode;

use super::*;
use crate::engine::run::config::RunConfig;
use crate::engine::wire::redact::Redactor;
use crate::engine::wire::request::{body, Turn};
use crate::engine::wire::retry::Hint;
use crate::engine::{ErrorCode, Secret};

fn bedrock() -> Platform {
    Platform::Bedrock {
        model: "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-x:0"
            .into(),
    }
}

#[test]
fn each_platform_has_its_path_after_the_base_url() {
    let base = "http://127.0.0.1:9/gw?key=k";
    assert_eq!(
        Platform::Anthropic.url(base, true),
        "http://127.0.0.1:9/gw/v1/messages?key=k"
    );
    assert_eq!(
        Platform::Foundry.url("http://h/", false),
        "http://h/anthropic/v1/messages"
    );
    assert_eq!(
        bedrock().url("http://h", false),
        "http://h/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile%2Fus.anthropic.claude-x:0/invoke"
    );
    assert!(bedrock()
        .url("http://h", true)
        .ends_with(":0/invoke-with-response-stream"));
    let vertex = Platform::Vertex {
        project: "p".into(),
        region: "global".into(),
        model: "claude-x@2026".into(),
    };
    assert_eq!(
        vertex.url("http://h", true),
        "http://h/v1/projects/p/locations/global/publishers/anthropic/models/claude-x@2026:streamRawPredict"
    );
    let gc = Platform::GoogleCloud {
        project: "p".into(),
        location: "global".into(),
        workspace: "w".into(),
    };
    assert_eq!(
        gc.url("http://h", false),
        "http://h/v1/projects/p/locations/global/workspaces/w/invoke/v1/messages"
    );
}

fn config(platform: Platform, version: &str) -> RunConfig {
    let mut cfg = RunConfig::new(Some(Secret::from("k-1")), "http://h");
    cfg.api.platform = platform;
    cfg.api.api_version = version.into();
    cfg.api.headers = vec![(
        "anthropic-beta".parse().unwrap(),
        HeaderValue::from_static("a-1,b-2"),
    )];
    cfg
}

fn sent(cfg: &RunConfig, stream: bool) -> String {
    let turn = Turn {
        tool_choice: None,
        container: None,
        stream,
        max_tokens: 10,
        thread: None,
    };
    String::from_utf8(body(cfg, &[], &[], &turn).to_vec()).unwrap()
}

#[test]
fn bedrock_and_vertex_bodies_carry_the_version_and_leave_the_model_out() {
    let cfg = config(bedrock(), "2026-10-21");
    assert_eq!(
        sent(&cfg, true),
        r#"{"anthropic_version":"2026-10-21","anthropic_beta":["a-1","b-2"],"max_tokens":10,"messages":[]}"#
    );
    let cfg = config(bedrock(), "2023-06-01");
    assert!(sent(&cfg, false).starts_with(r#"{"anthropic_version":"bedrock-2023-05-31","#));
    let vertex = Platform::Vertex {
        project: "p".into(),
        region: "r".into(),
        model: "m".into(),
    };
    let cfg = config(vertex, "2023-06-01");
    assert_eq!(
        sent(&cfg, true),
        r#"{"anthropic_version":"vertex-2023-10-16","max_tokens":10,"stream":true,"messages":[]}"#
    );
    // The Anthropic API's body is as it always was.
    let cfg = config(Platform::Anthropic, "2026-10-21");
    assert!(sent(&cfg, true).starts_with(r#"{"model":"#));
}

#[test]
fn headers_carry_each_platforms_credential() {
    let cfg = config(Platform::Foundry, "2026-10-21").api;
    let h = Platform::Foundry.headers(&cfg, false).unwrap();
    assert_eq!(h["x-api-key"], "k-1");
    assert_eq!(h["anthropic-version"], "2026-10-21");
    let aws = Platform::Aws {
        workspace_id: "wrkspc_1".into(),
    };
    let h = aws.headers(&cfg, true).unwrap();
    assert_eq!(h["authorization"], "Bearer k-1");
    assert_eq!(h["anthropic-workspace-id"], "wrkspc_1");
    assert!(h["anthropic-beta"]
        .to_str()
        .unwrap()
        .contains(crate::engine::wire::threads::THREADS_BETA));
    let h = bedrock().headers(&cfg, false).unwrap();
    assert_eq!(h["authorization"], "Bearer k-1");
    assert!(h.get("anthropic-version").is_none());
    assert!(
        h.get("anthropic-beta").is_none(),
        "Bedrock's betas go in the body"
    );
    let mut none = cfg.clone();
    none.api_key = None;
    let e = bedrock().headers(&none, false).unwrap_err();
    assert_eq!(e.code, ErrorCode::AuthenticationError);
    assert!(
        e.message.contains("AWS_BEARER_TOKEN_BEDROCK"),
        "{}",
        e.message
    );
    assert!(!bedrock().has_threads() && Platform::Foundry.has_threads());
}

fn aws_answer(status: u16, kind: &str) -> RunError {
    let mut headers = HeaderMap::new();
    headers.insert(
        "x-amzn-errortype",
        HeaderValue::from_str(&format!("{kind}:http://internal.amazon.com/coral/x/")).unwrap(),
    );
    let body = br#"{"Message":"said k-1 here"}"#;
    let secrets = Redactor::new(["k-1"]);
    let (error, _) = errors::bedrock_answer(
        &bedrock(),
        StatusCode::from_u16(status).unwrap(),
        &headers,
        body,
        Hint::None,
        &secrets,
    )
    .unwrap();
    error
}

#[test]
fn bedrock_errors_map_by_their_aws_type() {
    let cases = [
        (400, "ValidationException", ErrorCode::InvalidRequest),
        (
            403,
            "UnrecognizedClientException",
            ErrorCode::AuthenticationError,
        ),
        (400, "ServiceQuotaExceededException", ErrorCode::RateLimited),
        (429, "ModelNotReadyException", ErrorCode::Overloaded),
        (408, "ModelTimeoutException", ErrorCode::NetworkError),
        (424, "ModelErrorException", ErrorCode::UnknownError),
    ];
    for (status, kind, code) in cases {
        let e = aws_answer(status, kind);
        assert_eq!(e.code, code, "{kind}");
        assert_eq!(e.status, Some(status));
        assert!(
            e.message
                .starts_with(&format!("Amazon Bedrock answered HTTP {status} {kind}")),
            "{}",
            e.message
        );
        assert!(!e.message.contains("k-1"), "{}", e.message);
    }
}

fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut message = Message::new(Bytes::copy_from_slice(payload));
    for (name, value) in headers {
        message = message.add_header(Header::new(
            name.to_string(),
            EsValue::String(value.to_string().into()),
        ));
    }
    let mut out = Vec::new();
    write_message_to(&message, &mut out).unwrap();
    out
}

fn chunk(event: &str) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(event);
    let payload = format!(r#"{{"bytes":"{b64}","p":"abc"}}"#);
    frame(
        &[(":message-type", "event"), (":event-type", "chunk")],
        payload.as_bytes(),
    )
}

async fn decode(
    bytes: Vec<u8>,
    split: usize,
) -> Vec<Result<(String, String), bedrock::Failure<()>>> {
    let pieces: Vec<Result<Bytes, ()>> = bytes
        .chunks(split)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let secrets = Redactor::new(["k-1"]);
    bedrock::frames(futures::stream::iter(pieces), &secrets)
        .collect()
        .await
}

#[tokio::test]
async fn event_stream_frames_are_read_across_any_split_and_checked() {
    let mut bytes = chunk(r#"{"type":"message_start","message":{}}"#);
    bytes.extend(chunk(r#"{"type":"message_stop"}"#));
    for split in [1, 3, 7, 1000] {
        let got = decode(bytes.clone(), split).await;
        let names: Vec<String> = got.into_iter().map(|f| f.unwrap().0).collect();
        assert_eq!(names, ["message_start", "message_stop"]);
    }
    // A flipped payload byte fails the message checksum.
    let mut bad = chunk(r#"{"type":"message_stop"}"#);
    let at = bad.len() - 8;
    bad[at] ^= 1;
    let got = decode(bad, 5).await;
    assert!(
        matches!(&got[..], [Err(bedrock::Failure::Malformed(why))] if why.contains("event-stream"))
    );
    // An exception frame is the error of its API twin, the secrets taken out.
    let exception = frame(
        &[
            (":message-type", "exception"),
            (":exception-type", "throttlingException"),
        ],
        br#"{"message":"slow down k-1"}"#,
    );
    let got = decode(exception, 4).await;
    match &got[..] {
        [Err(bedrock::Failure::Exception { twin, message })] => {
            assert_eq!(*twin, Some("rate_limit_error"));
            assert_eq!(message, "throttlingException: slow down [redacted]");
        }
        other => panic!("{other:?}"),
    }
}
