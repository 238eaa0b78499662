//! A durable run's tool calls in its log: each recorded as started (its attempt) before it runs
//! and as finished (what it came to) after, by the process that holds the run.

use std::collections::HashMap;

use super::database::{now_ms, Store};
use super::threads::holds;
use super::tx::{StoreError, Tx, Val};
use crate::engine::trace::events::Recorded;

/// The records of run `run_id`'s calls, by `tool_use` id.
pub(super) async fn calls(
    tx: &mut dyn Tx,
    run_id: &str,
) -> Result<HashMap<String, Recorded>, StoreError> {
    let rows = tx
        .query(
            "SELECT tool_use_id, attempts, finished FROM atc_calls WHERE run_id = $1",
            &[run_id.into()],
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            let mut next = || row.next().unwrap_or(Val::Int(0));
            let (id, attempts, finished) = (next().into_text(), next().int(), next().into_text());
            let recorded = Recorded {
                attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
                finished: (!finished.is_empty()).then_some(finished),
            };
            (id, recorded)
        })
        .collect())
}

/// Records call `tool_use_id` of run `run_id` as started once more: the attempt this is.
pub(super) async fn started(
    tx: &mut dyn Tx,
    run_id: &str,
    tool_use_id: &str,
) -> Result<u32, StoreError> {
    let rows = tx
        .query(
            "INSERT INTO atc_calls (run_id, tool_use_id, attempts, started_at, finished) VALUES ($1, $2, 1, $3, '')
             ON CONFLICT (run_id, tool_use_id) DO UPDATE SET attempts = atc_calls.attempts + 1, started_at = $3
             RETURNING attempts",
            &[run_id.into(), tool_use_id.into(), now_ms().into()],
        )
        .await?;
    let attempts = rows.first().and_then(|r| r.first()).map_or(1, Val::int);
    Ok(u32::try_from(attempts).unwrap_or(u32::MAX))
}

impl Store {
    /// Records call `tool_use_id` of run `run_id` as started, if `holder` still holds its
    /// thread: the attempt this is, or `None` when the run was lost.
    pub async fn call_started(
        &self,
        thread_id: String,
        holder: String,
        run_id: String,
        tool_use_id: String,
    ) -> Result<Option<u32>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                if !holds(tx, &thread_id, &holder).await? {
                    return Ok(None);
                }
                Ok(Some(started(tx, &run_id, &tool_use_id).await?))
            })
        }))
        .await
    }

    /// Records what call `tool_use_id` of run `run_id` came to, if `holder` still holds its
    /// thread; whether it did.
    pub async fn call_finished(
        &self,
        thread_id: String,
        holder: String,
        run_id: String,
        tool_use_id: String,
        record: String,
    ) -> Result<bool, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                if !holds(tx, &thread_id, &holder).await? {
                    return Ok(false);
                }
                tx.execute(
                    "UPDATE atc_calls SET finished = $3 WHERE run_id = $1 AND tool_use_id = $2",
                    &[run_id.into(), tool_use_id.into(), record.into()],
                )
                .await?;
                Ok(true)
            })
        }))
        .await
    }
}
