//! A credential that never prints: `Debug` shows `[redacted]`, so a config or error logged with
//! `{:?}` cannot leak the API key.

/// The shortest approval secret accepted, in characters. Anyone who finds the secret can sign
/// an approval for any call, and a short one (a word, a password a person typed) can be guessed
/// offline from one approval id; `openssl rand -hex 32` makes 64.
pub const MIN_APPROVAL_SECRET_CHARS: usize = 32;

/// An API key, an auth token or an approval secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The credential itself, for the one place that sends it: the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret::new(value)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret::new("sk-ant-very-secret");
        assert_eq!(format!("{s:?}"), "[redacted]");
        assert_eq!(format!("{:?}", Some(s.clone())), "Some([redacted])");
        assert_eq!(s.expose(), "sk-ant-very-secret");
    }
}
