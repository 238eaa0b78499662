//! Google Application Default Credentials, looked for in Google's order: the JSON file named by
//! `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's `application_default_credentials.json` (under
//! `CLOUDSDK_CONFIG`, else `~/.config/gcloud`), else the metadata server (`GCE_METADATA_HOST`,
//! `GCE_METADATA_IP`, else 169.254.169.254; `METADATA_SERVER_DETECTION=none` skips it). A file
//! is a service account's key (its signed JWT exchanged at its `token_uri`), gcloud's user
//! credentials (the refresh token exchanged), an external account (another identity's token
//! exchanged at Google's Security Token Service, `google_adc/external.rs`) or an impersonated
//! service account (its source credentials' token traded for the service account's,
//! `google_adc/impersonate.rs`); the exchanges are `google_adc/exchange.rs`'s.
//!
//! The variables are the ones the JS layer read at call time, never the process's own. Tokens
//! are kept for the process, per credentials, until shortly before they expire.

pub mod exchange;
pub mod external;
pub mod impersonate;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use serde::Deserialize;

use crate::engine::error::RunError;
use crate::engine::wire::access_token::AccessToken;

/// The environment variables the lookup reads.
pub const VARS: &[&str] = &[
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
    "HOME",
    "APPDATA",
    "GCE_METADATA_HOST",
    "GCE_METADATA_IP",
    "METADATA_SERVER_DETECTION",
];

/// The file gcloud writes with `gcloud auth application-default login`.
const WELL_KNOWN: &str = "application_default_credentials.json";

/// A credentials file as Google writes it (the fields of the kinds read here). Never printed:
/// it holds a private key or a refresh token.
#[derive(Deserialize, Default)]
pub struct KeyFile {
    /// `service_account`, `authorized_user`, `external_account`, …
    #[serde(rename = "type", default)]
    pub kind: String,
    /// A service account's project.
    pub project_id: Option<String>,
    /// A user's quota project.
    pub quota_project_id: Option<String>,
    /// A service account's email (the JWT's issuer).
    pub client_email: Option<String>,
    /// A service account's private key (PKCS#8 PEM).
    pub private_key: Option<String>,
    /// Where the JWT or the refresh token is exchanged.
    pub token_uri: Option<String>,
    /// A user's OAuth client.
    pub client_id: Option<String>,
    /// A user's OAuth client secret.
    pub client_secret: Option<String>,
    /// A user's refresh token.
    pub refresh_token: Option<String>,
    /// An external account's fields (and the impersonation URL of an impersonated account).
    #[serde(flatten)]
    pub external: external::External,
    /// An impersonated service account's own credentials (a user's, a key's, an external account's).
    pub source_credentials: Option<Box<KeyFile>>,
    /// An impersonated service account's delegation chain.
    #[serde(default)]
    pub delegates: Vec<String>,
}

impl KeyFile {
    /// `text` without the secrets in it (the private key, each line of it included, the client
    /// secret, the refresh token): what a token endpoint says back may quote them.
    fn redact(&self, text: &str) -> String {
        let mut secrets = Vec::new();
        self.secrets(&mut secrets);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let mut text = text.to_owned();
        for secret in secrets.iter().filter(|s| !s.is_empty()) {
            text = text.replace(secret, "[redacted]");
        }
        text
    }

    /// This file's secrets and its source credentials'.
    fn secrets<'a>(&'a self, into: &mut Vec<&'a str>) {
        let key_lines = self.private_key.iter().flat_map(|k| k.lines());
        into.extend(
            [&self.private_key, &self.client_secret, &self.refresh_token]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .chain(key_lines.filter(|l| l.len() >= 16)),
        );
        if let Some(source) = &self.source_credentials {
            source.secrets(into);
        }
    }
}

/// Where a run looks for Application Default Credentials: the variables it was given.
#[derive(Clone, Debug, Default)]
pub struct GoogleAdc {
    vars: BTreeMap<&'static str, String>,
}

type Cache = Mutex<HashMap<String, (AccessToken, SystemTime)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::default)
}

/// What the lookup found.
enum Found {
    File(PathBuf, Box<KeyFile>),
    Metadata(String),
}

impl GoogleAdc {
    /// A lookup with these variables (`var(name)`: its value, if set and not empty).
    pub fn new(var: impl Fn(&str) -> Option<String>) -> Self {
        let vars = VARS
            .iter()
            .filter_map(|name| var(name).map(|v| (*name, v)))
            .filter(|(_, v)| !v.trim().is_empty())
            .collect();
        GoogleAdc { vars }
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// gcloud's file: under `CLOUDSDK_CONFIG`, else `~/.config/gcloud` (`%APPDATA%\gcloud`).
    fn well_known(&self) -> Option<PathBuf> {
        if let Some(dir) = self.var("CLOUDSDK_CONFIG") {
            return Some(PathBuf::from(dir).join(WELL_KNOWN));
        }
        if cfg!(windows) {
            return self
                .var("APPDATA")
                .map(|d| PathBuf::from(d).join("gcloud").join(WELL_KNOWN));
        }
        self.var("HOME")
            .map(|h| PathBuf::from(h).join(".config/gcloud").join(WELL_KNOWN))
    }

    /// The metadata server's host, or `None` when it is not to be asked.
    fn metadata_host(&self) -> Option<String> {
        if self
            .var("METADATA_SERVER_DETECTION")
            .is_some_and(|v| v.eq_ignore_ascii_case("none"))
        {
            return None;
        }
        let host = self
            .var("GCE_METADATA_HOST")
            .or_else(|| self.var("GCE_METADATA_IP"))
            .unwrap_or("169.254.169.254");
        Some(host.to_owned())
    }

    /// Where the lookup goes, in its order, as an error message says it.
    pub fn looked(&self) -> String {
        let file = match self.var("GOOGLE_APPLICATION_CREDENTIALS") {
            Some(path) => format!("GOOGLE_APPLICATION_CREDENTIALS ({path:?})"),
            None => "GOOGLE_APPLICATION_CREDENTIALS (not set)".to_owned(),
        };
        let known = match self.well_known() {
            Some(path) => format!("gcloud's {}", path.display()),
            None => "gcloud's application_default_credentials.json (no CLOUDSDK_CONFIG or HOME)"
                .to_owned(),
        };
        let metadata = match self.metadata_host() {
            Some(host) => format!("the metadata server at {host}"),
            None => "the metadata server (skipped: METADATA_SERVER_DETECTION=none)".to_owned(),
        };
        format!("{file}, {known}, {metadata}")
    }

    /// The credentials file in Google's order, if there is one; an error when
    /// `GOOGLE_APPLICATION_CREDENTIALS` names a file that cannot be read as one.
    fn file(&self) -> Result<Option<(PathBuf, KeyFile)>, String> {
        let (path, named) = match self.var("GOOGLE_APPLICATION_CREDENTIALS") {
            Some(path) => (PathBuf::from(path), true),
            None => match self.well_known() {
                Some(path) if path.is_file() => (path, false),
                _ => return Ok(None),
            },
        };
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| {
            let by = if named {
                " (GOOGLE_APPLICATION_CREDENTIALS)"
            } else {
                ""
            };
            format!("{shown}{by} could not be read: {e}")
        })?;
        // serde's message may quote the text it choked on: it is not passed on.
        let key: KeyFile = serde_json::from_str(&text)
            .map_err(|_| format!("{shown} is not a Google credentials JSON file"))?;
        Ok(Some((path, key)))
    }

    /// The project of the credentials file (a service account's `project_id`, a user's
    /// `quota_project_id`), read from the file only; `None` without one.
    pub fn project(&self) -> Option<String> {
        let (_, key) = self.file().ok()??;
        let own = key.project_id.or(key.quota_project_id);
        own.or_else(|| {
            let source = key.source_credentials?;
            source.project_id.or(source.quota_project_id)
        })
    }

    fn found(&self) -> Result<Option<Found>, String> {
        if let Some((path, key)) = self.file()? {
            return Ok(Some(Found::File(path, Box::new(key))));
        }
        Ok(self.metadata_host().map(Found::Metadata))
    }

    /// An access token (scope `cloud-platform`) for `platform` (as messages name it): a kept one
    /// while fresh, else one fetched now; `authentication_error` saying where the credentials
    /// were looked for (`before`: where the run looked first) when there are none or the
    /// exchange failed. Nothing is sent then.
    pub async fn token(&self, platform: &str, before: &str) -> Result<AccessToken, RunError> {
        let failed = |said: &str| {
            RunError::no_google_credentials(platform, &format!("{before}{}", self.looked()), said)
        };
        let found = self.found().map_err(|why| failed(&why))?;
        let Some(found) = found else {
            return Err(failed("none was found"));
        };
        let key = match &found {
            Found::File(path, key) => format!(
                "file:{}:{}",
                path.display(),
                key.client_email
                    .as_deref()
                    .or(key.client_id.as_deref())
                    .unwrap_or("")
            ),
            Found::Metadata(host) => format!("metadata:{host}"),
        };
        let now = SystemTime::now();
        let kept = cache().lock().ok().and_then(|c| c.get(&key).cloned());
        if let Some((token, _)) = kept.filter(|(t, at)| t.fresh(*at, now)) {
            return Ok(token);
        }
        let fetched = match &found {
            Found::File(path, file) => {
                let shown = path.display().to_string();
                let said = match file.kind.as_str() {
                    "impersonated_service_account" => impersonated(file).await,
                    _ => own_token(file).await,
                };
                said.map_err(|why| failed(&file.redact(&format!("{shown}: {why}"))))
            }
            Found::Metadata(host) => exchange::metadata(host).await.map_err(|why| failed(&why)),
        }?;
        if let Ok(mut c) = cache().lock() {
            c.insert(key, (fetched.clone(), now));
        }
        Ok(fetched)
    }

    /// Forgets the kept tokens (the platform refused one; the next request fetches anew).
    pub fn forget(&self) {
        if let Ok(mut c) = cache().lock() {
            c.clear();
        }
    }
}

/// The token of a file that is not an impersonation.
async fn own_token(file: &KeyFile) -> Result<AccessToken, String> {
    match file.kind.as_str() {
        "service_account" => exchange::service_account(file).await,
        "authorized_user" => exchange::authorized_user(file).await,
        "external_account" => external::external_account(&file.external).await,
        other => Err(format!("its type {other:?} is not one read here (service_account, authorized_user, external_account, impersonated_service_account)")),
    }
}

/// An `impersonated_service_account` file's token: its source credentials' token traded at its
/// `service_account_impersonation_url`.
async fn impersonated(file: &KeyFile) -> Result<AccessToken, String> {
    let (Some(url), Some(source)) = (
        &file.external.service_account_impersonation_url,
        &file.source_credentials,
    ) else {
        return Err("an impersonated service account needs service_account_impersonation_url and source_credentials".into());
    };
    if source.kind == "impersonated_service_account" {
        return Err("its source_credentials are themselves impersonated: name the chain in delegates instead".into());
    }
    let own = own_token(source)
        .await
        .map_err(|why| format!("its source_credentials: {why}"))?;
    impersonate::access_token(
        url,
        &own,
        &file.delegates,
        impersonate::DEFAULT_LIFETIME_SECONDS,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adc(vars: &[(&str, &str)]) -> GoogleAdc {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        GoogleAdc::new(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn looks_in_googles_order_and_says_where() {
        let a = adc(&[("HOME", "/home/u"), ("GCE_METADATA_HOST", "127.0.0.1:9")]);
        let looked = a.looked();
        assert!(
            looked.contains("GOOGLE_APPLICATION_CREDENTIALS (not set)"),
            "{looked}"
        );
        assert!(
            looked.contains("/home/u/.config/gcloud/application_default_credentials.json"),
            "{looked}"
        );
        assert!(
            looked.contains("metadata server at 127.0.0.1:9"),
            "{looked}"
        );
        let none = adc(&[("METADATA_SERVER_DETECTION", "none")]);
        assert!(none.metadata_host().is_none());
        assert!(none.looked().contains("skipped"));
    }

    #[test]
    fn a_named_file_that_is_not_json_is_said_without_quoting_it() {
        let dir = std::env::temp_dir().join(format!("atc-adc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("key.json");
        std::fs::write(&path, "-----BEGIN PRIVATE KEY-----secret").unwrap();
        let a = adc(&[("GOOGLE_APPLICATION_CREDENTIALS", path.to_str().unwrap())]);
        let Err(why) = a.file() else { panic!("read") };
        assert!(why.contains("not a Google credentials JSON file") && !why.contains("secret"));
        std::fs::write(&path, r#"{"type":"service_account","project_id":"p1"}"#).unwrap();
        assert_eq!(a.project().as_deref(), Some("p1"));
        // An impersonated account's project is its source credentials' when it names none.
        std::fs::write(
            &path,
            r#"{"type":"impersonated_service_account","source_credentials":{"type":"authorized_user","quota_project_id":"p2"}}"#,
        )
        .unwrap();
        assert_eq!(a.project().as_deref(), Some("p2"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
