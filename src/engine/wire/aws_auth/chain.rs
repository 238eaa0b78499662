//! AWS's default credential chain (`aws-config`): the environment (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), the shared config and credentials files with
//! `AWS_PROFILE` (a profile's `credential_process` and role assumption included), web identity
//! (`AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN`), the container's credentials endpoint and the
//! instance's metadata (IMDSv2; `AWS_EC2_METADATA_DISABLED=true` skips it). The chain reads the
//! process environment and files itself, as AWS's SDKs do, over rustls with `ring`.
//!
//! What it finds is kept for the process until shortly before it expires, per selection of the
//! chain (the variables that pick a profile, a file or a role, never a secret): a run does not
//! reach the instance's metadata or STS once per request.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use aws_config::default_provider::credentials::DefaultCredentialsChain;
use aws_config::profile::ProfileFileCredentialsProvider;
use aws_config::provider_config::ProviderConfig;
use aws_config::Region;
use aws_credential_types::provider::{error::CredentialsError, ProvideCredentials};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};

use super::{AwsCredentials, LOOKUP_TIMEOUT};
use crate::engine::error::RunError;
use crate::engine::wire::secret::Secret;

/// The variables that choose where the chain looks (not its secrets): a change to any of them
/// is a new lookup.
const SELECTORS: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_EC2_METADATA_DISABLED",
    "HOME",
];

/// Where the chain looks, as an error message says it.
pub const WHERE: &str = "the AWS default chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, the shared credentials and config files with AWS_PROFILE, web identity, the container's credentials endpoint, the instance's metadata)";

type Cache = Mutex<HashMap<String, (AwsCredentials, SystemTime)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::default)
}

/// Credentials from `profile` of the shared files, or (`None`) from the whole default chain
/// (`region`: the run's, for STS; the chain then never asks the instance for one);
/// `authentication_error` saying where they were looked for (`before`: where the run looked
/// first) when there are none. Bounded by [`LOOKUP_TIMEOUT`].
pub async fn lookup(
    profile: Option<&str>,
    platform: &str,
    before: &str,
    region: &str,
) -> Result<AwsCredentials, RunError> {
    let key = selection(profile);
    let now = SystemTime::now();
    // Keys in the environment are read again each time: there is nothing to save, and a
    // changed secret must not be answered with the old one.
    let from_env = profile.is_none() && std::env::var_os("AWS_ACCESS_KEY_ID").is_some();
    if !from_env {
        let kept = cache().lock().ok().and_then(|c| c.get(&key).cloned());
        if let Some((credentials, at)) = kept {
            if credentials.fresh(at, now) {
                return Ok(credentials);
            }
        }
    }
    let looked = match profile {
        Some(name) => {
            format!("the profile {name:?} of the shared credentials and config files (AWS_PROFILE)")
        }
        None => format!("{before} {WHERE}").trim_start().to_owned(),
    };
    let found = tokio::time::timeout(LOOKUP_TIMEOUT, provide(profile, region))
        .await
        .map_err(|_| {
            RunError::no_aws_credentials(
                platform,
                &looked,
                &format!("the lookup took over {} s", LOOKUP_TIMEOUT.as_secs()),
            )
        })?
        .map_err(|e| RunError::no_aws_credentials(platform, &looked, &said(&e)))?;
    let credentials = AwsCredentials {
        access_key_id: found.access_key_id().to_owned(),
        secret_access_key: Secret::new(found.secret_access_key()),
        session_token: found.session_token().map(Secret::from),
        expires: found.expiry(),
    };
    if !from_env {
        if let Ok(mut c) = cache().lock() {
            c.insert(key, (credentials.clone(), now));
        }
    }
    Ok(credentials)
}

async fn provide(profile: Option<&str>, region: &str) -> aws_credential_types::provider::Result {
    let region = Region::new(region.to_owned());
    let config = ProviderConfig::default()
        .with_region(Some(region.clone()))
        .with_http_client(
            aws_smithy_http_client::Builder::new()
                .tls_provider(Provider::Rustls(CryptoMode::Ring))
                .build_https(),
        );
    match profile {
        Some(name) => {
            ProfileFileCredentialsProvider::builder()
                .configure(&config)
                .profile_name(name)
                .build()
                .provide_credentials()
                .await
        }
        None => {
            DefaultCredentialsChain::builder()
                .region(region)
                .configure(config)
                .build()
                .await
                .provide_credentials()
                .await
        }
    }
}

/// What the chain said, without its debug noise (it never holds a secret: AWS's providers name
/// the variable or file they looked at).
fn said(error: &CredentialsError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

/// The cache key of a lookup: the profile asked for and the selecting variables.
fn selection(profile: Option<&str>) -> String {
    let mut key = format!("profile={}", profile.unwrap_or("-"));
    for var in SELECTORS {
        key.push('\u{1f}');
        key.push_str(var);
        key.push('=');
        key.push_str(&std::env::var(var).unwrap_or_default());
    }
    key
}

/// The region of `profile` (else of `AWS_PROFILE`, else `default`) in the shared config file,
/// if it names one. Reads files only, never the network.
pub fn profile_region(profile: Option<&str>) -> Option<String> {
    let mut builder = aws_config::profile::region::ProfileFileRegionProvider::builder();
    if let Some(name) = profile {
        builder = builder.profile_name(name);
    }
    let provider = builder.build();
    // The profile files are read with std::fs: the future never waits on the runtime.
    futures::executor::block_on(aws_config::meta::region::ProvideRegion::region(&provider))
        .map(|r| r.as_ref().to_owned())
}
