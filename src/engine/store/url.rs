//! The store's URL: `sqlite:<path>` (`sqlite::memory:` for a store that lives as long as the
//! process) or `postgres://…` / `postgresql://…` (libpq's URL form). Anything else is refused
//! before anything connects. A URL is quoted in messages without its password or query.

use std::path::PathBuf;
use std::str::FromStr;

/// A parsed store URL.
pub enum StoreUrl {
    /// A SQLite file (`None`: in memory).
    Sqlite(Option<PathBuf>),
    /// A PostgreSQL server.
    Postgres {
        /// The connection settings.
        config: Box<tokio_postgres::Config>,
        /// The URL asks for TLS (`sslmode=require`, `verify-ca` or `verify-full`).
        tls: bool,
        /// How messages quote it.
        quoted: String,
    },
}

/// The longest URL taken: a longer one is a mistake (or an attack on the messages quoting it).
const MAX_URL: usize = 4096;

impl StoreUrl {
    /// Reads `url`; an `Err` says what is wrong with it (without echoing a password).
    pub fn parse(url: &str) -> Result<StoreUrl, String> {
        if url.len() > MAX_URL {
            return Err(format!("the URL is longer than {MAX_URL} bytes"));
        }
        if let Some(rest) = url.strip_prefix("sqlite:") {
            return sqlite(rest);
        }
        let scheme = url.split_once("://").map(|(s, _)| s);
        match scheme {
            Some("postgres" | "postgresql") => postgres(url),
            _ => Err(format!(
                "\"{}\" is not a store URL: use \"sqlite:<path>\", \"sqlite::memory:\" or \"postgres://user:password@host:5432/database\"",
                quote_scheme(url)
            )),
        }
    }

    /// How messages quote this URL.
    pub fn quoted(&self) -> String {
        match self {
            StoreUrl::Sqlite(None) => "sqlite::memory:".into(),
            StoreUrl::Sqlite(Some(path)) => format!("sqlite:{}", path.display()),
            StoreUrl::Postgres { quoted, .. } => quoted.clone(),
        }
    }
}

fn sqlite(rest: &str) -> Result<StoreUrl, String> {
    if rest == ":memory:" {
        return Ok(StoreUrl::Sqlite(None));
    }
    // `sqlite:///abs/path` and `sqlite://./rel` are read as the path after the slashes.
    let path = rest.strip_prefix("//").unwrap_or(rest);
    if path.is_empty() {
        return Err("\"sqlite:\" needs a file path, as in \"sqlite:./data/agent.db\"".into());
    }
    if path.contains('\0') || path.contains('?') {
        return Err(
            "a SQLite path may hold neither a NUL nor a '?' (no query options are taken)".into(),
        );
    }
    Ok(StoreUrl::Sqlite(Some(PathBuf::from(path))))
}

fn postgres(url: &str) -> Result<StoreUrl, String> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut tls = false;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == "sslmode" {
            match value {
                "disable" | "prefer" | "allow" => tls = false,
                "require" | "verify-ca" | "verify-full" => tls = true,
                other => {
                    return Err(format!(
                    "sslmode \"{}\" is not one of disable, prefer, require, verify-ca, verify-full",
                    cut(other)
                ))
                }
            }
        } else {
            kept.push(pair);
        }
    }
    let rewritten = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let mut config = tokio_postgres::Config::from_str(&rewritten)
        .map_err(|e| format!("\"{}\" is not a PostgreSQL URL ({e})", quote_postgres(url)))?;
    if config.get_hosts().is_empty() {
        return Err(format!("\"{}\" names no host", quote_postgres(url)));
    }
    if config.get_dbname().is_none() {
        if let Some(user) = config.get_user().map(str::to_owned) {
            config.dbname(&user);
        }
    }
    config.application_name("anthropic-tool-calling");
    Ok(StoreUrl::Postgres {
        config: Box::new(config),
        tls,
        quoted: quote_postgres(url),
    })
}

/// A PostgreSQL URL without its password and query: `postgres://user@host:5432/db`.
fn quote_postgres(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let host = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{user}@{host}")
        }
        None => authority.to_owned(),
    };
    cut(&format!("{scheme}://{host}{path}"))
}

/// The scheme of an unknown URL, and no more of it: the rest may hold a password.
fn quote_scheme(url: &str) -> String {
    match url.split_once(':') {
        Some((scheme, _)) => format!("{}:…", cut(scheme)),
        None => "(no scheme)".into(),
    }
}

fn cut(s: &str) -> String {
    if s.chars().count() <= 200 {
        s.to_owned()
    } else {
        s.chars().take(200).chain(['…']).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_forms() {
        assert!(matches!(
            StoreUrl::parse("sqlite::memory:"),
            Ok(StoreUrl::Sqlite(None))
        ));
        let Ok(StoreUrl::Sqlite(Some(p))) = StoreUrl::parse("sqlite:./data/a.db") else {
            panic!()
        };
        assert_eq!(p, PathBuf::from("./data/a.db"));
        let Ok(StoreUrl::Sqlite(Some(p))) = StoreUrl::parse("sqlite:///tmp/a.db") else {
            panic!()
        };
        assert_eq!(p, PathBuf::from("/tmp/a.db"));
        assert!(StoreUrl::parse("sqlite:").is_err());
        assert!(StoreUrl::parse("sqlite:a.db?mode=ro").is_err());
    }

    #[test]
    fn postgres_is_quoted_without_password_or_query() {
        let url =
            "postgres://app:s3cret@db.internal:5433/agents?sslmode=require&options=-c%20x%3Dy";
        let parsed = StoreUrl::parse(url).ok().unwrap();
        assert_eq!(parsed.quoted(), "postgres://app@db.internal:5433/agents");
        let StoreUrl::Postgres { tls, .. } = parsed else {
            panic!()
        };
        assert!(tls);
        assert!(StoreUrl::parse("postgres://a:b@h/d?sslmode=bogus").is_err());
        let err = StoreUrl::parse("mysql://root:hunter2@h/d").err().unwrap();
        assert!(!err.contains("hunter2"), "{err}");
        let err = StoreUrl::parse("postgres://u:hunter2@h:notaport/d")
            .err()
            .unwrap();
        assert!(!err.contains("hunter2"), "{err}");
    }
}
