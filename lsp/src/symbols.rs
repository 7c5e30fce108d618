//! Document symbols: the functions, top-level variables and constants of
//! a script, from its syntax tree (so they are there while it has errors).

use crate::document::State;
use lang::ast::StmtKind;
use lsp_types::{DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, SymbolKind};

pub fn document_symbols(state: &State, p: DocumentSymbolParams) -> Option<DocumentSymbolResponse> {
    let doc = state.doc(&p.text_document.uri)?;
    let a = &doc.analysis;
    let mut out = Vec::new();
    // The document's own statements (after the files it imports).
    let base = a.base as u32;
    for s in a.ast.stmts.iter().filter(|s| s.span.start >= base) {
        if let StmtKind::LetTuple { pats, .. } = &s.kind {
            for p in pats.iter().filter(|p| !p.is_wildcard()) {
                out.push(symbol(doc, s, &p.name, SymbolKind::VARIABLE, None));
            }
            continue;
        }
        let (name, kind, detail) = match &s.kind {
            StmtKind::Fn(f) => {
                let detail = a.program.as_ref().and_then(|p| {
                    p.functions
                        .iter()
                        .find(|(_, h)| h.span == f.span)
                        .map(|(_, h)| crate::hover::fn_signature(h))
                });
                (&f.name, SymbolKind::FUNCTION, detail)
            }
            StmtKind::Let { name, .. } => (name, SymbolKind::VARIABLE, None),
            StmtKind::Const { name, .. } => (name, SymbolKind::CONSTANT, None),
            _ => continue,
        };
        out.push(symbol(doc, s, name, kind, detail));
    }
    Some(DocumentSymbolResponse::Nested(out))
}

fn symbol(
    doc: &crate::document::Document,
    s: &lang::ast::Stmt,
    name: &lang::ast::Ident,
    kind: SymbolKind,
    detail: Option<String>,
) -> DocumentSymbol {
    #[allow(deprecated)]
    DocumentSymbol {
        name: name.name.clone(),
        detail,
        kind,
        tags: None,
        deprecated: None,
        range: doc.range(own(doc, s.span.to(name.span))),
        selection_range: doc.range(own(doc, name.span)),
        children: None,
    }
}

/// A span of the analysed text as one of the document.
fn own(doc: &crate::document::Document, s: lang::Span) -> lang::Span {
    let b = doc.analysis.base as u32;
    lang::Span::new(
        s.start.saturating_sub(b) as usize,
        s.end.saturating_sub(b) as usize,
    )
}
