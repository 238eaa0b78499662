//! `stopRun`: a run stops wherever it runs. A run that a live process holds is asked to (its
//! holder looks every second and ends it as an abort does); a run that nobody holds — its
//! process stopped and nobody took it over yet, or its thread went on without it — is ended
//! here, in one transaction: its log ends as aborted, its thread is let go, and its stream (if
//! it was recorded) gets its abort end, so every follower's stream ends with the abort and no
//! take-over can run it after.

use serde_json::{json, Value};

use super::database::{now_ms, Store};
use super::run_log::{end, let_go, STOPPED};
use super::stream_write::add_slice;
use super::thread_run::OWN_THREAD_OWNER;
use super::threads::holder;
use super::tx::{StoreError, Tx, Val};

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
                    let mut row = rows.into_iter().next().unwrap_or_default().into_iter();
                    let (active, lease) = (
                        row.next().unwrap_or(Val::Int(0)).into_text(),
                        row.next().map_or(0, |v| v.int()),
                    );
                    let rows = tx
                        .query(
                            "SELECT status, resumed FROM atc_runs WHERE id = $1",
                            &[run_id.as_str().into()],
                        )
                        .await?;
                    let mut row = rows.into_iter().next().unwrap_or_default().into_iter();
                    let status = row.next().unwrap_or(Val::Int(0)).into_text();
                    let takes = u32::try_from(row.next().map_or(0, |v| v.int())).unwrap_or(0);
                    if status != "running" {
                        return Ok(false);
                    }
                    let current = holder(&run_id, takes);
                    if active == current && lease > now_ms() {
                        // A live holder: it sees the request within a second.
                        tx.execute(
                            "UPDATE atc_runs SET stop_requested = 1 WHERE id = $1",
                            &[run_id.as_str().into()],
                        )
                        .await?;
                        return Ok(true);
                    }
                    // Asked to stop as well: a holder still alive whose lease ran out learns of
                    // it when it next looks, and ends as aborted, as the stored result says.
                    tx.execute(
                        "UPDATE atc_runs SET stop_requested = 1 WHERE id = $1",
                        &[run_id.as_str().into()],
                    )
                    .await?;
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

/// Gives the stream of a run stopped while nobody held it its abort end, if it was recorded and
/// is not over (the run's row is locked by its end: no holder's slice comes in between).
pub(super) async fn end_stream(
    tx: &mut dyn Tx,
    run_id: &str,
    retention: i64,
) -> Result<(), StoreError> {
    let rows = tx
        .query(
            "SELECT done FROM atc_streams WHERE run_id = $1",
            &[run_id.into()],
        )
        .await?;
    if rows
        .first()
        .and_then(|r| r.first())
        .is_none_or(|d| d.int() != 0)
    {
        return Ok(());
    }
    let slices = tx
        .query(
            "SELECT chunks FROM atc_stream_chunks WHERE run_id = $1 ORDER BY seq",
            &[run_id.into()],
        )
        .await?;
    let sent: String = slices
        .iter()
        .map(|s| s.first().map_or("", Val::text))
        .collect();
    add_slice(tx, run_id, &abort_end(&sent), true, retention).await
}

/// The UI message stream's end for a run stopped after `sent`: the text or reasoning part the cut
/// left open is ended, then the abort, as the run's own stream ends when it is stopped.
pub(super) fn abort_end(sent: &str) -> String {
    let mut open: Option<(String, String)> = None;
    for line in sent.lines() {
        let Some(chunk) = line
            .strip_prefix("data: ")
            .and_then(|j| serde_json::from_str::<Value>(j).ok())
        else {
            continue;
        };
        let id = chunk["id"].as_str().unwrap_or_default().to_owned();
        match chunk["type"].as_str().unwrap_or_default() {
            kind @ ("text-start" | "reasoning-start") => {
                open = Some((kind.trim_end_matches("-start").to_owned(), id));
            }
            "text-end" | "reasoning-end" if open.as_ref().is_some_and(|(_, o)| *o == id) => {
                open = None;
            }
            "finish-step" | "reset-step" => open = None,
            _ => {}
        }
    }
    let mut text = String::new();
    if let Some((kind, id)) = open {
        let chunk = json!({ "type": format!("{kind}-end"), "id": id });
        text.push_str(&format!("data: {chunk}\n\n"));
    }
    text.push_str("data: {\"type\":\"abort\"}\n\ndata: [DONE]\n\n");
    text
}

#[cfg(test)]
mod tests {
    use super::abort_end;

    #[test]
    fn an_abort_ends_the_part_the_cut_left_open() {
        let sent = "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"start-step\"}\n\n\
                    data: {\"type\":\"text-start\",\"id\":\"text-1\"}\n\n\
                    data: {\"type\":\"text-delta\",\"id\":\"text-1\",\"delta\":\"Hi\"}\n\n";
        assert_eq!(
            abort_end(sent),
            "data: {\"id\":\"text-1\",\"type\":\"text-end\"}\n\ndata: {\"type\":\"abort\"}\n\ndata: [DONE]\n\n"
        );
        let closed = format!("{sent}data: {{\"type\":\"text-end\",\"id\":\"text-1\"}}\n\n");
        assert_eq!(
            abort_end(&closed),
            "data: {\"type\":\"abort\"}\n\ndata: [DONE]\n\n"
        );
    }
}
