//! The main loop: the initialize handshake, then requests and
//! notifications one at a time until `shutdown` and `exit`.
//!
//! A handler that panics is answered with an `InternalError` response (and
//! a text whose analysis panics gets a diagnostic saying so): one bad input
//! must not take the editor's server down.

use crate::document::{Document, State};
use crate::transport::{read_frame, Broken, Frame};
use crate::{completion, definition, diagnostics, hover, semantic_tokens, symbols};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{
    Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest, References,
    SemanticTokensFullRequest,
};
use lsp_types::{
    CompletionOptions, HoverProviderCapability, InitializeResult, OneOf, PositionEncodingKind,
    PublishDiagnosticsParams, SemanticTokensFullOptions, SemanticTokensOptions,
    SemanticTokensServerCapabilities, ServerCapabilities, ServerInfo, TextDocumentSyncCapability,
    TextDocumentSyncKind, Uri,
};
use std::panic::{catch_unwind, AssertUnwindSafe};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Serve the protocol on stdin/stdout until the client says `exit`, with
/// the framing of [`crate::transport`]: a message it cannot use is logged
/// on stderr (and answered, where it has an id) and the session goes on; a
/// stream it cannot follow ends it with the reason.
pub fn run() -> Result<(), Error> {
    let (to_client, outgoing) = crossbeam_channel::bounded::<Message>(0);
    let (incoming, from_client) = crossbeam_channel::bounded::<Message>(0);
    let answers = to_client.clone();
    let reader = std::thread::spawn(move || -> Result<(), Broken> {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        while let Some(frame) = read_frame(&mut input)? {
            match frame {
                Frame::Message(m) => {
                    let exit = matches!(&m, Message::Notification(n) if n.method == "exit");
                    if incoming.send(m).is_err() || exit {
                        break;
                    }
                }
                Frame::Skipped(why, answer) => {
                    eprintln!("accl lsp: {why}");
                    if let Some(a) = answer {
                        let _ = answers.send(a.into());
                    }
                }
            }
        }
        Ok(())
    });
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        for m in outgoing {
            m.write(&mut out)?;
        }
        Ok(())
    });
    let conn = Connection {
        sender: to_client,
        receiver: from_client,
    };
    let served = serve(&conn);
    // The reader has ended (after `exit`, at the end of the input or on a
    // stream it cannot follow) when its channel is closed; after another
    // error it may still wait on stdin, and the process ends without it.
    let reader_done = matches!(
        conn.receiver.try_recv(),
        Err(crossbeam_channel::TryRecvError::Disconnected)
    ) || served.is_ok();
    drop(conn);
    if !reader_done {
        return served;
    }
    let read = reader.join().map_err(|_| "the reader thread panicked")?;
    writer.join().map_err(|_| "the writer thread panicked")??;
    // A stream that could not be followed is the reason the session ended.
    read?;
    served
}

pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![":".to_string()]),
            ..Default::default()
        }),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: semantic_tokens::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                ..Default::default()
            },
        )),
        ..Default::default()
    }
}

/// Serve the protocol on a connection: the handshake, then the main loop.
pub fn serve(conn: &Connection) -> Result<(), Error> {
    let (id, _params) = conn.initialize_start()?;
    let result = InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo {
            name: "accl".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    conn.initialize_finish(id, serde_json::to_value(result)?)?;
    let mut state = State::default();
    for msg in &conn.receiver {
        match msg {
            Message::Request(req) => {
                if conn.handle_shutdown(&req)? {
                    return Ok(());
                }
                let resp = handle_request(&state, req);
                conn.sender.send(resp.into())?;
            }
            Message::Notification(n) => {
                for out in handle_notification(&mut state, n) {
                    conn.sender.send(out.into())?;
                }
            }
            Message::Response(_) => {}
        }
    }
    // The protocol's exit status for an `exit` (or a closed input) that no
    // `shutdown` came before is 1.
    Err("the client ended the session without `shutdown`".into())
}

pub(crate) fn handle_request(state: &State, req: Request) -> Response {
    use lsp_types::request::Request as R;
    let id = req.id.clone();
    match req.method.as_str() {
        HoverRequest::METHOD => answer::<HoverRequest>(state, req, hover::hover),
        GotoDefinition::METHOD => answer::<GotoDefinition>(state, req, definition::definition),
        References::METHOD => answer::<References>(state, req, definition::references),
        Completion::METHOD => answer::<Completion>(state, req, completion::completion),
        DocumentSymbolRequest::METHOD => {
            answer::<DocumentSymbolRequest>(state, req, symbols::document_symbols)
        }
        SemanticTokensFullRequest::METHOD => {
            answer::<SemanticTokensFullRequest>(state, req, semantic_tokens::full)
        }
        other => Response::new_err(
            id,
            ErrorCode::MethodNotFound as i32,
            format!("accl lsp does not handle `{other}`"),
        ),
    }
}

/// Decode a request's parameters, run its handler (a panic becomes an
/// error response) and encode the result.
fn answer<R: lsp_types::request::Request>(
    state: &State,
    req: Request,
    f: fn(&State, R::Params) -> R::Result,
) -> Response {
    let id: RequestId = req.id;
    let params: R::Params = match serde_json::from_value(req.params) {
        Ok(p) => p,
        Err(e) => {
            return Response::new_err(id, ErrorCode::InvalidParams as i32, e.to_string());
        }
    };
    match catch_unwind(AssertUnwindSafe(|| lang::stack::large(|| f(state, params)))) {
        Ok(result) => Response::new_ok(id, result),
        Err(_) => Response::new_err(
            id,
            ErrorCode::InternalError as i32,
            format!("accl lsp: the `{}` handler failed on this text", R::METHOD),
        ),
    }
}

/// Apply a notification; returns what to send back (diagnostics).
pub(crate) fn handle_notification(state: &mut State, n: Notification) -> Vec<Notification> {
    match n.method.as_str() {
        DidOpenTextDocument::METHOD => {
            let Ok(p) =
                n.extract::<lsp_types::DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD)
            else {
                return Vec::new();
            };
            let key = p.text_document.uri.as_str().to_string();
            let previous = state.docs.remove(&key);
            let dir = crate::imports::dir_of(p.text_document.uri.as_str());
            let doc = Document::new(
                p.text_document.text,
                p.text_document.version,
                previous,
                dir.as_deref(),
            );
            let out = publish(&p.text_document.uri, &doc);
            state.docs.insert(key, doc);
            vec![out]
        }
        DidChangeTextDocument::METHOD => {
            let Ok(p) =
                n.extract::<lsp_types::DidChangeTextDocumentParams>(DidChangeTextDocument::METHOD)
            else {
                return Vec::new();
            };
            let key = p.text_document.uri.as_str().to_string();
            let previous = state.docs.remove(&key);
            let mut text = previous
                .as_ref()
                .map(|d| d.text.clone())
                .unwrap_or_default();
            for change in p.content_changes {
                match change.range {
                    // The server asks for whole texts; a client that sends
                    // ranges anyway is followed.
                    Some(r) => {
                        let ix = crate::document::LineIndex::new(&text);
                        let a = ix.offset(&text, r.start);
                        let b = ix.offset(&text, r.end).max(a);
                        text.replace_range(a..b, &change.text);
                    }
                    None => text = change.text,
                }
            }
            let dir = crate::imports::dir_of(p.text_document.uri.as_str());
            let doc = Document::new(text, p.text_document.version, previous, dir.as_deref());
            let out = publish(&p.text_document.uri, &doc);
            state.docs.insert(key, doc);
            vec![out]
        }
        DidCloseTextDocument::METHOD => {
            let Ok(p) =
                n.extract::<lsp_types::DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD)
            else {
                return Vec::new();
            };
            if let Some(old) = state.docs.remove(p.text_document.uri.as_str()) {
                lang::stack::large(|| drop(old));
            }
            vec![Notification::new(
                PublishDiagnostics::METHOD.to_string(),
                PublishDiagnosticsParams::new(p.text_document.uri, Vec::new(), None),
            )]
        }
        _ => Vec::new(),
    }
}

fn publish(uri: &Uri, doc: &Document) -> Notification {
    let diags =
        catch_unwind(AssertUnwindSafe(|| diagnostics::to_lsp(uri, doc))).unwrap_or_default();
    Notification::new(
        PublishDiagnostics::METHOD.to_string(),
        PublishDiagnosticsParams::new(uri.clone(), diags, Some(doc.version)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::request::Request as _;

    #[test]
    fn a_handler_that_panics_gets_an_error_response() {
        let req = Request::new(
            RequestId::from(7),
            HoverRequest::METHOD.to_string(),
            serde_json::json!({
                "textDocument": {"uri": "file:///a.accl"},
                "position": {"line": 0, "character": 0},
            }),
        );
        let resp = answer::<HoverRequest>(&State::default(), req, |_, _| panic!("a bug"));
        assert_eq!(resp.id, RequestId::from(7));
        assert_eq!(
            resp.response_result.unwrap_err().code,
            ErrorCode::InternalError as i32
        );
    }

    #[test]
    fn bad_parameters_get_an_error_response() {
        let req = Request::new(
            RequestId::from(8),
            HoverRequest::METHOD.to_string(),
            serde_json::json!({"nonsense": true}),
        );
        let resp = handle_request(&State::default(), req);
        assert_eq!(
            resp.response_result.unwrap_err().code,
            ErrorCode::InvalidParams as i32
        );
    }
}
