//! `stopRun`: a run stops wherever it runs. A run that a live process holds is asked to (its
//! holder looks every second and ends it as an abort does); a run that nobody holds — its
//! process stopped and nobody took it over yet, or its thread went on without it — is ended
//! here, in one transaction: its log ends as aborted, its thread is let go, and its stream (if
//! it was recorded) gets its abort end, so every follower's stream ends with the abort and no
//! take-over can run it after.

use super::database::{now_ms, Store};
use super::run_log::{end, let_go, STOPPED};
use super::stream_end::end_stream;
use super::thread_run::OWN_THREAD_OWNER;
use super::threads::holder;
use super::tx::{first_row, StoreError, Val};

impl Store {
    /// Stops run `run_id`, wherever it runs (see the module's comment); whether it was going on.
    /// With `owner`, a run whose thread has another owner is not found (a run of a thread of its
    /// own is nobody's).
    pub async fn ask_to_stop(
        &self,
        run_id: String,
        owner: Option<String>,
    ) -> Result<bool, StoreError> {
        let retention = self.streams.retention_ms;
        let stopped = self
            .transact(Box::new(move |tx| {
                Box::pin(async move {
                    let found = tx
                        .query(
                            "SELECT r.thread_id, COALESCE(t.owner, '') FROM atc_runs r \
                             LEFT JOIN atc_threads t ON t.id = r.thread_id WHERE r.id = $1",
                            &[run_id.as_str().into()],
                        )
                        .await?;
                    let Some(mut found) = found.into_iter().next().map(Vec::into_iter) else {
                        return Ok(false);
                    };
                    let thread_id = found.next().unwrap_or(Val::Int(0)).into_text();
                    let of = found.next().unwrap_or(Val::Int(0)).into_text();
                    if owner.is_some_and(|o| o != of && of != OWN_THREAD_OWNER) {
                        return Ok(false);
                    }
                    // The thread's row first, as a take-over locks it: one of the two waits
                    // for the other, and then finds the run as the other left it.
                    let sql = format!(
                        "SELECT active_run, lease_until FROM atc_threads WHERE id = $1{}",
                        tx.for_update()
                    );
                    let rows = tx.query(&sql, &[thread_id.as_str().into()]).await?;
                    let mut next = first_row(rows);
                    let (active, lease) = (next().into_text(), next().int());
                    let rows = tx
                        .query(
                            "SELECT status, resumed FROM atc_runs WHERE id = $1",
                            &[run_id.as_str().into()],
                        )
                        .await?;
                    let mut next = first_row(rows);
                    let status = next().into_text();
                    let takes = u32::try_from(next().int()).unwrap_or(0);
                    if status != "running" {
                        return Ok(false);
                    }
                    // Asked to stop: a live holder sees it within a second; a holder still
                    // alive whose lease ran out learns of it when it next looks, and ends as
                    // aborted, as the stored result below says.
                    tx.execute(
                        "UPDATE atc_runs SET stop_requested = 1 WHERE id = $1",
                        &[run_id.as_str().into()],
                    )
                    .await?;
                    let current = holder(&run_id, takes);
                    if active == current && lease > now_ms() {
                        return Ok(true);
                    }
                    if active == current {
                        let_go(tx, &thread_id, &current, &run_id, STOPPED).await?;
                    } else {
                        // Its thread went on with a newer run: the thread is that run's.
                        end(tx, &run_id, STOPPED).await?;
                    }
                    end_stream(tx, &run_id, retention).await?;
                    Ok(true)
                })
            }))
            .await?;
        if stopped {
            self.streams.wake();
        }
        Ok(stopped)
    }

    /// Whether run `run_id` was asked to stop.
    pub async fn asked_to_stop(&self, run_id: String) -> Result<bool, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let rows = tx
                    .query(
                        "SELECT stop_requested FROM atc_runs WHERE id = $1",
                        &[run_id.into()],
                    )
                    .await?;
                Ok(rows
                    .first()
                    .and_then(|r| r.first())
                    .is_some_and(|v| v.int() != 0))
            })
        }))
        .await
    }
}
