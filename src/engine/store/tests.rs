use super::*;

/// Ends run `run_1` in its log: a stream's end is written only after its run's.
pub(super) const DONE: &str =
    "UPDATE atc_runs SET status = 'done', result = '{}' WHERE id = 'run_1'";

pub(super) fn temp_db(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("atc-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    format!("sqlite:{}", dir.join("store.db").display())
}

#[tokio::test]
async fn a_sqlite_store_is_made_once_and_a_newer_one_is_refused_unaltered() {
    let url = temp_db("newer");
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    assert!(store
        .insert_thread("t".into(), "".into(), "{}".into())
        .await
        .unwrap());
    // Opened again (a second process): the tables are there, the thread too.
    let again = Store::open(&url, StoreOptions::default()).unwrap();
    assert!(again
        .get_thread("t".into(), "".into())
        .await
        .unwrap()
        .is_some());
    store.close().await;
    again.close().await;
    let path = url.strip_prefix("sqlite:").unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute("UPDATE atc_schema SET version = 99", [])
        .unwrap();
    drop(conn);
    let newer = Store::open(&url, StoreOptions::default()).unwrap();
    let err = newer.list_threads("".into(), 10, None).await.unwrap_err();
    assert!(
        err.0.contains("version 99, newer than this package knows"),
        "{err}"
    );
    let conn = rusqlite::Connection::open(path).unwrap();
    let version: i64 = conn
        .query_row("SELECT version FROM atc_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 99);
}

#[tokio::test]
async fn a_thread_is_seen_only_by_its_owner() {
    let store = Store::open("sqlite::memory:", StoreOptions::default()).unwrap();
    assert!(store
        .insert_thread("t".into(), "alice".into(), "{}".into())
        .await
        .unwrap());
    assert!(!store
        .insert_thread("t".into(), "bob".into(), "{}".into())
        .await
        .unwrap());
    assert!(store
        .get_thread("t".into(), "bob".into())
        .await
        .unwrap()
        .is_none());
    assert!(store
        .get_thread("t".into(), "".into())
        .await
        .unwrap()
        .is_none());
    assert!(!store.delete_thread("t".into(), "bob".into()).await.unwrap());
    let t = store
        .get_thread("t".into(), "alice".into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((t.status, t.pending.as_str()), ("idle", "[]"));
}

/// Many runs' operations at once are committed in groups, each in a savepoint of its own: one
/// that fails or panics is rolled back alone and told so; every other one is kept and told so
/// only after its group committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_committed_together_fail_alone() {
    let store = Store::open(&temp_db("groups"), StoreOptions::default()).unwrap();
    let write = |i: usize| -> tx::Op<usize> {
        Box::new(move |tx| {
            Box::pin(async move {
                if i == 0 {
                    // The first holds the file while the others queue up behind it.
                    std::thread::sleep(std::time::Duration::from_millis(200));
                }
                let sql = "INSERT INTO atc_threads (id, owner, metadata, status, active_run, lease_until, pending, secret, created_at, updated_at) VALUES ($1, '', '{}', 'idle', '', 0, '[]', '', 0, 0)";
                tx.execute(sql, &[format!("t{i}").into()]).await?;
                match i {
                    50 => Err(tx::StoreError("refused by the test".into())),
                    51 => panic!("a panic in an operation"),
                    _ => Ok(i),
                }
            })
        })
    };
    let first = {
        let store = store.clone();
        tokio::spawn(async move { store.transact(write(0)).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let rest: Vec<_> = (1..200)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.transact(write(i)).await })
        })
        .collect();
    assert_eq!(first.await.unwrap(), Ok(0));
    for (i, done) in (1..200).zip(rest) {
        let got = done.await.unwrap();
        match i {
            50 => assert!(got.unwrap_err().0.ends_with("refused by the test")),
            51 => assert!(got.unwrap_err().0.contains("panicked")),
            _ => assert_eq!(got, Ok(i)),
        }
    }
    let count: tx::Op<Vec<Vec<tx::Val>>> = Box::new(|tx| {
        Box::pin(async move {
            tx.query("SELECT id FROM atc_threads ORDER BY id", &[])
                .await
        })
    });
    let ids: Vec<String> = store
        .transact(count)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r[0].text().to_owned())
        .collect();
    assert_eq!(ids.len(), 198);
    assert!(!ids.contains(&"t50".to_owned()) && !ids.contains(&"t51".to_owned()));
    assert_eq!(
        store.sqlite_commits(),
        Some(3),
        "one for the first, one for the 199 behind it, one for the count"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_2_store_is_migrated_and_a_run_s_stream_is_written_in_slices_and_followed() {
    let url = temp_db("v2");
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    assert!(store
        .insert_thread("t".into(), "alice".into(), "{}".into())
        .await
        .unwrap());
    store.close().await;
    // The store as version 2 left it, with a run holding the thread.
    let path = url.strip_prefix("sqlite:").unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "DROP TABLE atc_streams; DROP TABLE atc_stream_chunks; UPDATE atc_schema SET version = 2;
         INSERT INTO atc_runs (id, thread_id, options, started_at_seq, progress, status, result, resumed, stop_requested, created_at, updated_at)
           VALUES ('run_1', 't', '{}', 0, '{}', 'running', '', 0, 0, 0, 0);
         UPDATE atc_threads SET active_run = 'run_1.0', lease_until = 9999999999999 WHERE id = 't';",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    let follow = |owner: &str, after: i64, ms: u64| {
        store.follow_stream(
            "run_1".into(),
            owner.into(),
            after,
            std::time::Duration::from_millis(ms),
        )
    };
    assert_eq!(
        follow("alice", 0, 0).await.unwrap().state,
        StreamState::Missing
    );
    let conn = rusqlite::Connection::open(path).unwrap();
    let version: i64 = conn
        .query_row("SELECT version FROM atc_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 3);
    assert_eq!(
        store.running_run("t".into(), "alice".into()).await.unwrap(),
        Some("run_1".to_owned())
    );
    assert_eq!(
        store.running_run("t".into(), "bob".into()).await.unwrap(),
        None
    );
    let mut sent = String::new();
    for i in 0..200 {
        let text = format!("data: {i}\n\n");
        sent.push_str(&text);
        store.record_stream("run_1", 0, text, false);
    }
    // A follower that waits is woken by the write (the stream's row is made by the writer's
    // first write, which may commit after a follower's first look).
    let mut first = follow("alice", 0, 5_000).await.unwrap();
    for _ in 0..100 {
        if first.state != StreamState::Missing {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        first = follow("alice", 0, 5_000).await.unwrap();
    }
    assert_eq!(first.state, StreamState::Live);
    assert!(!first.text.is_empty());
    conn.execute_batch(DONE).unwrap();
    store.record_stream("run_1", 0, "data: [DONE]\n\n".into(), true);
    sent.push_str("data: [DONE]\n\n");
    let mut got = first.text.clone();
    let mut at = first.seq;
    loop {
        let read = follow("alice", at, 5_000).await.unwrap();
        got.push_str(&read.text);
        at = read.seq;
        if read.state == StreamState::Done {
            break;
        }
    }
    assert_eq!(got, sent);
    assert!(at <= 4, "{at} writes for 201 slices of text");
    // Another owner sees none.
    assert_eq!(
        follow("bob", 0, 0).await.unwrap().state,
        StreamState::Missing
    );
    store.close().await;
}

/// Run `run`'s stream after slice `after`, for alice, without waiting.
pub(super) async fn follow_now(s: &Store, run: &str, after: i64) -> Result<StreamRead, StoreError> {
    s.follow_stream(
        run.into(),
        "alice".into(),
        after,
        std::time::Duration::from_millis(0),
    )
    .await
}

#[tokio::test]
async fn a_stream_taken_over_is_numbered_on_an_orphan_is_followed_and_a_stream_over_takes_no_more()
{
    let url = temp_db("takeover");
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    assert!(store
        .insert_thread("t".into(), "alice".into(), "{}".into())
        .await
        .unwrap());
    // Run 1 holds the thread with a lease that ran out (its process stopped); run 2 ended.
    let path = url.strip_prefix("sqlite:").unwrap().to_owned();
    let conn = rusqlite::Connection::open(&path).unwrap();
    // Runs 2 and 3 ended where nobody wrote their stream's end: run 2 seconds ago, run 3 longer
    // ago than the streams' retention.
    let recent = super::database::now_ms() - 10_000;
    conn.execute_batch(&format!(
        "INSERT INTO atc_runs (id, thread_id, options, started_at_seq, progress, status, result, resumed, stop_requested, created_at, updated_at)
           VALUES ('run_1', 't', '{{}}', 0, '{{}}', 'running', '', 0, 0, 0, 0),
                  ('run_2', 't', '{{}}', 0, '{{}}', 'done', '', 0, 0, 0, {recent}),
                  ('run_3', 't', '{{}}', 0, '{{}}', 'done', '', 0, 0, 0, 0);
         UPDATE atc_threads SET active_run = 'run_1.0', lease_until = 1 WHERE id = 't';
         INSERT INTO atc_streams (run_id, done, expires_at, updated_at) VALUES ('run_2', 0, 0, {recent}), ('run_3', 0, 0, 0);
         INSERT INTO atc_stream_chunks (run_id, seq, chunks) VALUES ('run_2', 1, 'data: cut\n\n'), ('run_3', 1, 'data: old\n\n');",
    ))
    .unwrap();
    assert_eq!(
        follow_now(&store, "run_3", 0).await.unwrap().text,
        "data: old\n\n"
    );
    store.record_stream("run_1", 0, "data: a\n\n".into(), false);
    let mut read = follow_now(&store, "run_1", 0).await.unwrap();
    for _ in 0..200 {
        if !read.text.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        read = follow_now(&store, "run_1", 0).await.unwrap();
    }
    // Nobody holds the run, and it has not ended: it is still in progress.
    assert_eq!(read.state, StreamState::Live);
    assert_eq!((read.text.as_str(), read.seq), ("data: a\n\n", 1));
    assert_eq!(
        store.running_run("t".into(), "alice".into()).await.unwrap(),
        Some("run_1".to_owned())
    );
    assert!(store.stream_open("run_1".into()).await.unwrap());
    let hold = store.stream_state("run_1".into()).await.unwrap().unwrap();
    assert_eq!(hold.sent.as_deref(), Some("data: a\n\n"));
    // Another process takes it over and records on: its slices come after, numbered on.
    let taker = Store::open(&url, StoreOptions::default()).unwrap();
    taker.record_stream("run_1", 0, "data: b\n\n".into(), false);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    conn.execute_batch(DONE).unwrap();
    taker.record_stream("run_1", 0, "data: [DONE]\n\n".into(), true);
    taker.close().await;
    let read = follow_now(&store, "run_1", 0).await.unwrap();
    assert_eq!(read.state, StreamState::Done);
    assert_eq!(read.text, "data: a\n\ndata: b\n\ndata: [DONE]\n\n");
    assert_eq!(read.seq, 3);
    assert_eq!(
        follow_now(&store, "run_1", 1).await.unwrap().text,
        "data: b\n\ndata: [DONE]\n\n"
    );
    assert!(!store.stream_open("run_1".into()).await.unwrap());
    // A stream that is over takes no more (a holder that lost its lease writes late).
    store.record_stream("run_1", 0, "data: late\n\n".into(), false);
    store.close().await;
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    assert_eq!(follow_now(&store, "run_1", 0).await.unwrap().seq, 3);
    // A run that ended where nobody wrote its stream's end: its followers end.
    let read = follow_now(&store, "run_2", 0).await.unwrap();
    assert_eq!(
        (read.state, read.text.as_str()),
        (StreamState::Done, "data: cut\n\n")
    );
    // Such a stream is dropped with the others whose time is up, once its run ended longer
    // than the retention ago (run_1's last slice swept it).
    let read = follow_now(&store, "run_3", 0).await.unwrap();
    assert_eq!((read.state, read.text.as_str()), (StreamState::Missing, ""));
    store.close().await;
}

/// A store with thread `t` and run `run_1` holding it (generation 0), and a connection to its
/// file for what a test does behind its back.
pub(super) async fn store_with_a_run(name: &str) -> (Store, rusqlite::Connection) {
    let url = temp_db(name);
    let store = Store::open(&url, StoreOptions::default()).unwrap();
    assert!(store
        .insert_thread("t".into(), "alice".into(), "{}".into())
        .await
        .unwrap());
    let conn = rusqlite::Connection::open(url.strip_prefix("sqlite:").unwrap()).unwrap();
    conn.execute_batch(
        "INSERT INTO atc_runs (id, thread_id, options, started_at_seq, progress, status, result, resumed, stop_requested, created_at, updated_at)
           VALUES ('run_1', 't', '{}', 0, '{}', 'running', '', 0, 0, 0, 0);
         UPDATE atc_threads SET active_run = 'run_1.0', lease_until = 9999999999999 WHERE id = 't';",
    )
    .unwrap();
    (store, conn)
}

/// Waits until `check` holds (10 ms at a time, 3 s at most).
pub(super) async fn until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..300 {
        if check().await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("never: {what}");
}

/// Waits until run `run_1`'s stream holds `text`.
pub(super) async fn until_written(store: &Store, text: &str) {
    let what = format!("the stream holds {text:?}");
    until(&what, || async {
        follow_now(store, "run_1", 0).await.unwrap().text == text
    })
    .await;
}

#[tokio::test]
async fn a_holder_whose_run_was_taken_over_writes_nothing_more_not_even_its_end() {
    let (store, conn) = store_with_a_run("fenced").await;
    store.record_stream("run_1", 0, "data: a\n\n".into(), false);
    until_written(&store, "data: a\n\n").await;
    // Another process takes the run over (its generation moves on) while this one still runs.
    conn.execute_batch(
        "UPDATE atc_runs SET resumed = 1 WHERE id = 'run_1';
         UPDATE atc_threads SET active_run = 'run_1.1' WHERE id = 't';",
    )
    .unwrap();
    store.record_stream("run_1", 0, "data: stale\n\n".into(), false);
    store.record_stream(
        "run_1",
        0,
        "data: lost hold\n\ndata: [DONE]\n\n".into(),
        true,
    );
    let taker = Store::open(
        &format!("sqlite:{}", conn.path().unwrap()),
        StoreOptions::default(),
    )
    .unwrap();
    taker.record_stream("run_1", 1, "data: b\n\n".into(), false);
    until_written(&store, "data: a\n\ndata: b\n\n").await;
    conn.execute_batch(DONE).unwrap();
    taker.record_stream("run_1", 1, "data: [DONE]\n\n".into(), true);
    taker.close().await;
    store.close().await;
    let read = follow_now(&taker, "run_1", 0).await.unwrap();
    assert_eq!(read.state, StreamState::Done);
    assert_eq!(read.text, "data: a\n\ndata: b\n\ndata: [DONE]\n\n");
    assert_eq!(read.seq, 3);
}
