//! A credential the caller's code fetches when asked: a JS function (the binding wraps it) that
//! answers JSON text, such as AWS credentials from `@aws-sdk/credential-providers` or a
//! platform's access token. The engine only asks and reads the answer; it never knows what
//! kind of code answered.

use std::future::Future;
use std::pin::Pin;

/// The answer of a [`FetchCredential`]: the JSON text the function resolved with, or why it
/// failed (its thrown message, which the caller quotes with the run's secrets taken out).
pub type FetchedCredential = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// Code that fetches a credential when a request needs one. Each call may answer a new one
/// (the function decides when to refresh); the caller caches the answer while it is valid.
pub trait FetchCredential: Send + Sync {
    /// Asks for the credential.
    fn fetch(&self) -> FetchedCredential;
}
