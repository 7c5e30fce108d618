//! Entry points for the fuzzer (`fuzz/fuzz_targets/lsp.rs`,
//! docs/fuzzing.md): the framing on arbitrary bytes, and a session of
//! edits with requests at arbitrary positions. Not part of the crate's
//! interface.

use crate::document::State;
use crate::server::{handle_notification, handle_request};
use lsp_server::{Notification, Request, RequestId};
use serde_json::json;

/// Read every frame of `bytes`: how many were read, or why the stream
/// could not be followed.
pub fn frames(bytes: &[u8]) -> Result<usize, String> {
    let mut r = std::io::BufReader::new(bytes);
    let mut n = 0;
    loop {
        match crate::transport::read_frame(&mut r) {
            Ok(Some(_)) => n += 1,
            Ok(None) => return Ok(n),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Open a document with `texts[0]`, change it to each text after, and
/// after each change ask every request the server answers at each of
/// `positions` (line, UTF-16 column). The failures found: answers that are
/// internal errors (a handler panicked) and `accl::internal` diagnostics
/// (the front end panicked).
pub fn edits(texts: &[String], positions: &[(u32, u32)]) -> Vec<String> {
    edits_at("untitled:fuzz.accl", texts, positions)
}

/// [`edits`] on a document at `uri` (a `file:` URI reads the document's
/// imports from its folder).
pub fn edits_at(uri: &str, texts: &[String], positions: &[(u32, u32)]) -> Vec<String> {
    let mut state = State::default();
    let mut failures = Vec::new();
    let mut id = 0;
    for (v, text) in texts.iter().enumerate() {
        let n = if v == 0 {
            Notification::new(
                "textDocument/didOpen".into(),
                json!({"textDocument": {"uri": uri, "languageId": "accl", "version": 0, "text": text}}),
            )
        } else {
            Notification::new(
                "textDocument/didChange".into(),
                json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": text}]}),
            )
        };
        for out in handle_notification(&mut state, n) {
            if out.params.to_string().contains("accl::internal") {
                failures.push(format!("accl::internal diagnostic on {text:?}"));
            }
        }
        let doc = json!({"textDocument": {"uri": uri}});
        let mut asks = vec![
            ("textDocument/documentSymbol", doc.clone()),
            ("textDocument/semanticTokens/full", doc),
        ];
        for &(line, character) in positions {
            let at = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
            let refs = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character},
                              "context": {"includeDeclaration": true}});
            asks.push(("textDocument/hover", at.clone()));
            asks.push(("textDocument/definition", at.clone()));
            asks.push(("textDocument/references", refs));
            asks.push(("textDocument/completion", at));
        }
        {
            for (method, params) in asks {
                id += 1;
                let r = handle_request(
                    &state,
                    Request::new(RequestId::from(id), method.into(), params),
                );
                if let Err(e) = r.response_result {
                    failures.push(format!("{method} on {text:?}: {}", e.message));
                }
            }
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_session_of_broken_edits_has_no_failures() {
        let texts: Vec<String> = [
            "let x = 1;\nlet y = x + 1;\n",
            "let x = 1;\nlet y = x + ;\n",
            "fn f(a: f32) -> f32 {\n  return a *\n}\nlet z = f(1.0);\n",
            "}}}{{{ \u{1f600} let",
            "",
        ]
        .map(String::from)
        .to_vec();
        let positions = [(0, 0), (0, 4), (1, 4), (1, 9), (2, 2), (9, 99)];
        assert_eq!(super::edits(&texts, &positions), Vec::<String>::new());
        assert_eq!(super::frames(b"Content-Length: 2\r\n\r\n{}"), Ok(1));
    }
}
