//! `store` and `thread`: the stored thread a run goes on in.

use serde_json::Value;

use super::read::Given;
use crate::binding::stores;
use crate::engine::store::{Store, ThreadRef, OWN_THREAD_OWNER};
use crate::engine::RunError;

const MAX_ID: usize = 200;

/// The thread of the run, or none. `thread` without `store` is refused, and so is a store that
/// was closed and collected.
///
/// A run with a `store` and no `thread` runs in a thread of its own (`own`): a new one, or
/// `own_thread`, the one a run taken over had.
pub fn thread(
    store: Given,
    thread: Given,
    own_thread: Option<&str>,
) -> Result<Option<ThreadRef>, RunError> {
    let Some(given) = thread.value() else {
        if store.value().is_none() {
            return Ok(None);
        }
        let store = store_of(store)?;
        let id = own_thread.map_or_else(
            || format!("own_{}", crate::engine::store::ordered_id()),
            str::to_owned,
        );
        return Ok(Some(ThreadRef {
            store,
            id,
            owner: OWN_THREAD_OWNER.to_owned(),
            own: true,
        }));
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
    if store.value().is_none() {
        return Err(RunError::invalid_request(
            "Option thread needs the store option too (createStore()): the thread's history is kept there. Nothing was sent.",
        ));
    }
    Ok(Some(ThreadRef {
        store: store_of(store)?,
        id,
        owner,
        own: false,
    }))
}

/// The store the `store` option names.
fn store_of(store: Given) -> Result<Store, RunError> {
    let handle = match store.value() {
        Some(Value::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        _ => None,
    };
    handle.and_then(stores::find).ok_or_else(|| {
        RunError::invalid_request(
            "Option store must be a store made by createStore(). Nothing was sent.",
        )
    })
}
