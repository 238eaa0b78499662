//! The PostgreSQL backend: a bounded pool (deadpool) of tokio-postgres connections, over TLS
//! (rustls, the Mozilla roots) when the URL asks for it. The tables are made or migrated once per
//! store, at its first operation; a failure there is tried again at the next.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures::future::BoxFuture;
use tokio_postgres::types::{ToSql, Type};

use super::schema;
use super::tx::{Dialect, Tx, Val};
use super::tx::{Op, StoreError};
use crate::engine::error::{source_chain, Chain};

/// How long a connection attempt, or a wait for a free connection, may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Postgres {
    pool: Pool,
    migrated: tokio::sync::Mutex<bool>,
    quoted: Arc<str>,
    password: Option<String>,
    /// How to open a connection of its own, outside the pool (`pg_listen.rs`).
    pub(super) direct: Box<Direct>,
}

/// A connection's settings and its TLS (none without), as the pool's.
pub(super) type Direct = (
    tokio_postgres::Config,
    Option<tokio_postgres_rustls::MakeRustlsConnect>,
);

impl Postgres {
    pub fn new(
        mut config: tokio_postgres::Config,
        tls: bool,
        max: usize,
        quoted: Arc<str>,
    ) -> Result<Postgres, String> {
        config.connect_timeout(CONNECT_TIMEOUT);
        let password = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| !p.is_empty());
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let direct_config = config.clone();
        let mut direct_tls = None;
        let manager = if tls {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS could not be set up ({e})"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
            let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls);
            direct_tls = Some(tls.clone());
            Manager::from_config(config, tls, manager_config)
        } else {
            Manager::from_config(config, tokio_postgres::NoTls, manager_config)
        };
        let pool = Pool::builder(manager)
            .max_size(max)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| format!("its connection pool could not be made ({e})"))?;
        Ok(Postgres {
            pool,
            migrated: tokio::sync::Mutex::new(false),
            quoted,
            password,
            direct: Box::new((direct_config, direct_tls)),
        })
    }

    /// What failed, with the URL and without the password (should the server echo it).
    pub(super) fn failed(&self, what: &str, why: impl std::fmt::Display) -> StoreError {
        let mut text = format!(
            "could not {what} the PostgreSQL store {}: {why}",
            self.quoted
        );
        if let Some(p) = &self.password {
            text = text.replace(p.as_str(), "[redacted]");
        }
        StoreError(text)
    }

    pub async fn transact<T: Send + 'static>(&self, op: Op<T>) -> Result<T, StoreError> {
        {
            let mut migrated = self.migrated.lock().await;
            if !*migrated {
                self.run(Box::new(|tx| Box::pin(schema::migrate(tx))), "set up")
                    .await?;
                *migrated = true;
            }
        }
        self.run(op, "use").await
    }

    async fn run<T: Send + 'static>(&self, op: Op<T>, what: &str) -> Result<T, StoreError> {
        let mut client = self.pool.get().await.map_err(|e| {
            let why = match &e {
                deadpool_postgres::PoolError::Backend(e) => pg_error_text(e),
                other => source_chain(other, Chain::Whole),
            };
            self.failed("reach", why)
        })?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| self.failed(what, e))?;
        let mut held = PgTx { tx };
        let out = op(&mut held).await.map_err(|e| self.failed(what, e))?;
        held.tx.commit().await.map_err(|e| self.failed(what, e))?;
        Ok(out)
    }

    pub fn close(&self) {
        self.pool.close();
    }
}

struct PgTx<'c> {
    tx: deadpool_postgres::Transaction<'c>,
}

fn params(vals: &[Val]) -> Vec<&(dyn ToSql + Sync)> {
    vals.iter()
        .map(|v| match v {
            Val::Int(n) => n as &(dyn ToSql + Sync),
            Val::Text(s) => s as &(dyn ToSql + Sync),
        })
        .collect()
}

impl Tx for PgTx<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn query<'a>(
        &'a mut self,
        sql: &'a str,
        vals: &'a [Val],
    ) -> BoxFuture<'a, Result<Vec<Vec<Val>>, StoreError>> {
        Box::pin(async move {
            let stmt = self.tx.prepare_cached(sql).await.map_err(pg_error)?;
            let rows = self
                .tx
                .query(&stmt, &params(vals))
                .await
                .map_err(pg_error)?;
            let mut out = Vec::with_capacity(rows.len());
            for row in rows {
                let mut vals = Vec::with_capacity(row.len());
                for (i, column) in row.columns().iter().enumerate() {
                    vals.push(match *column.type_() {
                        Type::INT8 => Val::Int(row.try_get(i).map_err(pg_error)?),
                        Type::INT4 => Val::Int(row.try_get::<_, i32>(i).map_err(pg_error)?.into()),
                        Type::TEXT | Type::VARCHAR => Val::Text(row.try_get(i).map_err(pg_error)?),
                        _ => Val::Text(String::new()),
                    });
                }
                out.push(vals);
            }
            Ok(out)
        })
    }

    fn execute<'a>(
        &'a mut self,
        sql: &'a str,
        vals: &'a [Val],
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let stmt = self.tx.prepare_cached(sql).await.map_err(pg_error)?;
            self.tx
                .execute(&stmt, &params(vals))
                .await
                .map_err(pg_error)
        })
    }
}

/// The server's own words where it sent some (`db error` alone says nothing), else the
/// client's with their causes.
fn pg_error(e: tokio_postgres::Error) -> StoreError {
    StoreError(pg_error_text(&e))
}

fn pg_error_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} {}: {}", db.severity(), db.code().code(), db.message()),
        None => source_chain(e, Chain::Whole),
    }
}
