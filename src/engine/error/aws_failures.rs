//! The failures of AWS signing before anything is sent: no credentials found, the caller's
//! credentials function failing or answering something else, a request the signer refuses.

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

    /// `authentication_error`: the `provider.credentials` function threw, rejected or did not
    /// answer (`why`). Nothing was sent.
    pub fn credentials_function_failed(why: &str) -> Self {
        RunError::new(
            ErrorCode::AuthenticationError,
            format!("provider.credentials failed: {why}. Nothing was sent."),
        )
    }

    /// `invalid_request`: the `provider.credentials` function answered something that is not
    /// AWS credentials (`why`). Nothing was sent.
    pub fn credentials_function_answered(why: &str) -> Self {
        RunError::new(
            ErrorCode::InvalidRequest,
            format!("provider.credentials answered {why}. Nothing was sent."),
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
