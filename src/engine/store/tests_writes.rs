//! Tests of a run's stream writes on SQLite files: a stream's end only after its run's end, a
//! slice tried again after a moment.

use super::tests::{follow_now, store_with_a_run, until_written};
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
async fn a_slice_that_could_not_be_written_is_tried_again_after_a_moment() {
    let (store, conn) = store_with_a_run("backoff").await;
    // The store fails for a moment (its table is away), then works again.
    conn.execute_batch("ALTER TABLE atc_stream_chunks RENAME TO atc_away")
        .unwrap();
    store.record_stream("run_1", 0, "data: a\n\n".into(), false);
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    conn.execute_batch("ALTER TABLE atc_away RENAME TO atc_stream_chunks")
        .unwrap();
    until_written(&store, "data: a\n\n").await;
    store.close().await;
}
