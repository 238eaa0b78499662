use super::*;

fn temp_db(name: &str) -> String {
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
