//! Bearer tokens a run fetches when a request needs one (`provider.accessToken`): a Google OAuth
//! access token for Vertex AI and Claude on Google Cloud, kept until shortly before it expires and
//! fetched again once when the platform answers 401; or Microsoft Foundry's Entra ID token, asked
//! for on every request as the official client's `azureADTokenProvider` is. Without a function,
//! Google's platforms take their token from Application Default Credentials (`google_adc.rs`).

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use crate::engine::error::RunError;
use crate::engine::wire::access_token::{AccessToken, LOOKUP_TIMEOUT};
use crate::engine::wire::fetched::FetchCredential;
use crate::engine::wire::google_adc::GoogleAdc;

/// The option the function is given as, as messages name it.
const OPTION: &str = "provider.accessToken";

/// Where a run's bearer tokens come from, and the last one kept. Cloned with the run's
/// settings; clones share one cache.
#[derive(Clone)]
pub struct TokenAuth {
    /// The caller's function; `None` until the binding hands it over.
    function: Option<Arc<dyn FetchCredential>>,
    /// Asked on every request (Foundry's Entra ID provider), or kept while fresh (Google's).
    per_request: bool,
    /// Google's Application Default Credentials instead of a function.
    adc: Option<GoogleAdc>,
    cache: Arc<tokio::sync::Mutex<Option<(AccessToken, SystemTime)>>>,
}

impl std::fmt::Debug for TokenAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenAuth")
            .field("per_request", &self.per_request)
            .field("adc", &self.adc.is_some())
            .finish_non_exhaustive()
    }
}

/// Where the run looked before Application Default Credentials, as an error message says it.
const BEFORE_ADC: &str = "the authToken option, provider.accessToken, then ";

impl TokenAuth {
    /// Tokens from the caller's function, asked for on every request (`per_request`) or kept.
    pub fn from_function(per_request: bool) -> Self {
        TokenAuth {
            function: None,
            per_request,
            adc: None,
            cache: Arc::default(),
        }
    }

    /// Tokens from Google's Application Default Credentials (kept per process).
    pub fn from_adc(adc: GoogleAdc) -> Self {
        TokenAuth {
            adc: Some(adc),
            ..TokenAuth::from_function(false)
        }
    }

    /// Hands over the caller's function (the binding has it only once the options are read).
    pub fn give_function(&mut self, function: Arc<dyn FetchCredential>) {
        self.function = Some(function);
    }

    /// The token for the next request to `platform` (as messages name it), or the run's error:
    /// `authentication_error` when the function failed or no credentials were found,
    /// `invalid_request` when the function answered something else. Nothing is sent then.
    pub async fn token(&self, platform: &str) -> Result<AccessToken, RunError> {
        if let Some(adc) = &self.adc {
            return tokio::time::timeout(LOOKUP_TIMEOUT, adc.token(platform, BEFORE_ADC))
                .await
                .unwrap_or_else(|_| {
                    Err(RunError::no_google_credentials(
                        platform,
                        &format!("{BEFORE_ADC}{}", adc.looked()),
                        &format!("the lookup took over {} s", LOOKUP_TIMEOUT.as_secs()),
                    ))
                });
        }
        let Some(function) = &self.function else {
            return Err(RunError::credentials_function_failed(
                OPTION,
                "it must be a function returning a token",
            ));
        };
        let mut cache = self.cache.lock().await;
        let now = SystemTime::now();
        if let Some((token, at)) = cache.as_ref().filter(|_| !self.per_request) {
            if token.fresh(*at, now) {
                return Ok(token.clone());
            }
        }
        let answer = tokio::time::timeout(LOOKUP_TIMEOUT, function.fetch())
            .await
            .map_err(|_| {
                RunError::credentials_function_failed(
                    OPTION,
                    &format!("it did not answer within {} s", LOOKUP_TIMEOUT.as_secs()),
                )
            })?
            .map_err(|why| RunError::credentials_function_failed(OPTION, &why))?;
        let value: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        let token = AccessToken::from_json(&value).map_err(|why| {
            RunError::credentials_function_answered(
                OPTION,
                &format!("{why}, not a token or {{ token, expiresAt? }}"),
            )
        })?;
        if !self.per_request {
            *cache = Some((token.clone(), now));
        }
        Ok(token)
    }

    /// After a 401: forgets the kept token, and says whether a fresh one is worth one more try
    /// (kept tokens only: a token asked for on every request was fresh already).
    pub async fn forget(&self) -> bool {
        if self.per_request {
            return false;
        }
        if let Some(adc) = &self.adc {
            adc.forget();
        }
        *self.cache.lock().await = None;
        true
    }
}
