//! Semantic tokens: keywords, types, numbers and strings from the lexer;
//! names by what the checker resolved them to (variables, parameters,
//! functions, constants, builtins); clause names and the construct words
//! that are keywords only where they start a statement.

use crate::document::State;
use crate::Target;
use lang::token::Tok;
use lang::Span;
use lsp_types::{
    SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokens, SemanticTokensLegend,
    SemanticTokensParams, SemanticTokensResult,
};

const TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::KEYWORD,
    SemanticTokenType::TYPE,
    SemanticTokenType::NUMBER,
    SemanticTokenType::STRING,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::FUNCTION,
];
const KEYWORD: u32 = 0;
const TYPE: u32 = 1;
const NUMBER: u32 = 2;
const STRING: u32 = 3;
const VARIABLE: u32 = 4;
const PARAMETER: u32 = 5;
const FUNCTION: u32 = 6;

const MODIFIERS: &[SemanticTokenModifier] = &[
    SemanticTokenModifier::DECLARATION,
    SemanticTokenModifier::READONLY,
    SemanticTokenModifier::DEFAULT_LIBRARY,
];
const DECLARATION: u32 = 1;
const READONLY: u32 = 2;
const DEFAULT_LIBRARY: u32 = 4;

const SCALARS: &[&str] = &["bool", "i32", "i64", "u32", "u8", "f32", "f64", "str"];

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: MODIFIERS.to_vec(),
    }
}

pub fn full(state: &State, p: SemanticTokensParams) -> Option<SemanticTokensResult> {
    let doc = state.doc(&p.text_document.uri)?;
    let view = doc.view();
    let a = view.analysis;
    let text = &doc.text;
    let clauses: Vec<&str> = lang::check::clause_names().collect();
    let mut data = Vec::new();
    let mut prev = lsp_types::Position::new(0, 0);
    let mut last = Tok::Semi;
    for (s, tok, e) in lang::lexer::lex(text).tokens {
        let word = &text[s..e];
        let class = match tok {
            Tok::Int(_) | Tok::Float(_) => Some((NUMBER, 0)),
            Tok::Str(_) | Tok::UnterminatedStr(_) => Some((STRING, 0)),
            Tok::Ident(_) => {
                // The name as the last text that checked resolved it, if
                // it is still there.
                let o = view
                    .to_view(s)
                    .and_then(|v| {
                        a.occurrences
                            .binary_search_by_key(&(v as u32), |o| o.span.start)
                            .ok()
                    })
                    .map(|i| &a.occurrences[i])
                    .filter(|o| view.to_doc(o.span) == Some(Span::new(s, e)));
                match o {
                    Some(o) => Some(match &o.target {
                        Target::Local(Some(f), l)
                            if a.program.as_ref()?.functions[*f].params.contains(l) =>
                        {
                            (PARAMETER, decl(o.decl))
                        }
                        Target::Local(..) => (VARIABLE, decl(o.decl)),
                        Target::Function(_) => (FUNCTION, decl(o.decl)),
                        Target::Const(..) => (VARIABLE, READONLY | decl(o.decl)),
                        Target::Builtin(_) => (FUNCTION, DEFAULT_LIBRARY),
                    }),
                    None if matches!(last, Tok::Semi | Tok::LBrace | Tok::RBrace)
                        && crate::completion::CONSTRUCT_WORDS.contains(&word) =>
                    {
                        Some((KEYWORD, 0))
                    }
                    None if clauses.contains(&word) => Some((KEYWORD, 0)),
                    None if word == "str" => Some((TYPE, 0)),
                    None => None,
                }
            }
            _ if SCALARS.contains(&word) => Some((TYPE, 0)),
            _ if Tok::KEYWORDS.contains(&word) => Some((KEYWORD, 0)),
            _ => None,
        };
        last = tok;
        let Some((token_type, mods)) = class else {
            continue;
        };
        let start = doc.index.position(text, s);
        let length: usize = word.chars().map(char::len_utf16).sum();
        data.push(SemanticToken {
            delta_line: start.line - prev.line,
            delta_start: if start.line == prev.line {
                start.character - prev.character
            } else {
                start.character
            },
            length: length as u32,
            token_type,
            token_modifiers_bitset: mods,
        });
        prev = start;
    }
    Some(SemanticTokensResult::Tokens(SemanticTokens {
        result_id: None,
        data,
    }))
}

fn decl(d: bool) -> u32 {
    if d {
        DECLARATION
    } else {
        0
    }
}
