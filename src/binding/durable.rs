//! Durable runs on the binding's side: what of a run's options its log keeps (never a secret),
//! and `resumeRun`'s request turned into the run it takes over — its logged options with the
//! resuming call's secrets and store — or the stored result of a run that already ended.

use serde_json::{Map, Value};

use crate::binding::stores;
use crate::engine::store::{DurableRun, TakeOver};
use crate::engine::RunError;

/// Options a run's log never keeps: secrets (the resuming process gives its own), and the
/// store's handle, which means nothing to another process.
const NOT_LOGGED: [&str; 5] = ["apiKey", "authToken", "approvalSecret", "headers", "store"];

/// The run's options as its log keeps them: the request's `options` without [`NOT_LOGGED`].
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
    Value::Object(options).to_string()
}

/// What `resumeRun` comes to before anything runs.
pub enum Resumed {
    /// The run was taken over: the request to run it with (JSON, as `runWithTools` sends it),
    /// and its log.
    Run(String, DurableRun),
    /// The run had ended: its stored result and its thread's history.
    Ended {
        /// `{ data, error }` as JSON.
        result: String,
        /// The thread's history.
        messages: Vec<String>,
    },
}

/// A `resumeRun` request: `{ resume: runId, options: { store, apiKey?, … }, env }`, if
/// `request_json` is one.
pub fn resume_request(request_json: &str) -> Option<Value> {
    if !request_json.contains("\"resume\"") {
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
                result: log.result,
                messages: log.messages,
            })
        }
        TakeOver::Taken(log) => log,
    };
    let mut options = match serde_json::from_str::<Value>(&log.options) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    for key in NOT_LOGGED {
        if let Some(v) = given.get(key) {
            options.insert(key.to_owned(), v.clone());
        }
    }
    let owner = if log.owner.is_empty() {
        Value::Null
    } else {
        Value::String(log.owner.clone())
    };
    options.insert(
        "thread".into(),
        serde_json::json!({ "id": log.thread_id, "owner": owner }),
    );
    let env = request.get_mut("env").map(Value::take).unwrap_or_default();
    let json = serde_json::json!({ "prompt": [], "options": options, "env": env }).to_string();
    Ok(Resumed::Run(json, DurableRun::TakenOver(Box::new(log))))
}
