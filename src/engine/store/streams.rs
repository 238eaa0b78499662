//! What a store keeps of its runs' streams in this process (`stream_log.rs` takes and follows
//! them, `stream_write.rs` writes them): each run's writer, the writer tasks, and the signal
//! its followers wait on.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

/// What a run's writer is handed: a slice's text, and whether it is the stream's last.
pub(super) type Handed = (String, bool);

/// How long a finished run's stream is kept by default: a late reload still gets all of it.
pub const DEFAULT_STREAM_RETENTION_MS: i64 = 10 * 60 * 1000;

/// How long closing a store waits for its writers.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What a store keeps of its streams in this process: each run's writer, and the signal its
/// followers wait on.
pub struct Streams {
    /// How long a finished run's stream is kept.
    pub(super) retention_ms: i64,
    /// Moved on by every write here, and by every notification from another process.
    pub(super) wake: watch::Sender<u64>,
    /// Each run's writer, by run id and holder generation, while its stream is not over.
    pub(super) writers: Mutex<HashMap<(String, u32), mpsc::UnboundedSender<Handed>>>,
    /// The PostgreSQL connection that listens for other processes' writes, once a follower waits.
    pub(super) listener: tokio::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The writer tasks, which `close` lets finish.
    pub(super) tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Streams {
    /// Nothing written or followed yet.
    pub fn new(retention_ms: i64) -> Streams {
        Streams {
            retention_ms,
            wake: watch::channel(0).0,
            writers: Mutex::new(HashMap::new()),
            listener: tokio::sync::Mutex::new(None),
            tasks: Mutex::new(Vec::new()),
        }
    }

    /// Wakes every follower in this process.
    pub(super) fn wake(&self) {
        self.wake.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Lets every writer write what it was given (for up to [`CLOSE_WAIT`]), and ends the
    /// listening connection: the store is being closed.
    pub async fn close(&self) {
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        let _ = tokio::time::timeout(CLOSE_WAIT, futures::future::join_all(tasks)).await;
        if let Some(task) = self.listener.lock().await.take() {
            task.abort();
        }
    }
}
