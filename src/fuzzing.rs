//! Entry points for the fuzz targets (`fuzz/`) and their regression tests
//! (`tests/fuzz_regressions.rs`): each feeds arbitrary bytes to the real parsing or validation
//! code and must return, never panic or hang.

use reqwest::StatusCode;

use crate::engine::run::model_reply;
use crate::engine::tools::schema;
use crate::engine::wire::client::attempt;
use crate::engine::wire::redact::Redactor;

/// A secret the API answer may echo; it must never reach the error's message.
const FUZZ_SECRET: &str = "sk-ant-fuzz-0123456789";

/// An API answer: the body of a 200 parsed as a Messages API response and its content read;
/// the same bytes as an error body of a few statuses.
pub fn api_response(body: &[u8]) {
    let secrets = Redactor::new([FUZZ_SECRET]);
    if let Ok(message) = attempt::parse_message(body, &secrets) {
        let _ = model_reply::read_content(&message.content);
    }
    for (status, code) in [
        (400u16, "invalid_request"),
        (429, "rate_limited"),
        (529, "overloaded"),
    ] {
        let http = StatusCode::from_u16(status).expect("a valid status");
        let error = secrets.error(attempt::http_error(
            http,
            body,
            crate::engine::wire::retry::Hint::None,
            &secrets,
        ));
        // Whatever the body says, the status decides the code, and the message names it.
        assert_eq!(error.code.as_str(), code);
        // And a secret it echoes, plainly or JSON-escaped, is not passed on.
        assert!(!error.message.contains(FUZZ_SECRET), "{}", error.message);
        assert_eq!(error.status, Some(status));
        assert!(error
            .message
            .starts_with(&format!("The Anthropic API answered HTTP {status}")));
    }
}

/// A tool schema and an input: the first line is the schema, the rest the input. The schema is
/// compiled as registerTool would, and the input validated with its errors rendered.
pub fn schema_and_input(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (schema_text, input_text) = text.split_once('\n').unwrap_or((&text, "{}"));
    let Ok(schema) = serde_json::from_str::<serde_json::Value>(schema_text) else {
        return;
    };
    let Ok(input) = serde_json::from_str::<serde_json::Value>(input_text) else {
        return;
    };
    let Ok(validator) = schema::compile(&schema) else {
        return;
    };
    if let Err(lines) = schema::check(&validator, &input) {
        assert!(!lines.is_empty());
    }
}

/// What `runWithTools` receives from JS: `{ prompt, options, env }` parsed into a run.
pub fn run_request(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = crate::binding::options::parse_request(&text);
}
