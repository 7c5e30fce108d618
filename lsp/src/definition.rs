//! Go to definition and find references, over the occurrences the
//! checker's name resolution gives (`analysis.rs`), in the last text that
//! checked where the current one does not (`view.rs`).

use crate::document::State;
use lsp_types::{GotoDefinitionParams, GotoDefinitionResponse, Location, ReferenceParams};

pub fn definition(state: &State, p: GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
    let tdp = p.text_document_position_params;
    let uri = tdp.text_document.uri;
    let doc = state.doc(&uri)?;
    let view = doc.view();
    let a = view.analysis;
    let o = a.occurrence_at(view.to_view(doc.offset(tdp.position))?)?;
    let decl = view.to_doc(a.declaration(&o.target)?)?;
    Some(GotoDefinitionResponse::Scalar(Location::new(
        uri.clone(),
        doc.range(decl),
    )))
}

pub fn references(state: &State, p: ReferenceParams) -> Option<Vec<Location>> {
    let tdp = p.text_document_position;
    let uri = tdp.text_document.uri;
    let doc = state.doc(&uri)?;
    let view = doc.view();
    let a = view.analysis;
    let o = a.occurrence_at(view.to_view(doc.offset(tdp.position))?)?;
    Some(
        a.occurrences_of(&o.target)
            .into_iter()
            .filter(|x| p.context.include_declaration || !x.decl)
            .filter_map(|x| view.to_doc(x.span))
            .map(|span| Location::new(uri.clone(), doc.range(span)))
            .collect(),
    )
}
