//! A run in a thread, as the store sees it: taken (one run per thread, held by a lease), its
//! history written as it grows, and let go with what waits for a person. Every write checks that
//! the run still holds the thread, so a run whose lease ran out writes nothing over another's.

use super::database::{now_ms, random_hex, Store};
use super::run_log;
use super::threads::{find, holds, insert_held, messages, run_of, Held};
use super::tx::{first_row, StoreError, Tx, Val};

/// A thread as a run finds it when it takes it.
pub struct Found {
    /// The stored history, each message as JSON.
    pub messages: Vec<String>,
    /// The calls that wait for a person, a JSON array.
    pub pending: String,
    /// The thread's approval secret.
    pub secret: String,
}

/// What the run does with what it found: its whole history (written over the stored one from
/// the first message that differs) and what now waits (`"[]"`), or why it may not start.
pub type Prepared<E> = Result<(Vec<String>, String), E>;

/// How taking a thread went.
pub enum Taken<E> {
    /// The run holds it; its history and the thread's secret.
    Held {
        history: Vec<String>,
        secret: String,
    },
    /// Another run holds it.
    Busy,
    /// There is no thread of this id that the owner may see (and the id is taken).
    NoSuch,
    /// `prepare` refused: nothing was written.
    Refused(E),
}

/// Writes `messages` as the history's from `at` on. `appends`: the store holds exactly `at`
/// messages, so nothing is deleted first; else whatever it holds from `at` on is replaced.
async fn write_from(
    tx: &mut dyn Tx,
    id: &str,
    at: usize,
    messages: &[String],
    appends: bool,
) -> Result<(), StoreError> {
    if !appends {
        tx.execute(
            "DELETE FROM atc_messages WHERE thread_id = $1 AND seq >= $2",
            &[id.into(), (at as i64).into()],
        )
        .await?;
    }
    append(tx, id, at, messages).await
}

/// Adds `messages` as the history's from `at` on, where it holds none yet.
async fn append(
    tx: &mut dyn Tx,
    id: &str,
    at: usize,
    messages: &[String],
) -> Result<(), StoreError> {
    for (chunk, rows) in messages.chunks(ROWS_PER_INSERT).enumerate() {
        let first = (at + chunk * ROWS_PER_INSERT) as i64;
        let mut vals: Vec<Val> = Vec::with_capacity(1 + 2 * rows.len());
        vals.push(id.into());
        for (i, message) in rows.iter().enumerate() {
            vals.push((first + i as i64).into());
            vals.push(message.as_str().into());
        }
        tx.execute(&insert_messages(rows.len()), &vals).await?;
    }
    Ok(())
}

/// The most messages one `INSERT` writes (a step writes one to three; a history given whole,
/// more): 201 parameters, far under either database's limit.
const ROWS_PER_INSERT: usize = 100;

/// `INSERT` of `rows` messages of one thread (`$1`), each its seq and text.
fn insert_messages(rows: usize) -> String {
    let mut sql = String::from("INSERT INTO atc_messages (thread_id, seq, message) VALUES ");
    for row in 0..rows {
        let n = 2 + 2 * row;
        if row > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!("($1, ${n}, ${})", n + 1));
    }
    sql
}

/// Takes a thread that does not exist yet: made, bound to `owner`, already held by `run` until
/// `lease_until`, in one statement; nothing is written if `prepare` refuses or the id is taken
/// (`Busy` when by a run of the same owner that made it meanwhile, else `NoSuch`).
async fn take_new<E, P>(
    tx: &mut dyn Tx,
    id: &str,
    owner: &str,
    run: &str,
    options: &str,
    lease_until: i64,
    prepare: P,
) -> Result<Taken<E>, StoreError>
where
    P: FnOnce(Found) -> Prepared<E>,
{
    let secret = random_hex(32);
    let (history, pending) = match prepare(Found {
        messages: Vec::new(),
        pending: "[]".to_owned(),
        secret: secret.clone(),
    }) {
        Ok(prepared) => prepared,
        Err(why) => return Ok(Taken::Refused(why)),
    };
    let held = Held {
        run,
        lease_until,
        pending: &pending,
    };
    if !insert_held(tx, id, owner, "{}", &secret, held).await? {
        // Made since `find` looked (PostgreSQL: by a transaction this INSERT waited for): by a
        // run of the same owner, which holds it, or by another owner.
        let same_owner = find(tx, id, owner, false).await?.is_some();
        return Ok(if same_owner {
            Taken::Busy
        } else {
            Taken::NoSuch
        });
    }
    append(tx, id, 0, &history).await?;
    run_log::begin(tx, run_of(run), id, options, history.len(), "").await?;
    Ok(Taken::Held { history, secret })
}

impl Store {
    /// Takes the thread for `run` (making it, bound to `owner`, when the id is new) until
    /// `lease_ms` from now, unless another live run holds it. `prepare` turns what is stored into
    /// the run's history, in the same transaction: a decision it consumes is gone before any
    /// call runs.
    ///
    /// `run` names the holder (see `run_log::holder`); the run's log begins here, with
    /// `options` (JSON, no secret).
    pub async fn take_thread<E, P>(
        &self,
        id: String,
        owner: String,
        run: String,
        options: String,
        lease_ms: i64,
        prepare: P,
    ) -> Result<Taken<E>, StoreError>
    where
        E: Send + 'static,
        P: FnOnce(Found) -> Prepared<E> + Send + 'static,
    {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let now = now_ms();
                if find(tx, &id, &owner, true).await?.is_none() {
                    return take_new(tx, &id, &owner, &run, &options, now + lease_ms, prepare)
                        .await;
                }
                let sql = format!(
                    "SELECT active_run, lease_until, pending, secret FROM atc_threads WHERE id = $1{}",
                    tx.for_update()
                );
                let row = tx.query(&sql, &[id.as_str().into()]).await?;
                let mut next = first_row(row);
                let (active, lease, pending, secret) =
                    (next().into_text(), next().int(), next().into_text(), next().into_text());
                if !active.is_empty() && lease > now {
                    return Ok(Taken::Busy);
                }
                let messages = messages(tx, &id).await?;
                let stored = messages.clone();
                let (history, pending) = match prepare(Found {
                    messages,
                    pending,
                    secret: secret.clone(),
                }) {
                    Ok(prepared) => prepared,
                    Err(why) => return Ok(Taken::Refused(why)),
                };
                let same = stored
                    .iter()
                    .zip(&history)
                    .take_while(|(a, b)| a == b)
                    .count();
                // When the history goes on from all that is stored, nothing is deleted first.
                let appends = same == stored.len();
                write_from(tx, &id, same, &history[same..], appends).await?;
                let superseded = if active.is_empty() { "" } else { active.as_str() };
                run_log::begin(tx, run_of(&run), &id, &options, history.len(), superseded).await?;
                tx.execute(
                    "UPDATE atc_threads SET active_run = $2, lease_until = $3, pending = $4, updated_at = $5 WHERE id = $1",
                    &[id.into(), run.into(), (now + lease_ms).into(), pending.into(), now.into()],
                )
                .await?;
                Ok(Taken::Held { history, secret })
            })
        }))
        .await
    }

    /// Writes the history from message `at` on, if `run` still holds the thread; whether it did.
    /// `appends`: the store holds exactly `at` messages of the history (what the run committed
    /// so far), so nothing is deleted first.
    /// `progress`: how far the run got (JSON), kept in its log; `starting`: the calls that start
    /// right after this step, recorded as started in the same write. `None` when the run no
    /// longer holds the thread, else each starting call's attempt.
    #[allow(clippy::too_many_arguments)]
    pub async fn write_history(
        &self,
        id: String,
        run: String,
        at: usize,
        messages: Vec<String>,
        appends: bool,
        progress: String,
        starting: Vec<String>,
    ) -> Result<Option<Vec<(String, u32)>>, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                if !holds(tx, &id, &run).await? {
                    return Ok(None);
                }
                write_from(tx, &id, at, &messages, appends).await?;
                run_log::note_progress(tx, run_of(&run), &progress).await?;
                let mut attempts = Vec::with_capacity(starting.len());
                for call in starting {
                    let n = super::call_log::started(tx, run_of(&run), &call).await?;
                    attempts.push((call, n));
                }
                Ok(Some(attempts))
            })
        }))
        .await
    }

    /// Moves the lease of `run` on to `lease_ms` from now; whether it still held the thread.
    pub async fn renew_lease(
        &self,
        id: String,
        run: String,
        lease_ms: i64,
    ) -> Result<bool, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                let changed = tx
                    .execute(
                        "UPDATE atc_threads SET lease_until = $3 WHERE id = $1 AND active_run = $2",
                        &[id.into(), run.into(), (now_ms() + lease_ms).into()],
                    )
                    .await?;
                Ok(changed == 1)
            })
        }))
        .await
    }

    /// The run is over: its history from `at` on is written, `pending` (a JSON array) is what
    /// waits for a person, and the thread is let go. `appends`: as for `write_history`.
    /// The run's log ends with `result` (`{ data }` or `{ error }`, JSON).
    #[allow(clippy::too_many_arguments)]
    pub async fn release_thread(
        &self,
        id: String,
        run: String,
        at: usize,
        messages: Vec<String>,
        appends: bool,
        pending: String,
        result: String,
    ) -> Result<bool, StoreError> {
        self.transact(Box::new(move |tx| {
            Box::pin(async move {
                // Let go only if it holds the thread, as every write of a run checks it.
                let held = tx
                    .execute(
                        "UPDATE atc_threads SET active_run = '', lease_until = 0, pending = $3, updated_at = $4 WHERE id = $1 AND active_run = $2",
                        &[id.as_str().into(), run.as_str().into(), pending.into(), now_ms().into()],
                    )
                    .await?;
                if held == 0 {
                    return Ok(false);
                }
                write_from(tx, &id, at, &messages, appends).await?;
                run_log::end(tx, run_of(&run), &result).await?;
                Ok(true)
            })
        }))
        .await
    }
}
