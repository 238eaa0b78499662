//! The failures of a platform's credentials before anything is sent: no AWS credentials found,
//! the caller's credential function (AWS credentials, an access token) failing or answering
//! something else, a request the signer refuses.

use super::{ErrorCode, RunError};

impl RunError {
    /// `authentication_error`: no AWS credentials for `platform` (as messages name it);
    /// `looked` says where they were looked for, `said` what the last place answered. Nothing
    /// was sent.
    pub fn no_aws_credentials(platform: &str, looked: &str, said: &str) -> Self {
        RunError::new(
            ErrorCode::AuthenticationError,
            format!("No AWS credentials for {platform}: looked in {looked} ({said}). Pass provider.credentials, or a key as apiKey. Nothing was sent."),
        )
    }

    /// `authentication_error`: no Google credentials for `platform`; `looked` says where they
    /// were looked for, `said` what the last place answered (its secrets taken out). Nothing
    /// was sent.
    pub fn no_google_credentials(platform: &str, looked: &str, said: &str) -> Self {
        RunError::new(
            ErrorCode::AuthenticationError,
            format!("No Google credentials for {platform}: looked in {looked} ({said}). Set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, run `gcloud auth application-default login`, or pass provider.accessToken (a function, such as google-auth-library's) or a token as authToken. Nothing was sent."),
        )
    }

    /// `authentication_error`: the caller's credential function (`option`:
    /// `provider.credentials`, `provider.accessToken`) threw, rejected or did not answer (`why`).
    /// Nothing was sent.
    pub fn credentials_function_failed(option: &str, why: &str) -> Self {
        RunError::new(
            ErrorCode::AuthenticationError,
            format!("{option} failed: {why}. Nothing was sent."),
        )
    }

    /// `invalid_request`: the caller's credential function (`option`) answered something that is
    /// not a credential (`why`). Nothing was sent.
    pub fn credentials_function_answered(option: &str, why: &str) -> Self {
        RunError::new(
            ErrorCode::InvalidRequest,
            format!("{option} answered {why}. Nothing was sent."),
        )
    }

    /// `invalid_request`: the request could not be signed (`why`: AWS's signer said).
    pub fn unsignable(why: &str) -> Self {
        RunError::new(
            ErrorCode::InvalidRequest,
            format!("The request could not be signed with AWS Signature Version 4: {why}. Nothing was sent."),
        )
    }
}
