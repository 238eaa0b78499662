//! PostgreSQL's `LISTEN`: one connection of the store's own, outside its pool, that hears the
//! `NOTIFY` each write of a run's stream sends (`stream_log.rs`), in this process or another, and
//! wakes the followers waiting here.

use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client, Connection};

use super::postgres::Postgres;
use super::tx::StoreError;

/// Connects and listens; the task that reads the connection until it fails or is aborted.
pub(super) async fn listen(
    pg: &Postgres,
    wake: watch::Sender<u64>,
) -> Result<JoinHandle<()>, StoreError> {
    let (config, tls) = &*pg.direct;
    let connected = match tls {
        Some(tls) => config
            .connect(tls.clone())
            .await
            .map(|(client, conn)| hear(client, conn, wake)),
        None => config
            .connect(tokio_postgres::NoTls)
            .await
            .map(|(client, conn)| hear(client, conn, wake)),
    };
    let (client, task) = connected.map_err(|e| pg.failed("listen on", e))?;
    if let Err(e) = client.batch_execute("LISTEN atc_streams").await {
        task.abort();
        return Err(pg.failed("listen on", e));
    }
    // The connection lasts as long as its client: aborting this task drops it, which ends it.
    Ok(tokio::spawn(async move {
        let _client = client;
        let _ = task.await;
    }))
}

/// Drives `conn`, waking the followers at each notification; the client is kept with it.
fn hear<S, T>(
    client: Client,
    mut conn: Connection<S, T>,
    wake: watch::Sender<u64>,
) -> (Client, JoinHandle<()>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let task = tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(_) = message {
                wake.send_modify(|n| *n = n.wrapping_add(1));
            }
        }
    });
    (client, task)
}
