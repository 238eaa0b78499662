//! A panic in the engine never crashes the process: it becomes `unknown_error`.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use crate::engine::RunError;

/// Runs `work`, turning a panic inside it into an `unknown_error` that says what panicked.
pub async fn catch_panics<T>(
    work: impl Future<Output = Result<T, RunError>>,
) -> Result<T, RunError> {
    match AssertUnwindSafe(work).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(RunError::panicked(&what))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_unknown_error() {
        let err = catch_panics(async {
            if std::hint::black_box(true) {
                panic!("boom {}", 7);
            }
            Ok::<(), RunError>(())
        })
        .await
        .unwrap_err();
        assert_eq!(err.code.as_str(), "unknown_error");
        assert!(
            err.message.contains("a Rust panic: boom 7"),
            "{}",
            err.message
        );
        assert_eq!(
            catch_panics(async { Ok::<u8, RunError>(3) }).await.unwrap(),
            3
        );
    }
}
