//! A stopped run's stream ends with the abort: written by stopRun for a run nobody holds, and by
//! the take-over that finds a run asked to stop, each in the transaction that ends the run.
//! Apart from both so that neither imports the other.

use serde_json::{json, Value};

use super::stream_write::{add_slice, tail};
use super::tx::{StoreError, Tx};

/// Gives the stream of a run stopped while nobody held it its abort end, if it was recorded and
/// is not over (the run's row is locked by its end: no holder's slice comes in between).
pub(super) async fn end_stream(
    tx: &mut dyn Tx,
    run_id: &str,
    retention: i64,
) -> Result<(), StoreError> {
    let Some(sent) = tail(tx, run_id).await? else {
        return Ok(());
    };
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
