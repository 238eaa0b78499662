//! Tests of a run's stream writes on SQLite files: a stream's end only after its run's end, a
//! slice never dropped from the middle of a stream, the sweep of streams whose time is up; a
//! history longer than one `INSERT` writes.

use super::tests::{follow_now, store_with_a_run, until, until_written};
use super::*;

#[tokio::test]
async fn a_stream_s_end_is_written_only_once_its_run_s_end_is_committed() {
    let (store, conn) = store_with_a_run("end-after-run").await;
    store.record_stream("run_1", 0, "data: a\n\n".into(), false);
    until_written(&store, "data: a\n\n").await;
    // The holder's store failed as it ended: the run is still 'running' (a take-over goes on
    // with it), and the holder's error end must not close the stream.
    store.record_stream("run_1", 0, "data: error\n\ndata: [DONE]\n\n".into(), true);
    let taker = Store::open(
        &format!("sqlite:{}", conn.path().unwrap()),
        StoreOptions::default(),
    )
    .unwrap();
    store.close().await;
    let read = follow_now(&taker, "run_1", 0).await.unwrap();
    assert_eq!(read.state, StreamState::Live);
    assert_eq!(read.text, "data: a\n\n");
    // The take-over records on, and its end goes in once the run's end is committed.
    conn.execute_batch(
        "UPDATE atc_runs SET resumed = 1 WHERE id = 'run_1';
         UPDATE atc_threads SET active_run = 'run_1.1' WHERE id = 't';",
    )
    .unwrap();
    taker.record_stream("run_1", 1, "data: b\n\n".into(), false);
    until_written(&taker, "data: a\n\ndata: b\n\n").await;
    conn.execute_batch("UPDATE atc_runs SET status = 'done', result = '{}' WHERE id = 'run_1'")
        .unwrap();
    taker.record_stream("run_1", 1, "data: [DONE]\n\n".into(), true);
    taker.close().await;
    let read = follow_now(&taker, "run_1", 0).await.unwrap();
    assert_eq!(read.state, StreamState::Done);
    assert_eq!(read.text, "data: a\n\ndata: b\n\ndata: [DONE]\n\n");
}

#[tokio::test]
async fn a_slice_that_cannot_be_written_for_a_while_is_kept_and_written_in_order() {
    let (store, conn) = store_with_a_run("kept").await;
    // The store fails for more than a second (its table is away): more than the three tries a
    // slice had before it was dropped.
    conn.execute_batch("ALTER TABLE atc_stream_chunks RENAME TO atc_away")
        .unwrap();
    store.record_stream("run_1", 0, "data: a\n\n".into(), false);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    store.record_stream("run_1", 0, "data: b\n\n".into(), false);
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    conn.execute_batch("ALTER TABLE atc_away RENAME TO atc_stream_chunks")
        .unwrap();
    until_written(&store, "data: a\n\ndata: b\n\n").await;
    store.record_stream("run_1", 0, "data: c\n\n".into(), false);
    until_written(&store, "data: a\n\ndata: b\n\ndata: c\n\n").await;
    store.close().await;
}

#[tokio::test]
async fn the_last_write_sweeps_the_streams_whose_time_is_up_and_only_those() {
    let (store, conn) = store_with_a_run("sweep").await;
    // Run `old` ended long ago, its stream never ended; run `live` goes on, its stream quiet as
    // long; run `expired`'s stream ended and its retention passed; run `kept`'s has time left.
    conn.execute_batch(
        "INSERT INTO atc_runs (id, thread_id, options, started_at_seq, progress, status, result, resumed, stop_requested, created_at, updated_at) VALUES
           ('old', 't', '{}', 0, '{}', 'done', '{}', 0, 0, 1, 1),
           ('live', 't', '{}', 0, '{}', 'running', '', 0, 0, 1, 1),
           ('expired', 't', '{}', 0, '{}', 'done', '{}', 0, 0, 1, 1),
           ('kept', 't', '{}', 0, '{}', 'done', '{}', 0, 0, 1, 1);
         INSERT INTO atc_streams (run_id, done, expires_at, updated_at) VALUES
           ('old', 0, 0, 1), ('live', 0, 0, 1), ('expired', 1, 2, 1), ('kept', 1, 99999999999999, 1);
         INSERT INTO atc_stream_chunks (run_id, seq, chunks) VALUES
           ('old', 1, 'x'), ('live', 1, 'x'), ('expired', 1, 'x'), ('kept', 1, 'x');
         UPDATE atc_runs SET status = 'done', result = '{}' WHERE id = 'run_1';",
    )
    .unwrap();
    store.record_stream("run_1", 0, "data: [DONE]\n\n".into(), true);
    let left = || -> Vec<String> {
        let mut s = conn
            .prepare("SELECT run_id FROM atc_streams ORDER BY run_id")
            .unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    until("the sweep", || {
        std::future::ready(left() == ["kept", "live", "run_1"])
    })
    .await;
    let chunks: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM atc_stream_chunks WHERE run_id IN ('old', 'expired')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(chunks, 0);
    store.close().await;
}

#[tokio::test]
async fn a_history_longer_than_one_insert_writes_is_stored_whole_and_in_order() {
    let (store, conn) = store_with_a_run("long-history").await;
    let stored = |conn: &rusqlite::Connection| -> Vec<(i64, String)> {
        let mut stmt = conn
            .prepare("SELECT seq, message FROM atc_messages WHERE thread_id = 't' ORDER BY seq")
            .unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.map(Result::unwrap).collect()
    };
    let message = |i: usize| format!(r#"{{"role":"user","content":"m{i}"}}"#);
    let first: Vec<String> = (0..250).map(message).collect();
    let wrote = store
        .write_history(
            "t".into(),
            "run_1.0".into(),
            0,
            first,
            true,
            "{}".into(),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(wrote, Some(vec![]));
    let expected: Vec<(i64, String)> = (0..250).map(|i| (i as i64, message(i))).collect();
    assert_eq!(stored(&conn), expected);
    // Appended at 250, then rewritten from 120 on (a write whose answer was lost): 301 in all.
    let more: Vec<String> = (250..270).map(message).collect();
    store
        .write_history(
            "t".into(),
            "run_1.0".into(),
            250,
            more,
            true,
            "{}".into(),
            vec![],
        )
        .await
        .unwrap();
    let again: Vec<String> = (120..301).map(message).collect();
    store
        .write_history(
            "t".into(),
            "run_1.0".into(),
            120,
            again,
            false,
            "{}".into(),
            vec![],
        )
        .await
        .unwrap();
    let expected: Vec<(i64, String)> = (0..301).map(|i| (i as i64, message(i))).collect();
    assert_eq!(stored(&conn), expected);
}
