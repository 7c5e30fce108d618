//! Go to definition and find references, over the occurrences the
//! checker's name resolution gives (`analysis.rs`).

use crate::document::State;
use lsp_types::{GotoDefinitionParams, GotoDefinitionResponse, Location, ReferenceParams};

pub fn definition(state: &State, p: GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
    let tdp = p.text_document_position_params;
    let uri = tdp.text_document.uri;
    let doc = state.doc(&uri)?;
    let a = &doc.analysis;
    let o = a.occurrence_at(doc.offset(tdp.position))?;
    let decl = a.declaration(&o.target)?;
    Some(GotoDefinitionResponse::Scalar(Location::new(
        uri.clone(),
        doc.range(decl),
    )))
}

pub fn references(state: &State, p: ReferenceParams) -> Option<Vec<Location>> {
    let tdp = p.text_document_position;
    let uri = tdp.text_document.uri;
    let doc = state.doc(&uri)?;
    let a = &doc.analysis;
    let o = a.occurrence_at(doc.offset(tdp.position))?;
    Some(
        a.occurrences_of(&o.target)
            .into_iter()
            .filter(|x| p.context.include_declaration || !x.decl)
            .map(|x| Location::new(uri.clone(), doc.range(x.span)))
            .collect(),
    )
}
