//! What an operation sees of a transaction: statements with positional parameters (`$1`, `$2`
//! …, as PostgreSQL writes them; the SQLite backend reads them as `?1`, `?2`), and rows of
//! integers and texts. No NULLs cross it: the schema uses `''` and `0` for "none", so a
//! parameter's type is never in doubt.

use futures::future::BoxFuture;

/// A value in a row or a parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Val {
    /// A 64-bit integer (`BIGINT`).
    Int(i64),
    /// A text (`TEXT`).
    Text(String),
}

impl Val {
    /// The integer, or 0 for a text.
    pub fn int(&self) -> i64 {
        match self {
            Val::Int(n) => *n,
            Val::Text(_) => 0,
        }
    }

    /// The text, or `""` for an integer.
    pub fn text(&self) -> &str {
        match self {
            Val::Text(s) => s,
            Val::Int(_) => "",
        }
    }

    /// The text, taken.
    pub fn into_text(self) -> String {
        match self {
            Val::Text(s) => s,
            Val::Int(_) => String::new(),
        }
    }
}

/// The first row's values in order, each read once; `Int(0)` past its end or when there is no
/// row (read as `""` or 0, the schema's "none").
pub fn first_row(rows: Vec<Vec<Val>>) -> impl FnMut() -> Val {
    let mut row = rows.into_iter().next().unwrap_or_default().into_iter();
    move || row.next().unwrap_or(Val::Int(0))
}

impl From<&str> for Val {
    fn from(s: &str) -> Val {
        Val::Text(s.to_owned())
    }
}

impl From<String> for Val {
    fn from(s: String) -> Val {
        Val::Text(s)
    }
}

impl From<i64> for Val {
    fn from(n: i64) -> Val {
        Val::Int(n)
    }
}

/// Which database a statement goes to, where their SQL differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// One transaction of either backend.
pub trait Tx: Send {
    /// Which database this is.
    fn dialect(&self) -> Dialect;

    /// Runs a statement that returns rows.
    fn query<'a>(
        &'a mut self,
        sql: &'a str,
        params: &'a [Val],
    ) -> BoxFuture<'a, Result<Vec<Vec<Val>>, StoreError>>;

    /// Runs a statement; how many rows it changed.
    fn execute<'a>(
        &'a mut self,
        sql: &'a str,
        params: &'a [Val],
    ) -> BoxFuture<'a, Result<u64, StoreError>>;
}

impl dyn Tx + '_ {
    /// ` FOR UPDATE` where the database locks rows so (PostgreSQL); SQLite's write
    /// transaction already holds the whole file.
    pub fn for_update(&self) -> &'static str {
        match self.dialect() {
            Dialect::Postgres => " FOR UPDATE",
            Dialect::Sqlite => "",
        }
    }
}

/// Why a store operation could not be done: what failed, with the URL quoted without its
/// password. Becomes `store_unavailable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One operation: given a transaction, does its work. Written once for both backends.
pub type Op<T> =
    Box<dyn for<'t> FnOnce(&'t mut dyn Tx) -> BoxFuture<'t, Result<T, StoreError>> + Send>;
