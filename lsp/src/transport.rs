//! The protocol's framing on stdin/stdout: `Content-Length` headers and a
//! JSON body. lsp-server's own reader allocates whatever length a header
//! names (a huge one aborted the process) and ends the session on any
//! malformed message with a bare "malformed header"; this one refuses a
//! body over [`MAX_BODY`] (skipped unread, the session goes on), answers a
//! body that is not a message with a JSON-RPC `ParseError` where it can,
//! and ends only where the stream cannot be followed any more (a header
//! without a usable length), saying why.

use lsp_server::{Message, Response};
use std::io::{self, BufRead, Read};

/// The largest body read: far above any script an editor sends (the text
/// of every open document travels whole in `didOpen`/`didChange`).
pub const MAX_BODY: usize = 64 << 20;

/// The longest header line read; no header of the protocol comes near it.
const MAX_HEADER_LINE: usize = 4096;

/// One frame read from the client.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A body that is not a message (not UTF-8, not JSON, not JSON-RPC),
    /// or one over [`MAX_BODY`]: what to log, and the answer to send (a
    /// `ParseError` response to the request's id, when there was one to
    /// read).
    Skipped(String, Option<Response>),
}

/// Why the stream cannot be followed.
#[derive(Debug)]
pub enum Broken {
    Io(io::Error),
    /// A header the framing does not allow: its text, and what is wrong.
    Header(String, &'static str),
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Io(e) => write!(f, "reading the client's messages: {e}"),
            Broken::Header(text, why) => write!(
                f,
                "the client sent the header {text:?}: {why}; the end of the message \
                 cannot be known, so the session ends (each message is `Content-Length: N` \
                 and an empty line, then N bytes of JSON)"
            ),
        }
    }
}

impl std::error::Error for Broken {}

/// Read the next frame; `None` at the end of the input.
pub fn read_frame(r: &mut impl BufRead) -> Result<Option<Frame>, Broken> {
    let mut length: Option<usize> = None;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        let n = r
            .by_ref()
            .take(MAX_HEADER_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(Broken::Io)?;
        if n == 0 {
            return match (first, length) {
                (true, _) => Ok(None),
                _ => Err(Broken::Io(io::ErrorKind::UnexpectedEof.into())),
            };
        }
        first = false;
        let text = String::from_utf8_lossy(&line).into_owned();
        if n > MAX_HEADER_LINE {
            return Err(Broken::Header(
                text.chars().take(80).collect(),
                "a header line longer than 4096 bytes",
            ));
        }
        let header = text.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(Broken::Header(
                header.into(),
                "a header has a `Name: value` form",
            ));
        };
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            match value.trim().parse::<u64>() {
                Ok(v) => length = Some(usize::try_from(v).unwrap_or(usize::MAX)),
                Err(_) => {
                    return Err(Broken::Header(
                        header.into(),
                        "the length is not a whole number of bytes",
                    ))
                }
            }
        }
    }
    let Some(length) = length else {
        return Err(Broken::Header(String::new(), "no `Content-Length` header"));
    };
    if length > MAX_BODY {
        let skipped =
            io::copy(&mut r.by_ref().take(length as u64), &mut io::sink()).map_err(Broken::Io)?;
        if (skipped as usize) < length {
            return Err(Broken::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        return Ok(Some(Frame::Skipped(
            format!(
                "skipped a message of {length} bytes (the limit is {} MiB)",
                MAX_BODY >> 20
            ),
            None,
        )));
    }
    let mut body = vec![0u8; length];
    r.read_exact(&mut body).map_err(Broken::Io)?;
    Ok(Some(parse_body(&body)))
}

/// The message in a body, or why it is none (with a `ParseError` answer to
/// its id where the body is a JSON object with one).
fn parse_body(body: &[u8]) -> Frame {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Frame::Skipped(format!("a message that is not JSON: {e}"), None),
    };
    let id = value.get("id").cloned();
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Frame::Message(m),
        Err(e) => {
            let answer = id.and_then(|id| serde_json::from_value(id).ok()).map(|id| {
                Response::new_err(
                    id,
                    lsp_server::ErrorCode::ParseError as i32,
                    format!("not a JSON-RPC message: {e}"),
                )
            });
            Frame::Skipped(format!("a message that is not JSON-RPC: {e}"), answer)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Result<Frame, String>> {
        let mut r = io::BufReader::new(input);
        let mut out = Vec::new();
        loop {
            match read_frame(&mut r) {
                Ok(Some(f)) => out.push(Ok(f)),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    fn framed(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    const EXIT: &str = r#"{"jsonrpc":"2.0","method":"exit"}"#;

    #[test]
    fn a_huge_length_is_an_error_not_an_abort() {
        // 2^60 bytes promised, 3 sent: the input ends inside the body.
        let mut input = b"Content-Length: 1152921504606846976\r\n\r\nabc".to_vec();
        input.extend(framed(EXIT));
        let f = frames(&input);
        assert_eq!(f.len(), 1);
        assert!(f[0].as_ref().is_err_and(|e| e.contains("reading")), "{f:?}");
    }

    #[test]
    fn a_body_over_the_limit_is_skipped_and_the_next_message_read() {
        let big = MAX_BODY + 1;
        let mut input = format!("Content-Length: {big}\r\n\r\n").into_bytes();
        input.extend(std::iter::repeat_n(b' ', big));
        input.extend(framed(EXIT));
        let f = frames(&input);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(matches!(&f[0], Ok(Frame::Skipped(why, None)) if why.contains("64 MiB")));
        assert!(
            matches!(&f[1], Ok(Frame::Message(Message::Notification(n))) if n.method == "exit")
        );
    }

    #[test]
    fn a_body_that_is_not_a_message_is_answered_and_the_session_goes_on() {
        let mut input = framed(r#"{"jsonrpc":"2.0","id":7,"method":5}"#);
        input.extend(framed("not json"));
        input.extend(framed(EXIT));
        let f = frames(&input);
        assert_eq!(f.len(), 3, "{f:?}");
        let Ok(Frame::Skipped(_, Some(answer))) = &f[0] else {
            panic!("{f:?}")
        };
        assert_eq!(answer.id, 7.into());
        assert_eq!(
            answer.response_result.as_ref().err().map(|e| e.code),
            Some(lsp_server::ErrorCode::ParseError as i32)
        );
        assert!(matches!(&f[1], Ok(Frame::Skipped(why, None)) if why.contains("not JSON")));
        assert!(matches!(&f[2], Ok(Frame::Message(_))));
    }

    #[test]
    fn malformed_headers_end_the_session_saying_why() {
        for (input, why) in [
            ("Content-Length: ten\r\n\r\n{}", "not a whole number"),
            ("Content-Type: json\r\n\r\n{}", "no `Content-Length`"),
            ("hello\r\n\r\n", "`Name: value`"),
        ] {
            let f = frames(input.as_bytes());
            assert!(
                matches!(f.last(), Some(Err(e)) if e.contains(why)),
                "{input:?}: {f:?}"
            );
        }
        let long = format!("X-{}: 1\r\n", "a".repeat(5000));
        let f = frames(long.as_bytes());
        assert!(
            matches!(f.last(), Some(Err(e)) if e.contains("4096")),
            "{f:?}"
        );
    }

    #[test]
    fn an_empty_input_is_the_end() {
        assert!(frames(b"").is_empty());
        // Headers cut off by the end of the input are not a clean end.
        assert!(frames(b"Content-Length: 2\r\n")[0].is_err());
    }
}
