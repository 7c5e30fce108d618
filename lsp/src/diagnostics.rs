//! The front end's diagnostics as LSP diagnostics: the code, the message,
//! the primary label's span as the range (its text after the message),
//! the other labels as related information and the help on a line of its
//! own, as `accl check` prints them.

use crate::document::Document;
use lang::Diag;
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};

pub fn to_lsp(uri: &Uri, doc: &Document) -> Vec<Diagnostic> {
    doc.analysis
        .diags
        .iter()
        .map(|d| one(uri, doc, d))
        .collect()
}

fn one(uri: &Uri, doc: &Document, d: &Diag) -> Diagnostic {
    let mut message = d.message.clone();
    if let Some((_, label)) = d.labels.first() {
        if !label.is_empty() && label != &d.message {
            message.push_str(&format!("\n{label}"));
        }
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .skip(1)
        .map(|(span, label)| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), doc.range(*span)),
            message: if label.is_empty() {
                "here".to_string()
            } else {
                label.clone()
            },
        })
        .collect();
    Diagnostic {
        range: doc.range(d.span()),
        severity: Some(if d.is_error() {
            DiagnosticSeverity::ERROR
        } else {
            DiagnosticSeverity::WARNING
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("accl".to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}
