//! Every option `runWithTools` takes, as the code knows it: [`RunOptions`], the options that cross
//! from JS as JSON, and [`JS_ONLY`], the ones the JS layer keeps (JS values: a signal, the
//! context, the hooks). Together they make the unknown-option message. What each option is, does
//! and defaults to is written once, in `options.json` next to this file (index.d.ts's `RunOptions`
//! and docs/options.md are made from it); a test holds these lists, in order, to that table.

use std::borrow::Cow;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::read::Given;
use crate::engine::tools::schema::nearest;
use crate::engine::RunError;

/// Declares [`RunOptions`] with one [`Given`] field per option, its list of names, and the
/// reading of the options object that fills it: one pass, every value borrowed as the JSON text
/// it came as, any other key kept as unknown.
macro_rules! run_options {
    ($($field:ident: $name:literal,)*) => {
        /// The options that cross from JS as JSON (everything but [`JS_ONLY`]), each as the
        /// caller gave it. What each does and what it is when not given: `options.json`.
        pub struct RunOptions<'a> {
            $(#[doc = concat!("The `", $name, "` option.")] pub $field: Given<'a>,)*
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
    model: "model",
    max_tokens: "maxTokens",
    system: "system",
    temperature: "temperature",
    tool_choice: "toolChoice",
    tools: "tools",
    max_tool_iterations: "maxToolIterations",
    on_max_iterations: "onMaxIterations",
    on_tool_error: "onToolError",
    max_tool_failures: "maxToolFailures",
    tool_timeout_ms: "toolTimeoutMs",
    parallel_tool_calls: "parallelToolCalls",
    max_total_tokens: "maxTotalTokens",
    max_identical_calls: "maxIdenticalCalls",
    api_key: "apiKey",
    auth_token: "authToken",
    base_url: "baseURL",
    provider: "provider",
    api_version: "apiVersion",
    max_retries: "maxRetries",
    timeout_ms: "timeoutMs",
    server_tools: "serverTools",
    mcp_servers: "mcpServers",
    betas: "betas",
    headers: "headers",
    extra_body: "extraBody",
    api_threads: "apiThreads",
    container: "container",
    approvals: "approvals",
    approval_secret: "approvalSecret",
    approval_ttl_ms: "approvalTtlMs",
    approval_scope: "approvalScope",
    thinking: "thinking",
    stop_sequences: "stopSequences",
    top_p: "topP",
    top_k: "topK",
    metadata: "metadata",
    service_tier: "serviceTier",
    cache_control: "cacheControl",
    output_config: "outputConfig",
    context_management: "contextManagement",
    output: "output",
    telemetry: "telemetry",
    store: "store",
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
}

const fn js(name: &'static str, kind: JsKind) -> JsOption {
    JsOption { name, kind }
}

/// The options the JS layer keeps, in the order it checks them.
pub const JS_ONLY: &[JsOption] = &[
    js("signal", JsKind::AbortSignal),
    js("context", JsKind::Any),
    js("onToolCall", JsKind::Hook),
    js("onToolResult", JsKind::Hook),
    js("onStepFinish", JsKind::Hook),
];

/// Every option's name: those that cross as JSON, then those JS keeps.
pub fn all_names() -> impl Iterator<Item = &'static str> {
    RunOptions::NAMES
        .iter()
        .copied()
        .chain(JS_ONLY.iter().map(|o| o.name))
}

/// The refusal of a key that names no option: the option it nearly spells, if one is close, and
/// every option there is.
pub fn unknown_option(key: &str) -> RunError {
    let known: Vec<&str> = all_names().collect();
    let hint = match nearest(key, known.iter().copied()) {
        Some(near) => format!(" Did you mean {near:?}?"),
        None => String::new(),
    };
    RunError::invalid_request(format!(
        "Unknown option {key:?}.{hint} Known options: {}. Nothing was sent.",
        known.join(", ")
    ))
}
