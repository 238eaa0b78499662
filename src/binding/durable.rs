//! Durable runs on the binding's side: what of a run's options its log keeps (never a secret),
//! and `resumeRun`'s request turned into the run it takes over — its logged options with the
//! resuming call's secrets and store — or the stored result of a run that already ended.

use serde_json::{Map, Value};

use crate::binding::options::parse_request;
use crate::binding::stores;
use crate::engine::store::{holder, DurableRun, Store, TakeOver, OWN_THREAD_OWNER};
use crate::engine::RunError;

/// Options a run's log never keeps: secrets (the resuming process gives its own), and the
/// store's handle, which means nothing to another process.
const NOT_LOGGED: [&str; 5] = ["apiKey", "authToken", "approvalSecret", "headers", "store"];

/// Options `resumeRun` may give again, over what the log keeps: the secrets, and the options
/// that can hold one (a `baseURL` with a password or a query is not logged; an MCP server's
/// `authorizationToken` is taken out of `mcpServers`, AWS `credentials` and `accessToken` out of
/// `provider`).
const GIVEN_AGAIN: [&str; 8] = [
    "apiKey",
    "authToken",
    "approvalSecret",
    "headers",
    "store",
    "baseURL",
    "mcpServers",
    "provider",
];

/// The run's options as its log keeps them: the request's `options` without a secret.
pub fn logged_options(request_json: &str) -> String {
    let options = serde_json::from_str::<Value>(request_json)
        .ok()
        .and_then(|mut v| v.get_mut("options").map(Value::take));
    let mut options = match options {
        Some(Value::Object(o)) => o,
        _ => Map::new(),
    };
    for key in NOT_LOGGED {
        options.remove(key);
    }
    let credentialed = |url: &str| {
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.contains('@') || url.contains('?')
    };
    if options
        .get("baseURL")
        .and_then(Value::as_str)
        .is_some_and(credentialed)
    {
        options.remove("baseURL");
    }
    // Credentials given to the platform (AWS keys, a token function) are never logged.
    if let Some(Value::Object(provider)) = options.get_mut("provider") {
        provider.remove("credentials");
        provider.remove("accessToken");
    }
    if let Some(Value::Array(servers)) = options.get_mut("mcpServers") {
        for server in servers.iter_mut().filter_map(Value::as_object_mut) {
            server.remove("authorizationToken");
        }
    }
    Value::Object(options).to_string()
}

/// What `resumeRun` comes to before anything runs.
pub enum Resumed {
    /// The run was taken over: the request to run it with (JSON, as `runWithTools` sends it),
    /// its log, and its store.
    Run(String, DurableRun, Store),
    /// The run had ended: its stored result and its thread's history.
    Ended {
        /// `{ data, error }` as JSON.
        result: String,
        /// The thread's history.
        messages: Vec<String>,
    },
}

/// A `resumeRun` request: `{ resume: runId, options: { store, apiKey?, … }, env }`, if
/// `request_json` is one. lib/run.js writes `resume` first; every other run's request starts
/// with its `prompt`, so no other run is parsed here (a history may well hold the word).
pub fn resume_request(request_json: &str) -> Option<Value> {
    if !request_json.starts_with("{\"resume\":") {
        return None;
    }
    let v: Value = serde_json::from_str(request_json).ok()?;
    v.get("resume").is_some_and(Value::is_string).then_some(v)
}

/// Takes the run of `request` over (see [`resume_request`]).
pub async fn take_over(mut request: Value) -> Result<Resumed, RunError> {
    let run_id = request["resume"].as_str().unwrap_or_default().to_owned();
    let given = match request.get_mut("options").map(Value::take) {
        Some(Value::Object(o)) => o,
        _ => Map::new(),
    };
    let store = given
        .get("store")
        .and_then(Value::as_u64)
        .and_then(|h| u32::try_from(h).ok())
        .and_then(stores::find)
        .ok_or_else(|| {
            RunError::invalid_request(
                "resumeRun: option store must be a store made by createStore(). Nothing was run.",
            )
        })?;
    let env = request.get_mut("env").map(Value::take).unwrap_or_default();
    // What the call gives again is checked before the run is taken: options that do not hold
    // (`apiKey: 42`) are the caller's to fix, and leave the run as it was, resumable.
    let peek = store
        .run_options(run_id.clone())
        .await
        .map_err(|e| RunError::store_unavailable(&e.0))?;
    if let Some((options, thread_id, owner)) = &peek {
        if let Err(e) = parse_request(&run_request(options, thread_id, owner, &given, &env)) {
            let own: Map<String, Value> = given
                .iter()
                .filter(|(k, _)| *k == "store")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if parse_request(&run_request(options, thread_id, owner, &own, &env)).is_ok() {
                return Err(e);
            }
        }
    }
    let lease = store.lease_ms();
    let taken = store
        .take_over(run_id.clone(), lease)
        .await
        .map_err(|e| RunError::store_unavailable(&e.0))?;
    let log = match taken {
        TakeOver::NoSuch => {
            return Err(RunError::invalid_request(format!(
                "resumeRun: no run {:?} in this store. Nothing was run.",
                run_id.chars().take(200).collect::<String>()
            )))
        }
        TakeOver::Busy => return Err(RunError::run_busy(&run_id)),
        // recoverRuns reports only the runs it took: one another process took and ended meanwhile
        // is not its own.
        TakeOver::Ended(_) if request["recovering"] == Value::Bool(true) => {
            return Err(RunError::run_busy(&run_id))
        }
        TakeOver::Ended(log) => {
            return Ok(Resumed::Ended {
                result: with_run_id(&log.result, &run_id),
                messages: log.messages,
            })
        }
        TakeOver::Taken(log) => log,
    };
    let json = run_request(&log.options, &log.thread_id, &log.owner, &given, &env);
    Ok(Resumed::Run(
        json,
        DurableRun::TakenOver(Box::new(log)),
        store,
    ))
}

/// The request a run taken over runs with (JSON, as `runWithTools` sends it): its logged
/// `options` with what the resuming call gives again (`given`), in its thread.
fn run_request(
    options: &str,
    thread_id: &str,
    owner: &str,
    given: &Map<String, Value>,
    env: &Value,
) -> String {
    let mut options = match serde_json::from_str::<Value>(options) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    for key in GIVEN_AGAIN {
        if let Some(v) = given.get(key) {
            options.insert(key.to_owned(), v.clone());
        }
    }
    if owner == OWN_THREAD_OWNER {
        // A run with a store and no thread: its thread of its own.
        return serde_json::json!({ "prompt": [], "options": options, "env": env, "ownThread": thread_id })
            .to_string();
    }
    let owner = if owner.is_empty() {
        Value::Null
    } else {
        Value::String(owner.to_owned())
    };
    options.insert(
        "thread".into(),
        serde_json::json!({ "id": thread_id, "owner": owner }),
    );
    serde_json::json!({ "prompt": [], "options": options, "env": env }).to_string()
}

/// A stored result with its run's id (`data.runId` or `error.runId`), as a run's own has it.
fn with_run_id(result: &str, run_id: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<Value>(result) else {
        return result.to_owned();
    };
    for side in ["data", "error"] {
        if let Some(o) = v.get_mut(side).and_then(Value::as_object_mut) {
            o.entry("runId")
                .or_insert_with(|| Value::String(run_id.to_owned()));
        }
    }
    v.to_string()
}

/// A run taken over whose options no longer hold in this process (a `toolChoice` naming a tool
/// not registered here): it ends with `error`, so that nobody takes it over again and again.
pub async fn give_up(store: &Store, run: &DurableRun, error: &mut RunError) {
    let DurableRun::TakenOver(log) = run else {
        return;
    };
    error.run_id = Some(log.id.clone());
    let result = serde_json::json!({ "data": null, "error": &*error }).to_string();
    let holder = holder(&log.id, log.resumed);
    if let Err(e) = store.give_up(log.thread_id.clone(), holder, result).await {
        tracing::warn!(
            run = log.id.as_str(),
            error = e.0.as_str(),
            "a run taken over could not be ended"
        );
    }
}

/// For a run taken over, the names of `tools` this process registered: one it did not is the
/// unknown-tool case when the model calls it, not a refusal of the whole run.
pub fn registered_only(names: &mut Option<Vec<String>>, registered: &[crate::engine::Tool]) {
    if let Some(names) = names {
        names.retain(|n| registered.iter().any(|t| &t.name == n));
    }
}

#[cfg(test)]
mod tests {
    use super::logged_options;

    #[test]
    fn the_log_keeps_no_secret_aws_credentials_included() {
        let request = r#"{"prompt":"hi","env":{},"options":{"apiKey":"k","model":"m",
            "provider":{"type":"bedrock","region":"eu-west-1","credentials":{"accessKeyId":"AKIA1","secretAccessKey":"s3cret","sessionToken":"t0ken"}},
            "mcpServers":[{"name":"d","url":"https://d/mcp","authorizationToken":"mcp-tok"}]}}"#;
        let logged = logged_options(request);
        for secret in ["s3cret", "t0ken", "AKIA1", "mcp-tok", "\"k\""] {
            assert!(!logged.contains(secret), "{secret} in {logged}");
        }
        assert!(logged.contains(r#""region":"eu-west-1""#), "{logged}");
    }

    #[test]
    fn the_log_keeps_no_access_token_function() {
        let request = r#"{"prompt":"hi","env":{},"options":{"model":"m",
            "provider":{"type":"vertex","projectId":"p","region":"global","accessToken":"[function]"}}}"#;
        let logged = logged_options(request);
        assert!(!logged.contains("accessToken"), "{logged}");
        assert!(logged.contains(r#""projectId":"p""#), "{logged}");
    }
}
