//! Hover: a name's declaration and type, a function's signature, a
//! builtin's synopsis and where it may run, an expression's type, and for
//! a device construct's keywords what the checker worked out about it (its
//! parallelism, reductions, data and captures).

use crate::analysis::Analysis;
use crate::document::State;
use crate::view::View;
use crate::Target;
use lang::hir::{self, Construct, Level};
use lang::{Effect, Span};
use lsp_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};
use std::fmt::Write;

pub fn hover(state: &State, p: HoverParams) -> Option<Hover> {
    let tdp = p.text_document_position_params;
    let doc = state.doc(&tdp.text_document.uri)?;
    let offset = doc.offset(tdp.position);
    let view = doc.view();
    let checked = view
        .to_view(offset)
        .and_then(|o| from_checked(&view, o))
        .and_then(|(text, span)| Some((text, view.to_doc(span)?)));
    let (text, span) = match checked {
        Some(found) => found,
        None => {
            // A builtin's name needs no checked program.
            let (span, word) = crate::analysis::idents_in(&doc.text, line_span(&doc.text, offset))
                .into_iter()
                .find(|(s, _)| s.start as usize <= offset && offset <= s.end as usize)?;
            (builtin_text(word)?, span)
        }
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: Some(doc.range(span)),
    })
}

/// The hover text at `offset` of a checked text, and the span it covers.
fn from_checked(view: &View, offset: usize) -> Option<(String, Span)> {
    let a = view.analysis;
    if let Some((body, c)) = a.construct_at(offset) {
        return Some((construct_summary(a, body, c), c.kind_span));
    }
    if let Some(o) = a.occurrence_at(offset) {
        return Some((target_text(view.text, a, &o.target)?, o.span));
    }
    let (body, e) = a.expr_at(offset)?;
    let span = body.span(e);
    let written = view.text.get(span.range())?;
    let written = if written.len() > 60 || written.contains('\n') {
        "(expression)"
    } else {
        written
    };
    Some((code(&format!("{written}: {}", body.ty(e))), span))
}

/// The line around byte `offset`.
fn line_span(text: &str, offset: usize) -> Span {
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    Span::new(start, end)
}

fn code(s: &str) -> String {
    format!("```accl\n{s}\n```")
}

/// The hover text of a name.
pub fn target_text(text: &str, a: &Analysis, t: &Target) -> Option<String> {
    let p = a.program.as_ref()?;
    Some(match t {
        Target::Local(f, l) => {
            let body = a.body(*f)?;
            let local = &body.locals[*l];
            let what = match f {
                Some(f) if p.functions[*f].params.contains(l) => "parameter",
                _ if !local.mutable => "loop variable",
                None => "variable",
                Some(_) => "local variable",
            };
            format!(
                "{}\n\n{what}",
                code(&format!("{}: {}", local.name, local.ty))
            )
        }
        Target::Function(f) => {
            let f = &p.functions[*f];
            let mut s = code(&fn_signature(f));
            if f.level != Level::Seq {
                let _ = write!(s, "\n\n`routine {}`", f.level.name());
            }
            match &f.device {
                Ok(()) => s.push_str("\n\ncallable in device code"),
                Err((_, why)) => {
                    let _ = write!(s, "\n\nhost only: {why}");
                }
            }
            s
        }
        Target::Const(name, decl) => {
            let decl = crate::analysis::const_decl(&a.ast.stmts, *decl);
            match (const_value(a, text, name), decl) {
                (Some((v, _)), Some((false, init))) => {
                    // A use's type is the one its place gave the value,
                    // not the constant's: say what the constant is.
                    let kind = match crate::analysis::literal_is_float(init) {
                        Some(true) => " float (`f64` where nothing decides)",
                        Some(false) => " integer (`i32` where nothing decides)",
                        None => "",
                    };
                    format!(
                        "{}\n\nAn untyped{kind} constant: each use takes the type its \
                         place needs, as the literal `{v}` would.",
                        code(&format!("const {name} = {v}")),
                    )
                }
                (Some((v, ty)), _) => code(&format!("const {name}: {ty} = {v}")),
                (None, _) => code(&format!("const {name}")),
            }
        }
        Target::Builtin(name) => builtin_text(name)?,
    })
}

pub fn fn_signature(f: &hir::Function) -> String {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|&l| {
            let local = &f.body.locals[l];
            format!("{}: {}", local.name, local.ty)
        })
        .collect();
    let ret = match f.ret {
        lang::Type::Unit => String::new(),
        t => format!(" -> {t}"),
    };
    format!("fn {}({}){ret}", f.name, params.join(", "))
}

/// A builtin's synopsis and where it may run.
pub fn builtin_text(name: &str) -> Option<String> {
    let b = crate::builtins();
    let builtin = b.get(b.lookup(name)?);
    Some(format!(
        "{}\n\n{}",
        code(&builtin.synopsis),
        effect_doc(builtin.effect)
    ))
}

pub fn effect_doc(e: Effect) -> &'static str {
    match e {
        Effect::Pure => "Math: in host code and in device code.",
        Effect::Atomic => {
            "An atomic update of an array element that returns the old value: host and device."
        }
        Effect::Alloc => "Allocates an array: host code only.",
        Effect::Io => "Input/output or the clock: host code only.",
        Effect::Host => "Host code only.",
    }
}

/// A constant's value and type, from a use of it.
fn const_value(a: &Analysis, text: &str, name: &str) -> Option<(String, lang::Type)> {
    let p = a.program.as_ref()?;
    std::iter::once(&p.main)
        .chain(p.functions.iter().map(|(_, f)| &f.body))
        .find_map(|b| {
            b.exprs.iter().find_map(|(h, e)| match e {
                hir::Expr::Const(v) if text.get(b.span(h).range()) == Some(name) => {
                    Some((v.to_string(), b.ty(h)))
                }
                _ => None,
            })
        })
}

/// What the checker knows about a construct: its kind, parallelism,
/// loops, reductions, data clauses and what it captures.
pub fn construct_summary(a: &Analysis, body: &hir::Body, c: &Construct) -> String {
    let name = |l: hir::LocalH| body.locals[l].name.clone();
    let cl = &c.clauses;
    let mut s = String::new();
    let kind = if cl.kernels {
        "kernels part"
    } else {
        c.kind.name()
    };
    let _ = writeln!(s, "**{kind}**");
    let levels: Vec<&str> = [
        (cl.gang, "gang"),
        (cl.worker, "worker"),
        (cl.vector, "vector"),
        (cl.seq, "seq"),
        (cl.independent, "independent"),
        (cl.auto, "auto"),
    ]
    .iter()
    .filter(|x| x.0)
    .map(|x| x.1)
    .collect();
    if !levels.is_empty() {
        let _ = writeln!(s, "\n- levels: {}", levels.join(" "));
    }
    if let hir::ConstructBody::Loops { loops, .. } = &c.body {
        let vars: Vec<String> = loops.iter().map(|h| name(h.var)).collect();
        let _ = writeln!(s, "- loops: {} (collapse {})", vars.join(", "), cl.collapse);
    }
    if !cl.tile.is_empty() {
        let sizes: Vec<String> = cl.tile.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(s, "- tile: {}", sizes.join(", "));
    }
    for (what, e) in [
        ("num_gangs", cl.num_gangs),
        ("num_workers", cl.num_workers),
        ("vector_length", cl.vector_length),
    ] {
        if let Some(e) = e {
            let v = match &body.exprs[e] {
                hir::Expr::Const(v) => v.to_string(),
                _ => "(runtime)".to_string(),
            };
            let _ = writeln!(s, "- {what}: {v}");
        }
    }
    for r in cl.reductions.iter().chain(&cl.array_reductions) {
        let _ = writeln!(s, "- reduction({}: {})", r.op.symbol(), name(r.var));
    }
    let list = |v: &[hir::LocalH]| v.iter().map(|&l| name(l)).collect::<Vec<_>>().join(", ");
    if !cl.private.is_empty() {
        let _ = writeln!(s, "- private: {}", list(&cl.private));
    }
    if !cl.firstprivate.is_empty() {
        let _ = writeln!(s, "- firstprivate: {}", list(&cl.firstprivate));
    }
    for d in &cl.data {
        let _ = writeln!(s, "- data: {}({})", d.kind.name(), name(d.var));
    }
    let caps = &c.captures;
    if !caps.arrays.is_empty() {
        let arrays: Vec<String> = caps
            .arrays
            .iter()
            .map(|u| {
                let how = match (u.read, u.written) {
                    (true, true) => "read, written",
                    (false, true) => "written",
                    _ => "read",
                };
                format!("{} ({how})", name(u.var))
            })
            .collect();
        let _ = writeln!(s, "- arrays: {}", arrays.join(", "));
    }
    if !caps.scalars.is_empty() {
        let _ = writeln!(s, "- scalars in: {}", list(&caps.scalars));
    }
    if !caps.functions.is_empty() {
        if let Some(p) = &a.program {
            let fns: Vec<&str> = caps
                .functions
                .iter()
                .map(|&f| p.functions[f].name.as_str())
                .collect();
            let _ = writeln!(s, "- calls: {}", fns.join(", "));
        }
    }
    if let Some(hir::AsyncQueue::Queue(_) | hir::AsyncQueue::Default) = cl.async_ {
        s.push_str("- async\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hover text of the last occurrence of `name` in `src` (a use).
    fn hover_of(src: &str, name: &str) -> String {
        let a = Analysis::new(src);
        let o = a.occurrence_at(src.rfind(name).unwrap()).unwrap();
        target_text(src, &a, &o.target).unwrap()
    }

    #[test]
    fn an_untyped_constant_is_not_given_its_use_s_type() {
        let h = hover_of("const N = 4;\nlet x: i64 = N;\n", "N");
        assert!(
            h.contains("const N = 4") && h.contains("untyped integer") && !h.contains("i64"),
            "{h}"
        );
        // 1.0 / 2 folds to a float, whatever the use makes of it.
        let h = hover_of("const H = 1.0 / 2;\nlet y: f32 = H;\n", "H");
        assert!(h.contains("= 0.5") && h.contains("untyped float"), "{h}");
        let h = hover_of("const M: i64 = 4;\nlet z = M;\n", "M");
        assert!(
            h.contains("const M: i64 = 4") && !h.contains("untyped"),
            "{h}"
        );
    }
}
