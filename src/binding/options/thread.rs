//! `store` and `thread`: the stored thread a run goes on in.

use serde_json::Value;

use super::read::Given;
use crate::binding::stores;
use crate::engine::store::ThreadRef;
use crate::engine::RunError;

const MAX_ID: usize = 200;

/// The thread of the run, or none. `thread` without `store` is refused, and so is a store that
/// was closed and collected.
pub fn thread(store: Given, thread: Given) -> Result<Option<ThreadRef>, RunError> {
    let Some(given) = thread.value() else {
        return Ok(None);
    };
    let expected = "a thread id (a string of 1 to 200 characters) or { id, owner? }";
    let text = |v: Option<&Value>| -> Option<String> {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty() && s.chars().count() <= MAX_ID)
            .map(str::to_owned)
    };
    let (id, owner) = match &given {
        Value::String(_) => (text(Some(&given)), Some(String::new())),
        Value::Object(o) => {
            let owner = match o.get("owner") {
                None | Some(Value::Null) => Some(String::new()),
                other => text(other),
            };
            let known = o.keys().all(|k| k == "id" || k == "owner");
            (text(o.get("id")).filter(|_| known), owner)
        }
        _ => (None, None),
    };
    let (Some(id), Some(owner)) = (id, owner) else {
        return Err(thread.bad(expected, &given));
    };
    let handle = match store.value() {
        Some(Value::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        None => {
            return Err(RunError::invalid_request(
                "Option thread needs the store option too (createStore()): the thread's history is kept there. Nothing was sent.",
            ))
        }
        Some(_) => None,
    };
    let Some(store) = handle.and_then(stores::find) else {
        return Err(RunError::invalid_request(
            "Option store must be a store made by createStore(). Nothing was sent.",
        ));
    };
    Ok(Some(ThreadRef { store, id, owner }))
}
