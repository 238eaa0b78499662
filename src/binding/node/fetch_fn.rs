//! A JS function that fetches a credential (`provider.credentials`; any later token function
//! too), as the engine's [`FetchCredential`]. lib/credentials.js wraps the caller's function so
//! that it always resolves, with `{"ok": value}` or `{"failed": "what was thrown"}` as JSON;
//! the engine reads the value.

use std::sync::Arc;

use napi::bindgen_prelude::{FnArgs, Promise};
use serde_json::Value;

use super::callback::JsCallback;
use crate::engine::wire::fetched::{FetchCredential, FetchedCredential};

/// `(runId) => Promise<string>`: the wrapped function, answering `{"ok": …}` or `{"failed": …}`.
pub type FetchFn = JsCallback<(u32,), Promise<String>>;

/// A wrapped JS credential function bound to one run.
pub struct JsFetch {
    /// The wrapper lib/credentials.js made.
    pub function: Arc<FetchFn>,
    /// The run it is called for.
    pub run_id: u32,
}

impl FetchCredential for JsFetch {
    fn fetch(&self) -> FetchedCredential {
        let function = self.function.clone();
        let run_id = self.run_id;
        Box::pin(async move {
            let promise = function
                .call_async_catch(FnArgs::from((run_id,)))
                .await
                .map_err(|e| format!("the function could not be called ({})", e.reason))?;
            let answer = promise
                .await
                .map_err(|e| format!("the function did not answer ({})", e.reason))?;
            answered(&answer)
        })
    }
}

/// The value of the wrapper's answer as JSON text, or what the function threw.
fn answered(answer: &str) -> Result<String, String> {
    let mut parsed: Value = serde_json::from_str(answer)
        .map_err(|_| "the function answered a value that is not JSON".to_owned())?;
    if let Some(Value::String(thrown)) = parsed.get("failed") {
        return Err(format!("it threw {thrown:?}"));
    }
    Ok(parsed
        .get_mut("ok")
        .map(Value::take)
        .unwrap_or(Value::Null)
        .to_string())
}
