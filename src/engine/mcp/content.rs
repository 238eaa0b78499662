//! What an MCP `tools/call` result becomes: the `tool_result` content the model reads.
//!
//! Read from the result's JSON (the MCP wire shape) rather than the SDK's types, so that a block
//! type this code has never seen is described to the model instead of failing the call.
//!
//! | MCP content                              | `tool_result` content                          |
//! | ---------------------------------------- | ---------------------------------------------- |
//! | `text`                                   | `text` (one text alone: the plain string)      |
//! | `image` (jpeg, png, gif, webp)           | `image`, base64 source                         |
//! | `resource` with `text`                   | `document`, text source, the URI as its title  |
//! | `resource` with a PDF `blob`             | `document`, base64 PDF source                  |
//! | `resource` with an image `blob`          | `image`                                        |
//! | `resource_link`                          | `text` naming the link                         |
//! | anything else (audio, other media types) | `text` saying what was left out                |
//! | no content, `structuredContent`          | its JSON text                                  |

use serde_json::{json, Map, Value};

use crate::engine::run::feedback as fb;
use crate::engine::tools::tool::ToolOutcome;

/// The image types the Messages API takes.
const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// A `tools/call` result (its JSON) as the tool's outcome. `isError: true` is the tool's own
/// words for the model; anything else is its output.
pub fn outcome(result: &Value) -> ToolOutcome {
    let empty = Vec::new();
    let content = result
        .get("content")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    // The API refuses an empty text block, which would end the whole run: leave those out.
    let blocks: Vec<Value> = content
        .iter()
        .map(block)
        .filter(|b| b["type"] != "text" || b["text"].as_str().is_some_and(|t| !t.trim().is_empty()))
        .collect();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return ToolOutcome::ToolError(words(&blocks));
    }
    match blocks.as_slice() {
        [] => match result.get("structuredContent") {
            Some(v) if !v.is_null() => ToolOutcome::Output {
                content: v.to_string(),
                json: true,
            },
            _ => ToolOutcome::Output {
                content: String::new(),
                json: false,
            },
        },
        [only] if only["type"] == "text" => ToolOutcome::Output {
            content: only["text"].as_str().unwrap_or_default().to_owned(),
            json: false,
        },
        _ => ToolOutcome::Blocks(Value::Array(blocks).to_string()),
    }
}

/// The text of an error result: its text blocks, one per line (what else it holds described).
fn words(blocks: &[Value]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| (b["type"] == "text").then(|| b["text"].as_str()).flatten())
        .collect();
    texts.join("\n")
}

fn text(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

fn str_of<'a>(block: &'a Value, key: &str) -> Option<&'a str> {
    block.get(key).and_then(Value::as_str)
}

/// One MCP content block as a `tool_result` content block.
fn block(b: &Value) -> Value {
    let kind = str_of(b, "type").unwrap_or("(none)");
    match kind {
        "text" => text(str_of(b, "text").unwrap_or_default().to_owned()),
        "image" => image(str_of(b, "mimeType"), str_of(b, "data")),
        "resource" => resource(b.get("resource").unwrap_or(&Value::Null)),
        "resource_link" => {
            let uri = str_of(b, "uri").unwrap_or("(no uri)");
            let name = str_of(b, "name").unwrap_or(uri);
            let mime = str_of(b, "mimeType")
                .map(|m| format!(" ({m})"))
                .unwrap_or_default();
            text(format!("Resource link: {name} <{uri}>{mime}"))
        }
        "audio" => text(fb::mcp_audio(
            str_of(b, "mimeType").unwrap_or("of an unknown type"),
        )),
        other => text(fb::mcp_unknown_block(&short(other))),
    }
}

fn image(mime: Option<&str>, data: Option<&str>) -> Value {
    match (mime, data) {
        (Some(mime), Some(data)) if IMAGE_TYPES.contains(&mime) => json!({
            "type": "image",
            "source": { "type": "base64", "media_type": mime, "data": data },
        }),
        (mime, _) => text(fb::mcp_image(&short(mime.unwrap_or("unknown")))),
    }
}

/// An embedded resource: its text as a plain-text document, a PDF or an image from its blob.
fn resource(r: &Value) -> Value {
    let uri = str_of(r, "uri").unwrap_or_default();
    let mime = str_of(r, "mimeType");
    let mut doc = Map::new();
    doc.insert("type".into(), "document".into());
    if let Some(t) = str_of(r, "text").filter(|t| !t.trim().is_empty()) {
        doc.insert(
            "source".into(),
            json!({ "type": "text", "media_type": "text/plain", "data": t }),
        );
    } else if let Some(blob) = str_of(r, "blob") {
        match mime {
            Some("application/pdf") => {
                doc.insert(
                    "source".into(),
                    json!({ "type": "base64", "media_type": "application/pdf", "data": blob }),
                );
            }
            Some(m) if m.starts_with("image/") => return image(Some(m), Some(blob)),
            other => {
                return text(fb::mcp_resource_blob(
                    &short(uri),
                    &short(other.unwrap_or("of an unknown type")),
                ))
            }
        }
    } else {
        return text(fb::mcp_empty_resource(&short(uri)));
    }
    if !uri.is_empty() {
        doc.insert("title".into(), uri.into());
    }
    Value::Object(doc)
}

/// A server-given word quoted in our own sentence, cut so it cannot flood it.
fn short(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(result: Value) -> Value {
        match outcome(&result) {
            ToolOutcome::Blocks(b) => serde_json::from_str(&b).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn one_text_is_the_plain_output() {
        let r = json!({ "content": [{ "type": "text", "text": "Order 4821: shipped" }], "structuredContent": { "s": 1 } });
        assert_eq!(
            outcome(&r),
            ToolOutcome::Output {
                content: "Order 4821: shipped".into(),
                json: false
            }
        );
    }

    #[test]
    fn no_content_is_structured_content_or_empty() {
        assert_eq!(
            outcome(&json!({ "content": [], "structuredContent": { "a": 1 } })),
            ToolOutcome::Output {
                content: r#"{"a":1}"#.into(),
                json: true
            }
        );
        assert_eq!(
            outcome(&json!({ "content": [] })),
            ToolOutcome::Output {
                content: String::new(),
                json: false
            }
        );
    }

    #[test]
    fn blank_text_blocks_are_left_out() {
        let r = json!({ "content": [{ "type": "text", "text": "" }, { "type": "text" }, { "type": "text", "text": " a " }, { "type": "text", "text": "  " }] });
        assert_eq!(
            outcome(&r),
            ToolOutcome::Output {
                content: " a ".into(),
                json: false
            }
        );
        let r = json!({ "content": [{ "type": "text", "text": "" }, { "type": "image", "mimeType": "image/png", "data": "AA" }] });
        assert_eq!(blocks(r).as_array().unwrap().len(), 1);
    }

    #[test]
    fn is_error_is_the_tools_own_words() {
        let r = json!({ "isError": true, "content": [{ "type": "text", "text": "down" }, { "type": "text", "text": "retry later" }] });
        assert_eq!(
            outcome(&r),
            ToolOutcome::ToolError("down\nretry later".into())
        );
    }

    #[test]
    fn each_kind_of_block_maps() {
        let r = json!({ "content": [
            { "type": "image", "mimeType": "image/png", "data": "AAAA" },
            { "type": "image", "mimeType": "image/tiff", "data": "AAAA" },
            { "type": "resource", "resource": { "uri": "file:///a.txt", "mimeType": "text/plain", "text": "notes" } },
            { "type": "resource", "resource": { "uri": "file:///a.pdf", "mimeType": "application/pdf", "blob": "JVBE" } },
            { "type": "resource", "resource": { "uri": "file:///a.zip", "mimeType": "application/zip", "blob": "UEsD" } },
            { "type": "resource_link", "uri": "file:///b.pdf", "name": "b.pdf", "mimeType": "application/pdf" },
            { "type": "audio", "mimeType": "audio/wav", "data": "AAAA" },
            { "type": "hologram" },
        ] });
        let b = blocks(r);
        assert_eq!(
            b[0],
            json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AAAA" } })
        );
        assert!(b[1]["text"].as_str().unwrap().contains("image/tiff"));
        assert_eq!(
            b[2],
            json!({ "type": "document", "source": { "type": "text", "media_type": "text/plain", "data": "notes" }, "title": "file:///a.txt" })
        );
        assert_eq!(b[3]["source"]["media_type"], "application/pdf");
        assert!(b[4]["text"].as_str().unwrap().contains("application/zip"));
        assert_eq!(
            b[5]["text"],
            "Resource link: b.pdf <file:///b.pdf> (application/pdf)"
        );
        assert!(b[6]["text"].as_str().unwrap().contains("audio/wav"));
        assert!(b[7]["text"].as_str().unwrap().contains("hologram"));
    }
}
