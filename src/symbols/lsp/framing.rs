//! LSP base protocol: `Content-Length` framed JSON-RPC messages over a byte stream.
//!
//! Kept apart from the client so the framing is tested on byte slices, without a server.
//! Other headers (`Content-Type`) are read and ignored, as the spec allows.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

#[derive(Debug, thiserror::Error)]
pub(crate) enum FramingError {
    #[error("reading from the language server: {0}")]
    Io(#[from] std::io::Error),
    #[error("bad header line from the language server: {0:?}")]
    BadHeader(String),
    #[error("a message from the language server had no Content-Length")]
    NoLength,
    #[error("the language server sent a body that is not JSON: {0}")]
    BadJson(#[from] serde_json::Error),
}

/// One message, framed.
pub fn encode(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The next message; `None` at a clean end of stream (the server exited between messages).
pub(crate) async fn read_message<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<Option<Value>, FramingError> {
    let mut length = None;
    let mut seen_header = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return if seen_header {
                Err(FramingError::Io(std::io::ErrorKind::UnexpectedEof.into()))
            } else {
                Ok(None)
            };
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if seen_header {
                break;
            }
            continue;
        }
        seen_header = true;
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| FramingError::BadHeader(line.to_string()))?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| FramingError::BadHeader(line.to_string()))?,
            );
        }
    }
    let length = length.ok_or(FramingError::NoLength)?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    Ok(Some(serde_json::from_slice(&body)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_round_trip_through_the_framing_with_extra_headers() {
        let a = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": "é"});
        let b = serde_json::json!({"jsonrpc": "2.0", "method": "x"});
        let mut bytes = encode(&a);
        bytes.extend_from_slice(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
        bytes.extend_from_slice(&encode(&b));
        let mut reader = bytes.as_slice();
        assert_eq!(read_message(&mut reader).await.unwrap(), Some(a));
        assert_eq!(read_message(&mut reader).await.unwrap(), Some(b));
        assert_eq!(read_message(&mut reader).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_message_cut_off_is_an_error_not_an_end() {
        let bytes = b"Content-Length: 40\r\n\r\n{\"jsonrpc\"";
        let mut reader = bytes.as_slice();
        assert!(read_message(&mut reader).await.is_err());
        let mut reader: &[u8] = b"Content-Type: x\r\n\r\n{}";
        assert!(matches!(
            read_message(&mut reader).await,
            Err(FramingError::NoLength)
        ));
    }
}
