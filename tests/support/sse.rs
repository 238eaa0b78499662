//! Server-sent events: a reply as the Messages API streams it. Reassembled the way the official
//! SDK's MessageStream does it, the events give back the reply exactly.

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::step::ReplyOptions;
use super::wire::echo;

const TEXT_CHUNKS: [usize; 5] = [3, 5, 2, 7, 4];
const JSON_CHUNKS: [usize; 4] = [6, 9, 4, 11];

/// How a streamed response ended.
pub enum End {
    /// Every event (or the scripted error event) was written.
    Finished,
    /// `sse_cut_after`: the connection is to be reset.
    Cut,
}

/// `s` in small pieces of cycling sizes, split between chars.
fn pieces(s: &str, sizes: &[usize]) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let (mut at, mut k) = (0, 0);
    while at < chars.len() {
        let end = (at + sizes[k % sizes.len()]).min(chars.len());
        out.push(chars[at..end].iter().collect());
        at = end;
        k += 1;
    }
    out
}

/// A block's `content_block_start` payload and its deltas; other blocks come whole.
fn block_events(block: &Value) -> (Value, Vec<Value>) {
    let mut start = block.clone();
    let mut deltas = Vec::new();
    match block["type"].as_str() {
        Some("text") => {
            start["text"] = json!("");
            if let Some(citations) = block["citations"].as_array() {
                start["citations"] = json!([]);
                for citation in citations {
                    deltas.push(json!({ "type": "citations_delta", "citation": citation }));
                }
            }
            for t in pieces(block["text"].as_str().unwrap_or_default(), &TEXT_CHUNKS) {
                deltas.push(json!({ "type": "text_delta", "text": t }));
            }
        }
        Some("thinking") => {
            start["thinking"] = json!("");
            start["signature"] = json!("");
            for t in pieces(block["thinking"].as_str().unwrap_or_default(), &TEXT_CHUNKS) {
                deltas.push(json!({ "type": "thinking_delta", "thinking": t }));
            }
            deltas.push(json!({ "type": "signature_delta", "signature": block["signature"] }));
        }
        // As the API streams it: the block starts without its summary, and one delta carries the
        // final `content` (and `encrypted_content`), to be assigned, not appended.
        Some("compaction") => {
            start = json!({ "type": "compaction", "content": null });
            for (key, value) in block.as_object().into_iter().flatten() {
                if key != "content" && key != "encrypted_content" {
                    start[key] = value.clone();
                }
            }
            let mut delta = json!({ "type": "compaction_delta", "content": block["content"] });
            if let Some(encrypted) = block.get("encrypted_content") {
                delta["encrypted_content"] = encrypted.clone();
            }
            deltas.push(delta);
        }
        Some("tool_use" | "server_tool_use") => {
            start["input"] = json!({});
            let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
            deltas.push(json!({ "type": "input_json_delta", "partial_json": "" }));
            for p in pieces(&input.to_string(), &JSON_CHUNKS) {
                deltas.push(json!({ "type": "input_json_delta", "partial_json": p }));
            }
        }
        _ => {}
    }
    (start, deltas)
}

/// The events of a streamed reply, as `(event name, data)`. message_start holds no
/// `context_management` and no usage `iterations`; with iterations (a compaction) its input tokens
/// are the first iteration's, as the API sends them. message_delta carries the whole usage, and
/// beside it the message's `context_management`.
pub fn events(message: &Value, unknown_delta: Option<&str>) -> Vec<(String, Value)> {
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["stop_sequence"] = Value::Null;
    if let Some(fields) = start.as_object_mut() {
        fields.remove("container");
        fields.remove("context_management");
        if fields.contains_key("stop_details") {
            fields.insert("stop_details".into(), Value::Null);
        }
    }
    let output = message["usage"]["output_tokens"].as_u64().unwrap_or(0);
    start["usage"]["output_tokens"] = json!(output.min(1));
    if let Some(usage) = start["usage"].as_object_mut() {
        if let Some(Value::Array(iterations)) = usage.remove("iterations") {
            if let Some(first) = iterations.first() {
                usage.insert("input_tokens".into(), first["input_tokens"].clone());
            }
        }
    }
    let mut out = vec![
        (
            "message_start".to_owned(),
            json!({ "type": "message_start", "message": start }),
        ),
        ("ping".to_owned(), json!({ "type": "ping" })),
    ];
    let unknown = |kind: &str| {
        (
            "content_block_delta".to_owned(),
            json!({ "type": "content_block_delta", "index": 0, "delta": { "type": kind } }),
        )
    };
    let blocks = message["content"].as_array().cloned().unwrap_or_default();
    if let (Some(kind), true) = (unknown_delta, blocks.is_empty()) {
        out.push(unknown(kind));
    }
    for (index, block) in blocks.iter().enumerate() {
        let (first, deltas) = block_events(block);
        out.push((
            "content_block_start".into(),
            json!({ "type": "content_block_start", "index": index, "content_block": first }),
        ));
        if let (Some(kind), 0) = (unknown_delta, index) {
            out.push(unknown(kind));
        }
        for delta in deltas {
            out.push((
                "content_block_delta".into(),
                json!({ "type": "content_block_delta", "index": index, "delta": delta }),
            ));
        }
        out.push((
            "content_block_stop".into(),
            json!({ "type": "content_block_stop", "index": index }),
        ));
        if index % 2 == 1 {
            out.push(("ping".into(), json!({ "type": "ping" })));
        }
    }
    let mut delta =
        json!({ "stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"] });
    for key in ["stop_details", "container"] {
        if let Some(v) = message.get(key) {
            delta[key] = v.clone();
        }
    }
    let mut last = json!({ "type": "message_delta", "delta": delta, "usage": message["usage"] });
    if let Some(managed) = message.get("context_management") {
        last["context_management"] = managed.clone();
    }
    out.push(("message_delta".into(), last));
    out.push(("message_stop".into(), json!({ "type": "message_stop" })));
    out
}

async fn chunk(stream: &mut TcpStream, text: &str) -> std::io::Result<()> {
    stream
        .write_all(format!("{:x}\r\n{text}\r\n", text.len()).as_bytes())
        .await?;
    stream.flush().await
}

fn frame(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// Writes `message` as a 200 `text/event-stream` (chunked), with the step's options; the
/// error event echoes `sent_headers` (see [`echo`]). `whole` is called as message_stop is about
/// to be written: the reply is then whole (a thread holds it before the client can continue it).
pub async fn respond(
    stream: &mut TcpStream,
    message: &Value,
    options: &ReplyOptions,
    request_id: &str,
    sent_headers: &std::collections::BTreeMap<String, String>,
    whole: &mut (dyn FnMut() + Send),
) -> std::io::Result<End> {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
         request-id: {request_id}\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await?;
    let events = events(message, options.unknown_delta.as_deref());
    for i in 0..=events.len() {
        if let Some((n, kind, text)) = &options.sse_error_after {
            if *n == i {
                let mut error =
                    json!({ "type": "error", "error": { "type": kind, "message": text } });
                if let Some(details) = &options.sse_error_details {
                    error["error"]["details"] = details.clone();
                }
                chunk(stream, &echo(&frame("error", &error), sent_headers)).await?;
                break;
            }
        }
        if options.sse_cut_after == Some(i) {
            return Ok(End::Cut);
        }
        let Some((name, data)) = events.get(i) else {
            break;
        };
        if i > 0 {
            if options.stream_delay.is_zero() {
                tokio::task::yield_now().await;
            } else {
                tokio::time::sleep(options.stream_delay).await;
            }
        }
        if name == "message_stop" {
            whole();
        }
        chunk(stream, &frame(name, data)).await?;
    }
    stream.write_all(b"0\r\n\r\n").await?;
    stream.flush().await?;
    Ok(End::Finished)
}

/// The message the events give back, assembled as the official SDK's MessageStream does.
pub fn reassemble(events: &[(String, Value)]) -> Result<Value, String> {
    let mut message = Value::Null;
    let mut json_buffers: std::collections::HashMap<u64, String> = Default::default();
    for (name, data) in events {
        let index = data["index"].as_u64().unwrap_or(0);
        match name.as_str() {
            "message_start" => message = data["message"].clone(),
            "content_block_start" => message["content"]
                .as_array_mut()
                .ok_or("content_block_start before message_start")?
                .push(data["content_block"].clone()),
            "content_block_delta" => {
                let block = &mut message["content"][index as usize];
                let delta = &data["delta"];
                let append = |block: &mut Value, key: &str, more: &Value| {
                    let joined = format!(
                        "{}{}",
                        block[key].as_str().unwrap_or_default(),
                        more.as_str().unwrap_or_default()
                    );
                    block[key] = json!(joined);
                };
                match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => append(block, "text", &delta["text"]),
                    "thinking_delta" => append(block, "thinking", &delta["thinking"]),
                    "signature_delta" => block["signature"] = delta["signature"].clone(),
                    "compaction_delta" => {
                        block["content"] = delta["content"].clone();
                        if let Some(encrypted) = delta.get("encrypted_content") {
                            block["encrypted_content"] = encrypted.clone();
                        }
                    }
                    "citations_delta" => {
                        if !block["citations"].is_array() {
                            block["citations"] = json!([]);
                        }
                        block["citations"]
                            .as_array_mut()
                            .into_iter()
                            .for_each(|c| c.push(delta["citation"].clone()));
                    }
                    "input_json_delta" => json_buffers
                        .entry(index)
                        .or_default()
                        .push_str(delta["partial_json"].as_str().unwrap_or_default()),
                    other => return Err(format!("unknown delta type {other:?}")),
                }
            }
            "content_block_stop" => {
                if let Some(buffer) = json_buffers.remove(&index) {
                    if !buffer.is_empty() {
                        message["content"][index as usize]["input"] = serde_json::from_str(&buffer)
                            .map_err(|e| format!("input of block {index}: {e}"))?;
                    }
                }
            }
            "message_delta" => {
                if let Some(fields) = data["delta"].as_object() {
                    for (k, v) in fields {
                        message[k] = v.clone();
                    }
                }
                if let Some(fields) = data["usage"].as_object() {
                    for (k, v) in fields {
                        message["usage"][k] = v.clone();
                    }
                }
                if let Some(managed) = data.get("context_management") {
                    message["context_management"] = managed.clone();
                }
            }
            "message_stop" | "ping" => {}
            "error" => return Err(format!("an error event: {data}")),
            other => return Err(format!("unknown event {other:?}")),
        }
    }
    Ok(message)
}

/// The `(event, data)` pairs of an SSE body.
pub fn parse(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|frame| !frame.trim().is_empty())
        .map(|frame| {
            let mut name = String::new();
            let mut data = String::new();
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            (name, serde_json::from_str(&data).unwrap_or(Value::Null))
        })
        .collect()
}
