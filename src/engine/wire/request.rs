//! The body of one `POST /v1/messages`: the run's settings, the tools (with the MCP connector's
//! servers), the history (or, continuing an API thread, what came after its last reply, without
//! the `system` and `tools` the thread holds) and the `thread`. Every
//! part the caller gave (the history, `system`, `toolChoice`, pass-through fields) is copied as
//! the JSON text it came as, never re-encoded, so keys keep their order byte for byte.

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::engine::run::config::RunConfig;
use crate::engine::wire::protocol::RawMessage;
use crate::engine::wire::threads::ThreadField;

/// What changes from one request of a run to the next.
#[derive(Clone, Copy)]
pub struct Turn<'a> {
    /// The `tool_choice` of this request (the option on the first, `auto` after a forcing one,
    /// `none` for the answer at the limit).
    pub tool_choice: Option<&'a RawValue>,
    /// The container the last reply ran in (code execution), else the `container` option.
    pub container: Option<&'a str>,
    /// Ask for an SSE stream.
    pub stream: bool,
    /// `max_tokens`: the option's, or less where the run's token budget leaves less.
    pub max_tokens: u32,
    /// The request's `thread`: a continue leaves out `system` and `tools` (`extraBody`'s too).
    pub thread: Option<ThreadField<'a>>,
}

/// What one request sends: its body, whether it has a `thread` (its beta then goes in
/// `anthropic-beta`), and — for a request that continues a thread — how to write the body that
/// starts a new one, sent instead should an attempt's streamed reply be cut once it began.
#[derive(Default)]
pub struct Outgoing<'a> {
    /// The body.
    pub body: Body,
    /// The body has a `thread`.
    pub threaded: bool,
    /// Writes the body sent after a cut stream, if not `body` again.
    pub restart: Option<&'a (dyn Fn() -> Body + Sync)>,
}

impl From<Body> for Outgoing<'_> {
    fn from(body: Body) -> Self {
        Outgoing {
            body,
            threaded: false,
            restart: None,
        }
    }
}

/// Writes one JSON object field by field, leaving out the fields `extraBody` replaces and the
/// ones `omitted` (which `extraBody` does not bring back).
struct Object<'c> {
    out: Vec<u8>,
    empty: bool,
    replaced: &'c [(String, Box<RawValue>)],
    omitted: &'c [&'c str],
}

impl Object<'_> {
    fn key(&mut self, key: &str) -> bool {
        if self.omitted.contains(&key) || self.replaced.iter().any(|(k, _)| k == key) {
            return false;
        }
        self.out.push(if self.empty { b'{' } else { b',' });
        self.empty = false;
        write_json(&mut self.out, key);
        self.out.push(b':');
        true
    }

    fn raw(&mut self, key: &str, raw: &str) {
        if self.key(key) {
            self.out.extend_from_slice(raw.as_bytes());
        }
    }

    fn value<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        if self.key(key) {
            write_json(&mut self.out, value);
        }
    }

    fn array<'r>(&mut self, key: &str, items: impl Iterator<Item = &'r str>) {
        if self.key(key) {
            self.out.push(b'[');
            for (i, item) in items.enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.out.extend_from_slice(item.as_bytes());
            }
            self.out.push(b']');
        }
    }

    fn finish(mut self) -> Vec<u8> {
        for (key, value) in self.replaced {
            if self.omitted.contains(&key.as_str()) {
                continue;
            }
            self.out.push(if self.empty { b'{' } else { b',' });
            self.empty = false;
            write_json(&mut self.out, key);
            self.out.push(b':');
            self.out.extend_from_slice(value.get().as_bytes());
        }
        if self.empty {
            self.out.push(b'{');
        }
        self.out.push(b'}');
        self.out
    }
}

fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(out, value).expect("strings and numbers always serialise");
}

/// A request body: the history's messages shared (a reference count each, no copy) between the
/// parts written for this request, so a round's body costs only its new parts. Its length is
/// known, so it goes with a `content-length`; a retry sends the same bytes again.
#[derive(Clone, Debug, Default)]
pub struct Body {
    pieces: Vec<Bytes>,
    len: usize,
}

impl Body {
    fn push(&mut self, piece: Bytes) {
        if !piece.is_empty() {
            self.len += piece.len();
            self.pieces.push(piece);
        }
    }

    /// The body's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the body has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The body in one buffer (a copy: for tests and logs).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for piece in &self.pieces {
            out.extend_from_slice(piece);
        }
        out
    }

    /// The lowercase hex SHA-256 of the body's bytes (a signed request's payload hash).
    pub fn sha256_hex(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        for piece in &self.pieces {
            hash.update(piece);
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The body as reqwest sends it: piece by piece (each a shared `Bytes`, written with
    /// vectored writes), with its exact length, so it goes with a `content-length` like a body
    /// in one buffer.
    pub fn to_http(&self) -> reqwest::Body {
        reqwest::Body::wrap(Pieces {
            left: self.len as u64,
            pieces: self.pieces.clone().into_iter(),
        })
    }
}

/// A [`Body`] being sent: the pieces not yet written, and how many bytes they hold.
struct Pieces {
    pieces: std::vec::IntoIter<Bytes>,
    left: u64,
}

impl http_body::Body for Pieces {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let next = self.pieces.next();
        if let Some(piece) = &next {
            self.left -= piece.len() as u64;
        }
        std::task::Poll::Ready(next.map(|piece| Ok(http_body::Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.left)
    }
}

/// Serialises a request. `tools` are the client tools' definitions; the run's server tools
/// follow them.
pub fn body(cfg: &RunConfig, tools: &[&RawValue], messages: &[RawMessage], turn: &Turn) -> Body {
    let raw_len = |r: Option<&RawValue>| r.map_or(0, |r| r.get().len());
    // Sized up front (the history is not in it: its messages are shared, not copied).
    let size = 256
        + cfg.model.len()
        + raw_len(cfg.system.as_deref())
        + raw_len(turn.tool_choice)
        + tools.iter().map(|t| t.get().len() + 1).sum::<usize>()
        + cfg
            .server_tools
            .iter()
            .map(|t| t.get().len() + 1)
            .sum::<usize>()
        + cfg
            .fields
            .iter()
            .map(|(k, v)| k.len() + v.get().len() + 4)
            .sum::<usize>();
    // A continue's thread holds the system prompt and the tools.
    let continues = matches!(turn.thread, Some(ThreadField::Continue(_)));
    // A platform may leave fields out (Bedrock: `model`, `stream`) and start with its own
    // (`anthropic_version`); the Anthropic API's body is unchanged.
    let platform = &cfg.api.platform;
    let mut omitted: Vec<&str> = platform.omitted_fields().to_vec();
    if continues {
        omitted.extend(["system", "tools"]);
    }
    let mut o = Object {
        out: Vec::with_capacity(size),
        empty: true,
        replaced: &cfg.extra_body,
        omitted: &omitted,
    };
    for (key, json) in platform.leading_fields(&cfg.api) {
        o.raw(key, &json);
    }
    o.value("model", &cfg.model);
    o.value("max_tokens", &turn.max_tokens);
    if let Some(system) = &cfg.system {
        o.raw("system", system.get());
    }
    if let Some(t) = cfg.temperature {
        o.value("temperature", &t);
    }
    if let Some(choice) = turn.tool_choice {
        o.raw("tool_choice", choice.get());
    }
    // The MCP connector's entries are written for each request: the token stays a `Secret`
    // in the config, and exists as plain text only in the body.
    let toolsets: Vec<String> = cfg.mcp_servers.iter().map(|s| s.toolset()).collect();
    if !tools.is_empty() || !cfg.server_tools.is_empty() || !toolsets.is_empty() {
        let all = tools
            .iter()
            .map(|t| t.get())
            .chain(cfg.server_tools.iter().map(|t| t.get()))
            .chain(toolsets.iter().map(String::as_str));
        o.array("tools", all);
    }
    if !cfg.mcp_servers.is_empty() {
        let servers: Vec<String> = cfg.mcp_servers.iter().map(|s| s.definition()).collect();
        o.array("mcp_servers", servers.iter().map(String::as_str));
    }
    for (name, value) in &cfg.fields {
        o.raw(name, value.get());
    }
    if let Some(container) = turn.container {
        o.value("container", container);
    }
    if turn.stream {
        o.value("stream", &true);
    }
    if let Some(thread) = turn.thread {
        o.raw("thread", &thread.json());
    }
    let mut body = Body::default();
    if o.key("messages") {
        o.out.push(b'[');
        let head = std::mem::take(&mut o.out);
        body.push(Bytes::from(head));
        for (i, m) in messages.iter().enumerate() {
            if i > 0 {
                body.push(Bytes::from_static(b","));
            }
            body.push(m.bytes().clone());
        }
        o.out.push(b']');
    }
    let tail = o.finish();
    body.push(Bytes::from(tail));
    body
}

#[cfg(test)]
mod tests;
