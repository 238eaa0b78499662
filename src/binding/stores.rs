//! The stores JS made (`createStore`), by the handle a run's `store` option carries: the
//! options cross as JSON, a store does not.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use crate::engine::store::Store;

static STORES: LazyLock<Mutex<HashMap<u32, Store>>> = LazyLock::new(Default::default);
static NEXT: Mutex<u32> = Mutex::new(1);

/// Keeps `store` until [`forget`]; its handle.
pub fn keep(store: Store) -> u32 {
    let mut next = NEXT.lock().unwrap_or_else(|p| p.into_inner());
    let handle = *next;
    *next = next.wrapping_add(1).max(1);
    STORES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(handle, store);
    handle
}

/// The store of `handle`, while it is kept.
pub fn find(handle: u32) -> Option<Store> {
    STORES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&handle)
        .cloned()
}

/// Lets the store of `handle` go (its JS object was collected).
pub fn forget(handle: u32) {
    STORES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&handle);
}
