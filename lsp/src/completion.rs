//! Completion. In a construct's header (after `parallel`, `loop`, `data`,
//! ... and before its body) the clauses that construct accepts; after
//! `f32::` the constants of that type; elsewhere keywords, builtins (with
//! their synopsis), the OpenACC `acc_*` statement routines and constants,
//! and the functions, constants and variables in scope at the cursor.
//!
//! Scope comes from the tokens, not the checked program or the syntax
//! tree, so it works in a text that does not parse yet (as a text being
//! typed rarely does); the checker's types are added where the text checks.

use crate::document::State;
use crate::Target;
use lang::ast::DirectiveKind as DK;
use lang::token::Tok;
use lang::Span;
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionParams, CompletionResponse, Documentation,
};

/// The data and wait routines that are statements (each the directive it
/// is defined to equal), by their base names.
const ROUTINE_STATEMENTS: &[(&str, &str)] = &[
    ("acc_copyin", "enter data copyin(a)"),
    ("acc_create", "enter data create(a)"),
    ("acc_copyout", "exit data copyout(a)"),
    ("acc_delete", "exit data delete(a)"),
    ("acc_update_device", "update device(a)"),
    ("acc_update_self", "update self(a)"),
    ("acc_wait", "wait(q)"),
    ("acc_wait_all", "wait"),
];

/// OpenACC's `acc_device_t` values, usable as bare names.
const DEVICE_NAMES: &[&str] = &[
    "acc_device_none",
    "acc_device_default",
    "acc_device_host",
    "acc_device_not_host",
];

/// Words that start a construct only where a statement starts.
pub const CONSTRUCT_WORDS: &[&str] = &[
    "kernels",
    "serial",
    "host_data",
    "declare",
    "init",
    "shutdown",
];

pub fn completion(state: &State, p: CompletionParams) -> Option<CompletionResponse> {
    let tdp = p.text_document_position;
    let doc = state.doc(&tdp.text_document.uri)?;
    let offset = doc.offset(tdp.position);
    let before = doc.text.get(..offset)?;
    let start = before
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_alphanumeric() || c == '_')
        .last()
        .map_or(offset, |(i, _)| i);
    let prefix = &before[start..];
    let head = &before[..start];
    let mut items = if let Some(owner) = head.strip_suffix("::") {
        type_consts(owner)
    } else {
        match header(head) {
            Header::Clauses(kind, serial) => lang::check::clauses_of(kind)
                .into_iter()
                // `serial` runs one gang of one worker with vector length 1.
                .filter(|c| {
                    !(serial && matches!(*c, "num_gangs" | "num_workers" | "vector_length"))
                })
                .map(|c| item(c, CompletionItemKind::KEYWORD, Some("clause".to_string())))
                .collect(),
            Header::Args => in_scope(state, &tdp.text_document.uri, offset),
            Header::No => {
                let mut v = in_scope(state, &tdp.text_document.uri, offset);
                v.extend(general());
                v
            }
        }
    };
    items.retain(|i| i.label.starts_with(prefix));
    items.sort_by(|a, b| a.label.cmp(&b.label));
    items.dedup_by(|a, b| a.label == b.label);
    Some(CompletionResponse::Array(items))
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        ..Default::default()
    }
}

/// `f32::MAX` and the like, after `owner::`.
fn type_consts(head: &str) -> Vec<CompletionItem> {
    let owner: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    crate::builtins()
        .const_names()
        .filter_map(|n| {
            let (o, name) = n.split_once("::")?;
            (o == owner && !o.is_empty()).then(|| item(name, CompletionItemKind::CONSTANT, None))
        })
        .collect()
}

/// Where the cursor is relative to a construct's header.
enum Header {
    /// In the clause list of a construct of this kind (`true`: written
    /// `serial`, which takes no sizes).
    Clauses(DK, bool),
    /// Inside a clause's parentheses.
    Args,
    No,
}

/// Is the text before the cursor (up to the word being typed) in the
/// header of a construct: the current statement starts with a construct's
/// keywords and its body has not begun?
fn header(head: &str) -> Header {
    let toks = lang::lexer::lex(head).tokens;
    let from = toks
        .iter()
        .rposition(|t| matches!(t.1, Tok::Semi | Tok::LBrace | Tok::RBrace))
        .map_or(0, |i| i + 1);
    let stmt: Vec<Tok> = toks[from..].iter().map(|t| t.1).collect();
    let word = |i: usize| match stmt.get(i) {
        Some(Tok::Ident(w)) => Some(*w),
        _ => None,
    };
    let second_is_loop = matches!(stmt.get(1), Some(Tok::Loop));
    let kind = match stmt.first() {
        Some(Tok::Parallel) if second_is_loop => DK::ParallelLoop,
        Some(Tok::Parallel) => DK::Parallel,
        Some(Tok::Loop) => DK::Loop,
        Some(Tok::Data) => DK::Data,
        Some(Tok::Enter) => DK::EnterData,
        Some(Tok::Exit) => DK::ExitData,
        Some(Tok::Update) => DK::Update,
        Some(Tok::Wait) => DK::Wait,
        Some(Tok::Set) => DK::Set,
        _ => match word(0) {
            // `kernels`/`serial` become `parallel` parts in the parser.
            Some("kernels" | "serial") if second_is_loop => DK::ParallelLoop,
            Some("kernels" | "serial") => DK::Parallel,
            Some("host_data") => DK::HostData,
            Some("declare") => DK::Declare,
            Some("init") => DK::Init,
            Some("shutdown") => DK::Shutdown,
            _ => return Header::No,
        },
    };
    let mut depth = 0i32;
    for t in &stmt {
        match t {
            Tok::LParen => depth += 1,
            Tok::RParen => depth -= 1,
            Tok::For if depth <= 0 => return Header::No,
            _ => {}
        }
    }
    if depth > 0 {
        Header::Args
    } else {
        Header::Clauses(kind, word(0) == Some("serial"))
    }
}

/// Keywords, builtins, the `acc_*` statement routines and bare constants.
fn general() -> Vec<CompletionItem> {
    let mut v: Vec<CompletionItem> = Tok::KEYWORDS
        .iter()
        .chain(CONSTRUCT_WORDS)
        .map(|k| item(k, CompletionItemKind::KEYWORD, None))
        .collect();
    for (_, b) in crate::builtins().iter() {
        let mut i = item(
            &b.name,
            CompletionItemKind::FUNCTION,
            Some(b.synopsis.clone()),
        );
        i.documentation = Some(Documentation::String(
            crate::hover::effect_doc(b.effect).to_string(),
        ));
        v.push(i);
    }
    for (base, directive) in ROUTINE_STATEMENTS {
        let mut names = vec![base.to_string(), format!("{base}_async")];
        if matches!(*base, "acc_copyout" | "acc_delete") {
            names.push(format!("{base}_finalize"));
            names.push(format!("{base}_finalize_async"));
        }
        for n in names {
            v.push(item(
                &n,
                CompletionItemKind::FUNCTION,
                Some(format!("statement: {directive}")),
            ));
        }
    }
    for n in crate::builtins().const_names() {
        if let Some(bare) = n.strip_prefix("::") {
            v.push(item(
                bare,
                CompletionItemKind::CONSTANT,
                Some("i32".to_string()),
            ));
        }
    }
    for n in DEVICE_NAMES {
        v.push(item(
            n,
            CompletionItemKind::CONSTANT,
            Some("device type".to_string()),
        ));
    }
    v
}

/// The functions, constants and variables visible at `offset`.
fn in_scope(state: &State, uri: &lsp_types::Uri, offset: usize) -> Vec<CompletionItem> {
    let Some(doc) = state.doc(uri) else {
        return Vec::new();
    };
    let a = &doc.analysis;
    visible(&doc.text, offset)
        .into_iter()
        .map(|(span, name, kind)| {
            // The checker's type where the text checks.
            let detail = a
                .occurrences
                .iter()
                .find(|o| o.decl && o.span == span)
                .and_then(|o| match &o.target {
                    Target::Local(f, l) => Some(a.body(*f)?.locals[*l].ty.to_string()),
                    Target::Function(f) => Some(crate::hover::fn_signature(
                        &a.program.as_ref()?.functions[*f],
                    )),
                    _ => None,
                });
            item(name, kind, detail)
        })
        .collect()
}

/// The names declared before `offset` in the blocks around it (`let`,
/// `const`, parameters, loop variables) and every function, from the
/// tokens: a text being typed rarely parses, and its declarations before
/// the cursor are what completion needs.
fn visible(text: &str, offset: usize) -> Vec<(Span, &str, CompletionItemKind)> {
    use CompletionItemKind as K;
    let toks = lang::lexer::lex(text).tokens;
    let mut scopes: Vec<Vec<(Span, &str, K)>> = vec![Vec::new()];
    // Parameters and loop variables, for the block that opens next.
    let mut pending: Vec<(Span, &str, K)> = Vec::new();
    let mut functions = Vec::new();
    let mut in_params = false;
    for (i, &(s, t, e)) in toks.iter().enumerate() {
        let next = toks.get(i + 1).map(|x| x.1);
        let name = |j: usize| match toks.get(j) {
            Some(&(s, Tok::Ident(n), e)) => Some((Span::new(s, e), n)),
            _ => None,
        };
        if t == Tok::Fn {
            if let Some((span, n)) = name(i + 1) {
                functions.push((span, n, K::FUNCTION));
            }
        }
        if s >= offset {
            continue;
        }
        match t {
            // `let (a, _, c: f32) = ..`: the names after `(` and `,`.
            Tok::Let if next == Some(Tok::LParen) => {
                let ends = toks[i..].iter().find(|x| x.1 == Tok::Semi).map(|x| x.2);
                if let (true, Some(scope)) =
                    (ends.is_some_and(|end| end <= offset), scopes.last_mut())
                {
                    let pats = toks[i + 1..].iter().take_while(|x| x.1 != Tok::RParen);
                    let mut after_sep = false;
                    for &(ps, pt, pe) in pats {
                        match pt {
                            Tok::Ident(n) if after_sep && n != "_" => {
                                scope.push((Span::new(ps, pe), n, K::VARIABLE))
                            }
                            _ => {}
                        }
                        after_sep = matches!(pt, Tok::LParen | Tok::Comma);
                    }
                }
            }
            Tok::Let | Tok::Const => {
                if let (Some((span, n)), Some(scope)) = (name(i + 1), scopes.last_mut()) {
                    // Visible once its statement ends: not in its own initialiser.
                    let ends = toks[i..].iter().find(|x| x.1 == Tok::Semi).map(|x| x.2);
                    if ends.is_some_and(|end| end <= offset) {
                        let kind = if t == Tok::Let {
                            K::VARIABLE
                        } else {
                            K::CONSTANT
                        };
                        scope.push((span, n, kind));
                    }
                }
            }
            Tok::Fn => {
                pending.clear();
                in_params = true;
            }
            Tok::RParen if in_params => in_params = false,
            Tok::Ident(n) if in_params && next == Some(Tok::Colon) => {
                pending.push((Span::new(s, e), n, K::VARIABLE));
            }
            Tok::For => {
                if let Some((span, n)) = name(i + 1) {
                    pending.push((span, n, K::VARIABLE));
                }
            }
            Tok::LBrace => {
                in_params = false;
                scopes.push(std::mem::take(&mut pending));
            }
            Tok::RBrace if scopes.len() > 1 => {
                scopes.pop();
            }
            _ => {}
        }
    }
    scopes.into_iter().flatten().chain(functions).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, at: &str) -> Vec<String> {
        let offset = text.find(at).unwrap() + at.len();
        let mut v: Vec<String> = visible(text, offset)
            .into_iter()
            .map(|x| x.1.to_string())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn scope_from_tokens_in_a_text_that_does_not_parse() {
        let text = "let top = 1;\nfn f(x: f32, y: i32) -> f32 {\n    let inner = x;\n    \
                    for k in 0..y { let deep = 1; }\n    let w = CURSOR\n}\n\
                    fn g(unseen: f32) {}\nlet after = 2;\n";
        assert_eq!(
            names(text, "let w = "),
            ["f", "g", "inner", "top", "x", "y"]
        );
        assert_eq!(
            names(text, "let deep = 1;"),
            ["deep", "f", "g", "inner", "k", "top", "x", "y"]
        );
    }

    #[test]
    fn destructured_names_are_visible_after_their_statement() {
        let text = "fn two() -> (f64, i32) { return (1.0, 2); }\n\
                    let (a, _, c: f32) = three();\nlet (d, e) = two(); CURSOR\n";
        assert_eq!(names(text, "three();"), ["a", "c", "two"]);
        assert_eq!(names(text, "CURSOR"), ["a", "c", "d", "e", "two"]);
    }

    #[test]
    fn clause_context() {
        assert!(matches!(
            header("let n = 1;\nparallel loop "),
            Header::Clauses(DK::ParallelLoop, false)
        ));
        assert!(matches!(
            header("kernels "),
            Header::Clauses(DK::Parallel, false)
        ));
        assert!(matches!(
            header("serial loop "),
            Header::Clauses(DK::ParallelLoop, true)
        ));
        assert!(matches!(header("enter data copyin("), Header::Args));
        assert!(matches!(
            header("parallel loop for i in 0..n { a[i] = "),
            Header::No
        ));
        assert!(matches!(header("parallel loop gang for "), Header::No));
        assert!(matches!(header("let x = "), Header::No));
    }
}
