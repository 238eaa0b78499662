//! The rules the Rust test server shares with the JS stand-in (`stand-in/rules.json`), sent to
//! the Rust server: it must answer every case as the table says. `__test__/stand-in-rules.test.mjs`
//! holds the JS stand-in to the same table, so a rule added to one server and not the other
//! shows up in one of the two tests.

mod support;

use serde_json::Value;
use support::rules::{redacted_thinking_block, thinking_block};
use support::server::Server;
use support::Step;

const TABLE: &str = include_str!("../stand-in/rules.json");

/// `base` with `changes` applied: a null value removes the field.
fn merged(base: &Value, changes: Option<&Value>) -> Value {
    let mut out = base.clone();
    if let (Some(fields), Some(changes)) = (out.as_object_mut(), changes.and_then(Value::as_object))
    {
        for (key, value) in changes {
            if value.is_null() {
                fields.remove(key);
            } else {
                fields.insert(key.clone(), value.clone());
            }
        }
    }
    out
}

/// The table's `{"$thinking": …}` / `{"$redacted": …}` placeholders as blocks this server signed.
fn signed(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(signed).collect()),
        Value::Object(fields) => {
            if let Some(text) = fields.get("$thinking").and_then(Value::as_str) {
                return thinking_block(text);
            }
            if let Some(payload) = fields.get("$redacted").and_then(Value::as_str) {
                return redacted_thinking_block(payload);
            }
            Value::Object(
                fields
                    .iter()
                    .map(|(key, inner)| (key.clone(), signed(inner)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// What the Rust server should answer a case: the case's status, type and message, with the
/// case's `rust` entry (where this server is out of step with the JS one) over them.
fn expected(case: &Value) -> (u64, Value, Value) {
    let field = |name: &str| {
        case.get("rust")
            .and_then(|r| r.get(name))
            .or_else(|| case.get(name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    (
        field("status").as_u64().unwrap_or(0),
        field("type"),
        field("message"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_test_server_answers_every_shared_rule_as_listed() {
    let table: Value = serde_json::from_str(TABLE).expect("stand-in/rules.json is JSON");
    let cases = table["cases"].as_array().expect("the table has cases");
    assert!(cases.len() > 100, "the table has its cases");
    let client = reqwest::Client::new();
    let mut mismatches = Vec::new();
    for case in cases {
        let rule = case["rule"].as_str().unwrap_or_default();
        let (status, kind, message) = expected(case);
        // A case of a structured-output format scripts its answer: each server checks it against
        // the schema.
        let answer = match (&case["answerText"], &case["answer"]) {
            (Value::String(text), _) => Some(text.clone()),
            (_, Value::Null) => None,
            (_, value) => Some(value.to_string()),
        };
        let script = match answer {
            Some(text) => vec![Step::text(&text)],
            None if status == 200 => vec![Step::text("ok")],
            None => Vec::new(),
        };
        let server = Server::start(script).await;
        // The table's key is the one credential this server should take, besides its own.
        server.accept_credential(
            table["headers"]["x-api-key"]
                .as_str()
                .expect("the table's key"),
        );
        let body = match case["rawBody"].as_str() {
            Some(raw) => raw.to_owned(),
            None => signed(&merged(&table["base"], case.get("set"))).to_string(),
        };
        let method =
            reqwest::Method::from_bytes(case["method"].as_str().unwrap_or("POST").as_bytes())
                .expect("a method");
        let path = case["path"].as_str().unwrap_or("/v1/messages");
        let mut request = client
            .request(method, format!("{}{path}", server.base_url()))
            .body(body);
        let headers = merged(&table["headers"], case.get("headers"));
        for (name, value) in headers.as_object().expect("headers are an object") {
            request = request.header(name, value.as_str().expect("a header value is a string"));
        }
        let response = request.send().await.expect("the server answers");
        let got_status = u64::from(response.status().as_u16());
        let answer: Value =
            serde_json::from_str(&response.text().await.unwrap_or_default()).unwrap_or_default();
        // A refusal is also recorded as a broken rule; this test breaks them on purpose.
        server.take_violations();
        let error = &answer["error"];
        let fits = got_status == status
            && (status == 200
                || (error["type"] == kind
                    && error["message"]
                        .as_str()
                        .zip(message.as_str())
                        .is_some_and(|(got, want)| got.contains(want))));
        if !fits {
            mismatches.push(format!(
                "{rule}: wanted {status} {kind} {message}, got {got_status} {error}"
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// `value` with every `{"$reply": N}` replaced by the id of the reply to request N.
fn with_reply_ids(value: &Value, ids: &[Value]) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(|v| with_reply_ids(v, ids)).collect()),
        Value::Object(fields) => {
            if let Some(n) = fields.get("$reply").and_then(Value::as_u64) {
                return ids.get(n as usize).cloned().unwrap_or(Value::Null);
            }
            Value::Object(
                fields
                    .iter()
                    .map(|(key, inner)| (key.clone(), with_reply_ids(inner, ids)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_test_server_holds_threads_as_listed() {
    use support::threads::ThreadState;
    let table: Value = serde_json::from_str(TABLE).expect("stand-in/rules.json is JSON");
    let threads = &table["threads"];
    let cases = threads["cases"]
        .as_array()
        .expect("the table has thread cases");
    assert!(cases.len() >= 15, "the table has its thread cases");
    let client = reqwest::Client::new();
    let mut mismatches = Vec::new();
    for case in cases {
        let rule = case["rule"].as_str().unwrap_or_default();
        let requests = case["requests"].as_array().expect("a case has requests");
        let script = requests.iter().filter(|r| r["status"] == 200).map(|r| {
            let step = Step::reply(
                r["reply"]["content"].clone(),
                r["reply"]["stop_reason"].as_str().unwrap_or("end_turn"),
            );
            let step = match (&r["reply"], &r["reply"]["usage"]) {
                (Value::Null, _) => Step::text("ok"),
                (_, Value::Null) => step,
                (_, usage) => step.usage(usage.clone()),
            };
            match r["state"].as_str() {
                Some("lost") => step.thread_state(ThreadState::Lost),
                Some("continued") => step.thread_state(ThreadState::Continued),
                Some("in_flight") => step.thread_state(ThreadState::InFlight),
                _ => step,
            }
        });
        let server = Server::start(script.collect::<Vec<_>>()).await;
        server.accept_credential(table["headers"]["x-api-key"].as_str().expect("the key"));
        let refused: Vec<&str> = case["refuse"]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        server.refuse_in_threads(&refused);
        let mut ids = Vec::new();
        for (n, r) in requests.iter().enumerate() {
            let body = with_reply_ids(&merged(&table["base"], r.get("set")), &ids);
            let headers = merged(
                &merged(&table["headers"], Some(&threads["headers"])),
                r.get("headers"),
            );
            let mut request = client
                .post(format!("{}/v1/messages", server.base_url()))
                .body(body.to_string());
            for (name, value) in headers.as_object().expect("headers are an object") {
                request = request.header(name, value.as_str().expect("a header value"));
            }
            let response = request.send().await.expect("the server answers");
            let got_status = u64::from(response.status().as_u16());
            let answer: Value = serde_json::from_str(&response.text().await.unwrap_or_default())
                .unwrap_or_default();
            ids.push(answer["id"].clone());
            let error = &answer["error"];
            let want_status = r["status"].as_u64().unwrap_or(0);
            let fits = got_status == want_status
                && (want_status == 200
                    || (error["type"] == r["type"]
                        && error["message"]
                            .as_str()
                            .zip(r["message"].as_str())
                            .is_some_and(|(got, want)| got.contains(want))
                        && error["details"]["error_code"] == r["code"]
                        && error["details"]["unsupported"] == r["unsupported"]));
            if !fits {
                mismatches.push(format!(
                    "{rule} (request {n}): wanted {want_status} {} {} {}, got {got_status} {error}",
                    r["type"], r["message"], r["code"]
                ));
            }
        }
        // The cases send bad requests on purpose.
        server.take_violations();
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
