//! `createStore`: the napi side of the engine's store (`engine::store`). Every method hands its
//! work to the runtime and resolves with JSON text that lib/store.js reads; a failure rejects
//! with the store's words, which lib/store.js gives the code `store_unavailable`.

use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::binding::stores;
use crate::engine::store::{Store, StoreError, StoreOptions, StreamState, ThreadSummary};

/// What a follower of a run's stream reads (`followStream`).
#[napi(object)]
pub struct StreamSlice {
    /// `missing` (none the owner may see), `live` or `done`.
    pub state: String,
    /// The SSE text after the slice the follower had.
    pub text: String,
    /// The last slice's number.
    pub seq: i64,
}

/// A run's stream as the holder that took the run over finds it (`streamState`).
#[napi(object)]
pub struct StreamHold {
    /// The SSE text its stream sent so far; `null` when it was not recorded or is over.
    pub sent: Option<String>,
    /// The run's generation: the times it was taken over.
    pub generation: u32,
    /// Its stored result (`{ data, error }` as JSON) if it has ended.
    pub result: Option<String>,
    /// It ended, and neither it nor its stream changed for a while (5 s): no holder is about to
    /// write the stream's end.
    pub idle: bool,
}

/// A store, as lib/store.js wraps it.
#[napi]
pub struct NativeStore {
    store: Store,
    handle: u32,
}

impl Drop for NativeStore {
    fn drop(&mut self) {
        stores::forget(self.handle);
    }
}

fn rejected(e: StoreError) -> Error {
    Error::from_reason(e.0)
}

/// `""` (no owner) as `null`.
fn owner_json(owner: &str) -> Value {
    if owner.is_empty() {
        Value::Null
    } else {
        Value::String(owner.to_owned())
    }
}

/// Stored JSON, as it was written (it was checked when written).
fn raw(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn summary_json(t: &ThreadSummary) -> Value {
    json!({
        "id": t.id,
        "owner": owner_json(&t.owner),
        "metadata": raw(&t.metadata),
        "status": t.status,
        "createdAt": t.created_at,
        "updatedAt": t.updated_at,
    })
}

#[napi]
impl NativeStore {
    /// A store for `url`; a malformed one throws `InvalidArg` saying why.
    #[napi(constructor)]
    pub fn new(
        url: String,
        max_connections: Option<u32>,
        lease_ms: Option<u32>,
        stream_retention_ms: Option<u32>,
    ) -> Result<NativeStore> {
        let options = StoreOptions {
            max_connections,
            lease_ms: lease_ms.map(i64::from),
            stream_retention_ms: stream_retention_ms.map(i64::from),
        };
        let store = Store::open(&url, options)
            .map_err(|why| Error::new(Status::InvalidArg, format!("createStore: {why}")))?;
        let handle = stores::keep(store.clone());
        Ok(NativeStore { store, handle })
    }

    /// What a run's `store` option carries to find this store.
    #[napi(getter)]
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// The URL without its password or query.
    #[napi(getter)]
    pub fn quoted(&self) -> String {
        self.store.quoted().to_owned()
    }

    /// Makes a thread; whether the id was free.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn insert_thread<'e>(
        &self,
        env: &'e Env,
        id: String,
        owner: String,
        metadata_json: String,
    ) -> Result<PromiseRaw<'e, bool>> {
        let store = self.store.clone();
        env.spawn_future(async move {
            store
                .insert_thread(id, owner, metadata_json)
                .await
                .map_err(rejected)
        })
    }

    /// The thread as JSON, or `null` when there is none the owner may see.
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn get_thread<'e>(
        &self,
        env: &'e Env,
        id: String,
        owner: String,
    ) -> Result<PromiseRaw<'e, Option<String>>> {
        let store = self.store.clone();
        env.spawn_future(async move {
            let Some(t) = store.get_thread(id, owner).await.map_err(rejected)? else {
                return Ok(None);
            };
            let messages: Vec<&RawValue> = t
                .messages
                .iter()
                .filter_map(|m| serde_json::from_str(m).ok())
                .collect();
            // The run that holds the thread, or whose process stopped holding it (its lease ran
            // out): the one `resumeRun` would take over.
            let active = (!t.active_run.is_empty()).then_some(&t.active_run);
            Ok(Some(
                json!({
                    "id": t.id,
                    "owner": owner_json(&t.owner),
                    "metadata": raw(&t.metadata),
                    "messages": messages,
                    "pendingApprovals": raw(&t.pending),
                    "status": t.status,
                    "activeRunId": active,
                    "createdAt": t.created_at,
                    "updatedAt": t.updated_at,
                })
                .to_string(),
            ))
        })
    }

    /// The owner's threads as a JSON array, the most recently updated first.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn list_threads<'e>(
        &self,
        env: &'e Env,
        owner: String,
        limit: u32,
        before: Option<String>,
    ) -> Result<PromiseRaw<'e, String>> {
        let store = self.store.clone();
        env.spawn_future(async move {
            let list = store
                .list_threads(owner, limit, before)
                .await
                .map_err(rejected)?;
            Ok(Value::Array(list.iter().map(summary_json).collect()).to_string())
        })
    }

    /// Deletes a thread; whether there was one the owner may see.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn delete_thread<'e>(
        &self,
        env: &'e Env,
        id: String,
        owner: String,
    ) -> Result<PromiseRaw<'e, bool>> {
        let store = self.store.clone();
        env.spawn_future(async move { store.delete_thread(id, owner).await.map_err(rejected) })
    }

    /// Stops a run wherever it runs (a run nobody holds at once, its stream ended with the
    /// abort); whether it was going on. With `owner` (`""`: the ownerless one), a run whose thread has
    /// another owner is not found.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn stop_run<'e>(
        &self,
        env: &'e Env,
        run_id: String,
        owner: Option<String>,
    ) -> Result<PromiseRaw<'e, bool>> {
        let store = self.store.clone();
        env.spawn_future(async move { store.ask_to_stop(run_id, owner).await.map_err(rejected) })
    }

    /// The ids of the runs whose lease ran out, the longest expired first: at most `limit`.
    #[napi(ts_return_type = "Promise<string[]>")]
    pub fn expired_runs<'e>(
        &self,
        env: &'e Env,
        limit: u32,
    ) -> Result<PromiseRaw<'e, Vec<String>>> {
        let store = self.store.clone();
        env.spawn_future(async move { store.expired_runs(limit).await.map_err(rejected) })
    }

    /// Adds `text` (SSE) to run `runId`'s stream (`done`: its last) for its holder of
    /// `generation` (0 for the process that started the run, else the times it was taken over
    /// when this one took it); written off the JS thread, dropped once the run has a newer holder.
    #[napi]
    pub fn record_stream(&self, run_id: String, generation: u32, text: String, done: bool) {
        let store = self.store.clone();
        napi::bindgen_prelude::within_runtime_if_available(move || {
            store.record_stream(&run_id, generation, text, done)
        });
    }

    /// Run `runId` as the holder that took it over finds it: what its stream sent so far (`null`
    /// when not recorded or over), its generation, and its stored result (JSON) if it ended;
    /// `null` when there is no such run.
    #[napi(ts_return_type = "Promise<StreamHold | null>")]
    pub fn stream_state<'e>(
        &self,
        env: &'e Env,
        run_id: String,
    ) -> Result<PromiseRaw<'e, Option<StreamHold>>> {
        let store = self.store.clone();
        env.spawn_future(async move {
            let hold = store.stream_state(run_id).await.map_err(rejected)?;
            Ok(hold.map(|h| StreamHold {
                sent: h.sent,
                generation: h.generation,
                result: h.result,
                idle: h.idle,
            }))
        })
    }

    /// The run that holds the thread now (if `owner` may see the thread), or `null`.
    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn running_run<'e>(
        &self,
        env: &'e Env,
        thread_id: String,
        owner: String,
    ) -> Result<PromiseRaw<'e, Option<String>>> {
        let store = self.store.clone();
        env.spawn_future(async move { store.running_run(thread_id, owner).await.map_err(rejected) })
    }

    /// Whether run `runId`'s stream was recorded and is not over: `resumeRun` records a streamed
    /// run on into it.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn stream_open<'e>(&self, env: &'e Env, run_id: String) -> Result<PromiseRaw<'e, bool>> {
        let store = self.store.clone();
        env.spawn_future(async move { store.stream_open(run_id).await.map_err(rejected) })
    }

    /// Run `runId`'s stream after slice `after` (waiting up to `waitMs` for more):
    /// `{ state: "missing" | "live" | "done", text, seq }`.
    #[napi(ts_return_type = "Promise<StreamSlice>")]
    pub fn follow_stream<'e>(
        &self,
        env: &'e Env,
        run_id: String,
        owner: String,
        after: i64,
        wait_ms: u32,
    ) -> Result<PromiseRaw<'e, StreamSlice>> {
        let store = self.store.clone();
        env.spawn_future(async move {
            let wait = std::time::Duration::from_millis(wait_ms.into());
            let read = store
                .follow_stream(run_id, owner, after, wait)
                .await
                .map_err(rejected)?;
            let state = match read.state {
                StreamState::Missing => "missing",
                StreamState::Live => "live",
                StreamState::Done => "done",
            };
            Ok(StreamSlice {
                state: state.to_owned(),
                text: read.text,
                seq: read.seq,
            })
        })
    }

    /// Ends the store's connections.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        let store = self.store.clone();
        env.spawn_future(async move {
            store.close().await;
            Ok(())
        })
    }
}
