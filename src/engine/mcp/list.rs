//! Reading a server's tool list within its byte budget: every page's tools are measured as the
//! transport parsed them, before anything of them is copied, redacted or compiled; a list past
//! the budget is refused whole, a tool past its own limit is left out and named.

use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, ServiceError};
use rmcp::RoleClient;
use serde::Serialize;
use serde_json::Value;

use super::capped::{LISTING_TOO_LARGE, LISTING_TOO_LARGE_CODE};
use super::config::{MAX_LISTING_BYTES, MAX_LIST_PAGES, MAX_SCHEMA_BYTES, MAX_TOOL_BYTES};
use super::connect::plain;
use crate::engine::wire::redact::Redactor;

/// A server's tools as listed.
#[derive(Default)]
pub struct Listing {
    /// Each tool's JSON, the server's secrets taken out.
    pub tools: Vec<Value>,
    /// The tools left out for their size: each name (secrets taken out) and why.
    pub oversized: Vec<(String, String)>,
}

/// Why a tool list was refused for its size.
pub fn too_large() -> String {
    format!(
        "its tool list is larger than {} MiB ({MAX_LISTING_BYTES} bytes of JSON), the most taken from one MCP server, so none of it was kept",
        MAX_LISTING_BYTES / (1024 * 1024)
    )
}

/// Every page of `tools/list`, the server's secrets taken out.
pub async fn list_all(peer: &Peer<RoleClient>, redactor: &Redactor) -> Result<Listing, String> {
    let mut out = Listing::default();
    let mut spent = 0usize;
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let page = match peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
        {
            Ok(page) => page,
            Err(ServiceError::McpError(e))
                if e.code.0 == LISTING_TOO_LARGE_CODE && e.message == LISTING_TOO_LARGE =>
            {
                return Err(too_large());
            }
            Err(e) => return Err(format!("its tools/list failed ({})", plain(&e.to_string()))),
        };
        for tool in &page.tools {
            let size = json_size(tool, MAX_LISTING_BYTES - spent).ok_or_else(too_large)?;
            spent += size;
            let over = if size > MAX_TOOL_BYTES {
                Some(format!(
                    "its definition is larger than {} KiB, the most one tool may take",
                    MAX_TOOL_BYTES / 1024
                ))
            } else if json_size(&*tool.input_schema, MAX_SCHEMA_BYTES).is_none() {
                Some(format!(
                    "its input schema is larger than {} KiB, the most one schema may take",
                    MAX_SCHEMA_BYTES / 1024
                ))
            } else {
                None
            };
            if let Some(why) = over {
                out.oversized
                    .push((redactor.redact(&tool.name).into_owned(), why));
                continue;
            }
            let mut json = serde_json::to_value(tool)
                .map_err(|e| format!("its tool list could not be read ({e})"))?;
            // What the server lists goes to the model and the developer; it may echo the
            // credentials it was sent (a name holding one is then no name the API takes).
            redactor.redact_json(&mut json);
            out.tools.push(json);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(out),
        }
    }
    Err(format!(
        "its tools/list went on past {MAX_LIST_PAGES} pages"
    ))
}

/// The size of `value` as compact JSON, if at most `max` bytes; counted as it is written, so a
/// larger value costs no memory and stops being written at the limit.
fn json_size(value: &impl Serialize, max: usize) -> Option<usize> {
    struct Count {
        bytes: usize,
        max: usize,
    }
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes += buf.len();
            if self.bytes > self.max {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { bytes: 0, max };
    serde_json::to_writer(&mut count, value).ok()?;
    Some(count.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_is_counted_up_to_the_limit() {
        let value = serde_json::json!({ "a": "x".repeat(100) });
        let size = value.to_string().len();
        assert_eq!(json_size(&value, size), Some(size));
        assert_eq!(json_size(&value, size - 1), None);
    }
}
