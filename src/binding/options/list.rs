//! Every option `runWithTools` takes, listed once: [`RunOptions`], the options that cross from
//! JS as JSON, and [`JS_ONLY`], the ones the JS layer keeps (JS values: a signal, the context, the
//! hooks). Together they make the unknown-option message, and a test holds them to the keys of
//! `RunOptions` in index.d.ts.

use std::borrow::Cow;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::read::Given;
use crate::engine::RunError;

/// Declares [`RunOptions`] with one [`Given`] field per option, its list of names, and the
/// reading of the options object that fills it: one pass, every value borrowed as the JSON text
/// it came as, any other key kept as unknown.
macro_rules! run_options {
    ($($(#[$doc:meta])* $field:ident: $name:literal,)*) => {
        /// The options that cross from JS as JSON (everything but [`JS_ONLY`]), each as the
        /// caller gave it. Each says what it does and what it is when not given.
        pub struct RunOptions<'a> {
            $($(#[$doc])* pub $field: Given<'a>,)*
            /// The first key, in sorted order, that names no option.
            pub unknown: Option<String>,
        }

        impl RunOptions<'_> {
            /// The names of the options, in the order they are declared.
            pub const NAMES: &'static [&'static str] = &[$($name),*];
        }

        impl Default for RunOptions<'_> {
            fn default() -> Self {
                RunOptions {
                    $($field: Given::absent($name),)*
                    unknown: None,
                }
            }
        }

        impl<'de> Deserialize<'de> for RunOptions<'de> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Fields;
                impl<'de> Visitor<'de> for Fields {
                    type Value = RunOptions<'de>;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        let mut options = RunOptions::default();
                        while let Some(Key(key)) = map.next_key()? {
                            // A key given twice: the last one counts, as in `JSON.parse`.
                            let raw: &'de RawValue = map.next_value()?;
                            match &*key {
                                $($name => options.$field.raw = Some(raw),)*
                                _ => options.note_unknown(key),
                            }
                        }
                        Ok(options)
                    }
                }
                d.deserialize_map(Fields)
            }
        }
    };
}

run_options! {
    /// The model. Default: `ANTHROPIC_MODEL`, else `DEFAULT_MODEL`.
    model: "model",
    /// `max_tokens` of each request. Default 4096.
    max_tokens: "maxTokens",
    /// The system prompt: a string or text blocks, sent as given. Default: none.
    system: "system",
    /// Sent as `temperature`, from 0 to 1, under `apiVersion` `"2023-06-01"` only: API version
    /// 2026-10-21 removed it. Default: the API's.
    temperature: "temperature",
    /// Sent as `tool_choice`, as given. Default: the API's (`auto`).
    tool_choice: "toolChoice",
    /// Names of the registered tools to offer in this run. Default: all.
    tools: "tools",
    /// Tool rounds allowed. Default 5.
    max_tool_iterations: "maxToolIterations",
    /// `"error"` (default): a tool request after `maxToolIterations` rounds ends the run with
    /// `max_iterations_exceeded`. `"answer"`: those calls are not run and one more request
    /// without tools gets the answer.
    on_max_iterations: "onMaxIterations",
    /// `"stop"` (default): the first tool failure ends the run. `"continue"`: the model is told.
    on_tool_error: "onToolError",
    /// With `"continue"`: how often one identical call may fail before it is no longer run.
    /// Default 2.
    max_tool_failures: "maxToolFailures",
    /// The time a tool call may take, counted from when JS begins it. Default: none.
    tool_timeout_ms: "toolTimeoutMs",
    /// Run the tool calls of one reply concurrently. Default true; `false`: one by one, in order.
    parallel_tool_calls: "parallelToolCalls",
    /// A token budget for the whole run: the input (cache included) and output of every
    /// request. Default: none.
    max_total_tokens: "maxTotalTokens",
    /// How often one identical call (same name, same input) may succeed in a run before it is
    /// no longer run. Default: none (a polling tool repeats itself on purpose).
    max_identical_calls: "maxIdenticalCalls",
    /// Sent as `x-api-key`. Default: `ANTHROPIC_API_KEY` (read only when neither key option is
    /// given).
    api_key: "apiKey",
    /// Sent as `Authorization: Bearer`. Default: `ANTHROPIC_AUTH_TOKEN` (as for `apiKey`).
    auth_token: "authToken",
    /// Where requests go, without `/v1`. Default: `ANTHROPIC_BASE_URL`, else
    /// `https://api.anthropic.com`.
    base_url: "baseURL",
    /// The `anthropic-version` header, a version date `YYYY-MM-DD` sent as given. Default
    /// `2026-10-21`; `2023-06-01` keeps `temperature`, `topP` and `topK`, which it removed.
    api_version: "apiVersion",
    /// Retries of a failed API request. Default 2.
    max_retries: "maxRetries",
    /// The time one API request may take. Default 600000 (ten minutes).
    timeout_ms: "timeoutMs",
    /// Server tool definitions (web search, code execution …), sent after the client tools.
    /// Default: none.
    server_tools: "serverTools",
    /// Remote MCP servers Anthropic's API connects to (the MCP connector): `[{ name, url,
    /// authorizationToken?, tools? }]`, sent as `mcp_servers` with one `mcp_toolset` tool each.
    /// Default: none.
    mcp_servers: "mcpServers",
    /// Sent as the `anthropic-beta` header, comma-joined. Default: none.
    betas: "betas",
    /// Extra request headers; the loop's own (credentials, version, content type) are refused.
    /// Default: none.
    headers: "headers",
    /// Merged into the request body last; the loop's own fields are refused. Default: none.
    extra_body: "extraBody",
    /// Keep the conversation on the API (its Threads): each request after the first sends only
    /// the new turn. Default true; `false` sends the whole history every request.
    api_threads: "apiThreads",
    /// A code-execution container to continue in. Default: none.
    container: "container",
    /// The person's answers to an earlier run's pending approvals. Default: none.
    approvals: "approvals",
    /// Signs approval ids. Default: `ANTHROPIC_TOOL_CALLING_SECRET`; at least 32 characters.
    approval_secret: "approvalSecret",
    /// How long an approval id stays valid. Default 24 hours.
    approval_ttl_ms: "approvalTtlMs",
    /// The user's or the chat's id, bound into every approval id this run issues. Default: none
    /// (`""` is bound).
    approval_scope: "approvalScope",
    /// Sent as `thinking`. Default: none.
    thinking: "thinking",
    /// Sent as `stop_sequences`. Default: none.
    stop_sequences: "stopSequences",
    /// Sent as `top_p`, under `apiVersion` `"2023-06-01"` only. Default: none.
    top_p: "topP",
    /// Sent as `top_k`, under `apiVersion` `"2023-06-01"` only. Default: none.
    top_k: "topK",
    /// Sent as `metadata`. Default: none.
    metadata: "metadata",
    /// Sent as `service_tier`. Default: none.
    service_tier: "serviceTier",
    /// Sent as the top-level `cache_control` (automatic prompt caching). Default: none.
    cache_control: "cacheControl",
    /// Sent as `output_config`. Default: none.
    output_config: "outputConfig",
    /// Sent as `context_management`. Default: none.
    context_management: "contextManagement",
    /// The shape of the answer: a JSON Schema (the JS layer turns a Standard Schema into its
    /// JSON Schema), sent as `output_config.format` and the answer checked against it.
    /// Default: none.
    output: "output",
    /// Tracing where an OpenTelemetry tracer provider is registered: `false` makes no spans,
    /// `{ recordContent: true }` puts the messages, tool inputs and outputs in them. Default:
    /// spans without content.
    telemetry: "telemetry",
    /// The store (`createStore`) that keeps the run's thread; the JS layer sends its handle.
    /// Default: none.
    store: "store",
    /// The stored thread the run goes on in: its id, or `{ id, owner }`; needs `store`.
    /// Default: none (the prompt is the whole history).
    thread: "thread",
}

impl RunOptions<'_> {
    /// Keeps the smallest unknown key, so that which one is reported does not depend on the
    /// order the caller wrote them in.
    fn note_unknown(&mut self, key: Cow<'_, str>) {
        if self.unknown.as_deref().is_none_or(|seen| *key < *seen) {
            self.unknown = Some(key.into_owned());
        }
    }
}

/// An object key, borrowed from the JSON text unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(Text)
    }
}

/// What the value of an option that stays in JS must be; lib/options.js checks it before the run
/// starts.
#[cfg_attr(feature = "node", napi_derive::napi(string_enum = "snake_case"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsKind {
    /// Anything: it is handed on as it is.
    Any,
    /// An `AbortSignal`.
    AbortSignal,
    /// A function the run calls at some point, as an observer (a throw is logged, never ends
    /// the run).
    Hook,
}

impl JsKind {
    /// What a value of this kind must be, as a message says it; `None` for [`JsKind::Any`].
    pub fn expected(self) -> Option<&'static str> {
        match self {
            JsKind::Any => None,
            JsKind::AbortSignal => Some("an AbortSignal"),
            JsKind::Hook => Some("a function"),
        }
    }
}

/// An option the JS layer keeps rather than sending it as JSON: a JS value the engine has no use for.
pub struct JsOption {
    /// The option's name.
    pub name: &'static str,
    /// What its value must be.
    pub kind: JsKind,
    /// What it does, and what it is when not given.
    pub doc: &'static str,
}

const fn js(name: &'static str, kind: JsKind, doc: &'static str) -> JsOption {
    JsOption { name, kind, doc }
}

/// The options the JS layer keeps, in the order it checks them: one line each.
#[rustfmt::skip]
pub const JS_ONLY: &[JsOption] = &[
    js("signal", JsKind::AbortSignal, "Stops the run; it resolves with code `aborted`. Default: none."),
    js("context", JsKind::Any, "Handed to every `execute` as `ctx.context`. Default: undefined."),
    js("onToolCall", JsKind::Hook, "Called before each `execute`. Default: none."),
    js("onToolResult", JsKind::Hook, "Called after each tool call settles. Default: none."),
    js("onStepFinish", JsKind::Hook, "Called after each step: a reply and its tool calls. Default: none."),
];

/// Every option's name: those that cross as JSON, then those JS keeps.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    RunOptions::NAMES
        .iter()
        .copied()
        .chain(JS_ONLY.iter().map(|o| o.name))
}

/// The refusal of a key that names no option, listing every option there is.
pub fn unknown_option(key: &str) -> RunError {
    let known: Vec<&str> = all_names().collect();
    RunError::invalid_request(format!(
        "Unknown option {key:?}. Known options: {}. Nothing was sent.",
        known.join(", ")
    ))
}
