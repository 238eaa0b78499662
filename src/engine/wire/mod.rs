//! The Messages API client, and nothing else: where a request goes and with which headers
//! (`settings.rs`), the wire format (`protocol.rs`), the body of one request (`request.rs`,
//! with the API's own MCP connector, `api_mcp_servers.rs`, and the API's threads,
//! `threads.rs`), sending it with retries (`client.rs`, `client/attempt.rs`, `retry.rs`), a
//! streamed reply assembled (`stream.rs`, `stream/`), the API versions (`api_version.rs`), and
//! the run's secrets kept out of what the API says back (`secret.rs`, `redact.rs`).
//!
//! A cloud platform that serves the same models (Bedrock, Vertex, Foundry, Claude Platform on
//! AWS, Claude on Google Cloud) is a [`platform::Platform`]: where a request goes, how its body
//! and headers are shaped, how a streamed reply is framed and how errors map (`platform/`).
//! Requests to the AWS platforms are signed (`platform/sigv4.rs`) with credentials found by
//! `aws_auth.rs`; a bearer token the caller's function answers (Google's platforms, Foundry) is
//! `token_auth.rs`'s, Google's Application Default Credentials `google_adc.rs`'s; a credential the caller's own code fetches is a `fetched.rs`
//! [`fetched::FetchCredential`].

pub mod access_token;
pub mod api_mcp_servers;
pub mod api_version;
pub mod aws_auth;
pub mod client;
pub mod fetched;
pub mod google_adc;
pub mod platform;
pub mod protocol;
pub mod redact;
pub mod request;
pub mod retry;
pub mod secret;
pub mod settings;
pub mod stream;
pub mod threads;
pub mod token_auth;
