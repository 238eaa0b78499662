//! The HTTP/1.1 side of the test server: one request off the wire, one answer onto it, and the
//! `{echo:NAME}` substitution of a gateway that writes the request's headers back.

use std::collections::BTreeMap;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One HTTP/1.1 request off the wire.
pub(super) struct Incoming {
    pub method: String,
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

/// `text` with `{echo:NAME}` replaced by the request's header NAME as it was sent (`(none)` if
/// it was not), and `{echo-escaped:NAME}` by the same value with every character written as a
/// JSON `\uXXXX` escape: in a JSON string it decodes to the value, yet never matches it as text;
/// `{echo-token:NAME}` by the value's last word (the token of `Bearer <token>`, as a gateway that
/// names the token it was sent writes it).
pub fn echo(text: &str, headers: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("{echo") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(end) = tail.find('}') else {
            break;
        };
        let (escaped, token, name) = match tail[1..end].split_once(':') {
            Some(("echo", name)) => (false, false, name),
            Some(("echo-escaped", name)) => (true, false, name),
            Some(("echo-token", name)) => (false, true, name),
            _ => {
                out.push_str(&tail[..=end]);
                rest = &tail[end + 1..];
                continue;
            }
        };
        let mut value = headers.get(name).map_or("(none)", String::as_str);
        if token {
            value = value.split_whitespace().last().unwrap_or(value);
        }
        if escaped {
            for unit in value.encode_utf16() {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push_str(value);
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Reads one request (`Ok(None)`: the client closed the connection between requests).
pub(super) async fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<Option<Incoming>, String> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head =
                std::str::from_utf8(&buf[..end]).map_err(|e| format!("head is not UTF-8: {e}"))?;
            let mut lines = head.split("\r\n");
            let mut request_line = lines.next().unwrap_or_default().split(' ');
            let method = request_line.next().unwrap_or_default().to_owned();
            let path = request_line.next().unwrap_or_default().to_owned();
            let mut headers = BTreeMap::new();
            for line in lines {
                let (name, value) = line
                    .split_once(':')
                    .ok_or_else(|| format!("bad header line {line:?}"))?;
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
            }
            let length: usize = headers
                .get("content-length")
                .ok_or("no content-length")?
                .parse()
                .map_err(|e| format!("bad content-length: {e}"))?;
            let total = end + 4 + length;
            while buf.len() < total {
                if !read_more(stream, buf).await {
                    return Err("the connection closed in the middle of a body".into());
                }
            }
            let body = buf[end + 4..total].to_vec();
            buf.drain(..total);
            return Ok(Some(Incoming {
                method,
                path,
                headers,
                body,
            }));
        }
        if !read_more(stream, buf).await {
            return Ok(None);
        }
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    match stream.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

pub(super) async fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &str,
    headers: &[(String, String)],
    request_id: &str,
) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nrequest-id: {request_id}\r\n",
        if status < 400 { "OK" } else { "Error" },
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(body);
    stream.write_all(out.as_bytes()).await?;
    stream.flush().await
}
