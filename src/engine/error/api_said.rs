//! The errors the API itself gave: an HTTP error answer, or an `event: error` in a stream after
//! HTTP 200, each with the API's type, words and `error.details.error_code`.

use std::time::Duration;

use super::{twin_status, ErrorCode, RunError};

impl RunError {
    /// The API answered HTTP `status` (an error status): the code the status maps to, the
    /// API's own `error.type` (`kind`, may be empty) and `error.message`, and what to do.
    /// `retry_after` is kept only where waiting is the advice (`rate_limited`, `overloaded`).
    pub fn http(status: u16, kind: &str, api_message: &str, retry_after: Option<Duration>) -> Self {
        let code = ErrorCode::for_status(status);
        let mut error = RunError::api_said(
            code,
            &format!("The Anthropic API answered HTTP {status}"),
            kind,
            api_message,
        );
        error.status = Some(status);
        if matches!(code, ErrorCode::RateLimited | ErrorCode::Overloaded) {
            error.retry_after = retry_after.map(|d| d.as_secs_f64());
        }
        error
    }

    /// A cloud platform (`platform`: its name as messages say it) answered HTTP `status` with an
    /// error of its own type (`kind`, Bedrock's `ThrottlingException` …): the code and advice of
    /// the API error it stands for (`twin`: that error's status; `None` for a model timeout, a
    /// `network_error`), and the status the platform answered.
    pub fn platform_http(
        platform: &str,
        status: u16,
        twin: Option<u16>,
        kind: &str,
        api_message: &str,
        retry_after: Option<Duration>,
    ) -> Self {
        let as_status = twin.unwrap_or(408);
        let mut error = RunError::http(as_status, kind, api_message, retry_after);
        error.message = error.message.replacen(
            &format!("The Anthropic API answered HTTP {as_status}"),
            &format!("{platform} answered HTTP {status}"),
            1,
        );
        error.status = Some(status);
        if twin.is_none() {
            error.code = ErrorCode::NetworkError;
        }
        error
    }

    /// This error as a run on a cloud platform (`platform`, as messages name it) tells it: the
    /// platform named where the message says the Anthropic API answered, and an authentication
    /// failure's advice pointing at the platform's credentials rather than ANTHROPIC_API_KEY.
    pub fn on_platform(mut self, platform: &str) -> Self {
        self.message = self.message.replacen("The Anthropic API", platform, 1);
        if self.code == ErrorCode::AuthenticationError {
            self.message = self.message.replacen(
                ErrorCode::AuthenticationError.advice(),
                " Check the platform's credentials (the apiKey / authToken options, provider.credentials or the platform's environment variables) and their permissions.",
                1,
            );
        }
        self
    }

    /// The API sent an `event: error` in a streamed reply, after HTTP 200: the code and advice
    /// of the HTTP answer of its type ([`twin_status`]), but no status (the answer was a 200).
    pub fn stream_error_event(kind: &str, api_message: &str) -> Self {
        let twin = twin_status(kind).as_u16();
        RunError::api_said(
            ErrorCode::for_status(twin),
            &format!("The Anthropic API sent an error event in the stream after HTTP 200 (like HTTP {twin})"),
            kind,
            api_message,
        )
    }

    /// The sentence of an API error: how it arrived, the API's type and words, and the advice.
    fn api_said(code: ErrorCode, arrived: &str, kind: &str, api_message: &str) -> Self {
        let what = if kind.is_empty() {
            String::new()
        } else {
            format!(" {kind}")
        };
        RunError::new(
            code,
            format!(
                "{arrived}{what}: {}.{}",
                // The API's message often ends with a period of its own.
                api_message.trim_end_matches('.'),
                code.advice()
            ),
        )
    }

    /// Gives the code the API's refusal names its cause with (`error.details.error_code`).
    pub fn with_api_error_code(mut self, code: Option<String>) -> Self {
        self.api_error_code = code;
        self
    }
}
