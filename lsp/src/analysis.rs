//! What the front end says about one text: its diagnostics (as `accl
//! check` produces them), its syntax tree, and, when it checks, the typed
//! program with every name occurrence resolved to what it names.
//!
//! Resolution is the checker's: the HIR's expressions and locals carry
//! spans, so each `Local`/`Call`/`Builtin` expression is an occurrence of
//! its target. The few places the HIR keeps without a span of their own
//! (an assigned variable, `private(..)` lists) are found in the text of
//! the statement or construct header that holds them.

use crate::imports::Prelude;
use crate::Target;
use lang::hir::{self, Body, Construct, FnH, Place, StmtKind};
use lang::token::Tok;
use lang::{ast, Builtins, Diag, Span};

/// One occurrence of a name.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    pub span: Span,
    pub target: Target,
    /// Where the name is declared (a `let`, a parameter, a loop variable,
    /// a `fn` or `const` name).
    pub decl: bool,
}

pub struct Analysis {
    /// In document offsets.
    pub diags: Vec<Diag>,
    /// The syntax tree of the analysed text (the prelude, then the document).
    pub ast: ast::Program,
    /// `None` when the text has errors.
    pub program: Option<hir::Program>,
    /// Sorted by span start.
    pub occurrences: Vec<Occurrence>,
    /// Where the document starts in the analysed text (after the files it
    /// imports): spans of `ast`, `program` and `occurrences` count from
    /// the analysed text's start.
    pub base: usize,
    /// The analysed text when it is not the document's (`base` > 0).
    joined: Option<String>,
}

impl Analysis {
    #[cfg(test)]
    pub fn new(text: &str) -> Analysis {
        Analysis::with(text, &Prelude::default())
    }

    /// The analysis of `text` with the files it imports (`prelude`) in front.
    pub fn with(text: &str, prelude: &Prelude) -> Analysis {
        std::panic::catch_unwind(|| Analysis::analyse(text, prelude)).unwrap_or_else(|_| Analysis {
            diags: vec![Diag::error(
                "accl::internal",
                "the accl front end failed on this text (a bug in accl)",
                Span::default(),
                "",
            )
            .with_help("`accl check` on the file shows the same failure with its panic message")],
            ast: ast::Program::default(),
            program: None,
            occurrences: Vec::new(),
            base: 0,
            joined: None,
        })
    }

    fn analyse(doc: &str, prelude: &Prelude) -> Analysis {
        let builtins = crate::builtins();
        let joined;
        let text = if prelude.text.is_empty() {
            doc
        } else {
            joined = format!("{}{doc}", prelude.text);
            &joined
        };
        // Recursive passes (and the drop of a deep tree) want a large stack.
        lang::stack::large(|| {
            let (diags, program) = match lang::check_source(text, builtins) {
                Ok(c) => (c.warnings, Some(c.program)),
                Err(d) => (d, None),
            };
            let mut diags: Vec<Diag> = diags.into_iter().map(|d| prelude.to_doc(d)).collect();
            diags.extend(prelude.error.clone());
            let program = program.filter(|_| prelude.error.is_none());
            let ast = lang::parse(text).0;
            let mut occurrences = Vec::new();
            if let Some(p) = &program {
                Collector {
                    text,
                    ast: &ast,
                    builtins,
                    program: p,
                    out: &mut occurrences,
                }
                .run();
            }
            occurrences.sort_by_key(|o| (o.span.start, o.span.end));
            occurrences.dedup();
            Analysis {
                diags,
                ast,
                program,
                occurrences,
                base: prelude.text.len(),
                joined: (!prelude.text.is_empty()).then(|| text.to_string()),
            }
        })
    }

    /// The text the spans of this analysis count in: `doc` (the text it
    /// analysed), or that with the imported files in front.
    pub fn text_of<'a>(&'a self, doc: &'a str) -> &'a str {
        self.joined.as_deref().unwrap_or(doc)
    }

    /// The occurrence under byte `offset` (touching its end counts, so a
    /// cursor just after a name finds it).
    pub fn occurrence_at(&self, offset: usize) -> Option<&Occurrence> {
        let o = offset as u32;
        self.occurrences
            .iter()
            .filter(|x| x.span.start <= o && o <= x.span.end)
            .min_by_key(|x| (o == x.span.end, x.span.len()))
    }

    /// Every occurrence of `target`, its declaration first.
    pub fn occurrences_of(&self, target: &Target) -> Vec<&Occurrence> {
        let mut v: Vec<&Occurrence> = self
            .occurrences
            .iter()
            .filter(|x| &x.target == target)
            .collect();
        v.sort_by_key(|x| !x.decl);
        v
    }

    pub fn declaration(&self, target: &Target) -> Option<Span> {
        self.occurrences
            .iter()
            .find(|x| x.decl && &x.target == target)
            .map(|x| x.span)
    }

    /// The body a target's locals live in.
    pub fn body(&self, f: Option<FnH>) -> Option<&Body> {
        let p = self.program.as_ref()?;
        Some(match f {
            None => &p.main,
            Some(f) => &p.functions[f].body,
        })
    }

    /// The innermost expression whose span holds `offset`, with its body.
    pub fn expr_at(&self, offset: usize) -> Option<(&Body, hir::ExprH)> {
        let p = self.program.as_ref()?;
        let o = offset as u32;
        std::iter::once(&p.main)
            .chain(p.functions.iter().map(|(_, f)| &f.body))
            .flat_map(|b| {
                b.exprs
                    .iter()
                    .map(move |(h, _)| (b, h))
                    .filter(move |&(b, h)| {
                        let s = b.span(h);
                        s.start <= o && o < s.end
                    })
            })
            .min_by_key(|&(b, h)| b.span(h).len())
    }

    /// The innermost device construct whose directive keywords hold `offset`.
    pub fn construct_at(&self, offset: usize) -> Option<(&Body, &Construct)> {
        let p = self.program.as_ref()?;
        let o = offset as u32;
        let mut found = None;
        for b in std::iter::once(&p.main).chain(p.functions.iter().map(|(_, f)| &f.body)) {
            walk_constructs(&b.block, &mut |c| {
                if c.kind_span.start <= o && o <= c.kind_span.end {
                    found = Some((b, c));
                }
            });
        }
        found
    }
}

/// Call `f` on every construct of a block, outer ones first.
pub fn walk_constructs<'a>(block: &'a [hir::Stmt], f: &mut impl FnMut(&'a Construct)) {
    walk_stmts(block, &mut |s| {
        if let StmtKind::Construct(c) = &s.kind {
            f(c);
        }
    });
}

/// Call `f` on every statement of a block and of the blocks inside it.
pub fn walk_stmts<'a>(block: &'a [hir::Stmt], f: &mut impl FnMut(&'a hir::Stmt)) {
    for s in block {
        f(s);
        match &s.kind {
            StmtKind::If { then, els, .. } => {
                walk_stmts(then, f);
                walk_stmts(els, f);
            }
            StmtKind::While { body, .. } | StmtKind::Block(body) => walk_stmts(body, f),
            StmtKind::For(l) => walk_stmts(&l.body, f),
            StmtKind::Construct(c) => match &c.body {
                hir::ConstructBody::None => {}
                hir::ConstructBody::Block(b) => walk_stmts(b, f),
                hir::ConstructBody::Loops { body, .. } => walk_stmts(body, f),
            },
            _ => {}
        }
    }
}

/// The identifier tokens of `text[span]`, with their spans in `text`.
pub fn idents_in(text: &str, span: Span) -> Vec<(Span, &str)> {
    let Some(part) = text.get(span.range()) else {
        return Vec::new();
    };
    lang::lexer::lex(part)
        .tokens
        .into_iter()
        .filter_map(|(s, t, e)| match t {
            Tok::Ident(name) => Some((
                Span::new(s + span.start as usize, e + span.start as usize),
                name,
            )),
            _ => None,
        })
        .collect()
}

struct Collector<'a> {
    text: &'a str,
    ast: &'a ast::Program,
    builtins: &'a Builtins,
    program: &'a hir::Program,
    out: &'a mut Vec<Occurrence>,
}

impl Collector<'_> {
    fn run(&mut self) {
        let p = self.program;
        self.body(None, &p.main);
        for (h, f) in p.functions.iter() {
            if let Some(name) = fn_name_span(self.ast, &f.name, f.span) {
                self.push(name, Target::Function(h), true);
            }
            self.body(Some(h), &f.body);
        }
        self.consts();
    }

    fn push(&mut self, span: Span, target: Target, decl: bool) {
        self.out.push(Occurrence { span, target, decl });
    }

    /// The first identifier `name` in `span`.
    fn name_in(&self, span: Span, name: &str) -> Option<Span> {
        idents_in(self.text, span)
            .into_iter()
            .find(|&(_, n)| n == name)
            .map(|(s, _)| s)
    }

    fn body(&mut self, fh: Option<FnH>, b: &Body) {
        for (l, local) in b.locals.iter() {
            let s = b.locals.span(l);
            if self.text.get(s.range()) == Some(local.name.as_str()) {
                self.push(s, Target::Local(fh, l), true);
            }
        }
        for (h, e) in b.exprs.iter() {
            let s = b.span(h);
            match e {
                // The checker's hidden locals (`tuple#3`, a destructured
                // element on its way to an assignment's target) are read
                // where the target is written: the target is what is there.
                hir::Expr::Local(l) if b.locals[*l].name.contains('#') => {}
                hir::Expr::Local(l) => self.push(s, Target::Local(fh, *l), false),
                hir::Expr::Global(l) => self.push(s, Target::Local(None, *l), false),
                hir::Expr::Call(f, _) => {
                    let name = &self.program.functions[*f].name;
                    if let Some(n) = self.name_in(s, name) {
                        self.push(n, Target::Function(*f), false);
                    }
                }
                hir::Expr::Builtin(id, _) => {
                    let name = &self.builtins.get(*id).name;
                    if let Some(n) = self.name_in(s, name) {
                        self.push(n, Target::Builtin(name.clone()), false);
                    }
                }
                _ => {}
            }
        }
        // (span to search, local, a top-level variable?, every occurrence?)
        let mut places = Vec::new();
        walk_stmts(&b.block, &mut |s| match &s.kind {
            StmtKind::Assign { place, .. } | StmtKind::Atomic { place, .. } => {
                if let Place::Local(l) | Place::Global(l) = place {
                    places.push((s.span, *l, matches!(place, Place::Global(_)), false));
                }
            }
            StmtKind::Construct(c) => {
                let cl = &c.clauses;
                let listed = cl
                    .private
                    .iter()
                    .chain(&cl.firstprivate)
                    .chain(&cl.use_device)
                    .chain(cl.reductions.iter().map(|r| &r.var))
                    .chain(cl.array_reductions.iter().map(|r| &r.var))
                    .chain(cl.data.iter().map(|d| &d.var));
                let header = Span {
                    start: c.kind_span.end,
                    end: header_end(self.text, c),
                };
                for &l in listed {
                    places.push((header, l, false, true));
                }
            }
            _ => {}
        });
        for (span, l, global, every) in places {
            let (owner, locals) = if global {
                (None, &self.program.main.locals)
            } else {
                (fh, &b.locals)
            };
            let name = &locals[l].name;
            for (s, n) in idents_in(self.text, span) {
                if n == name {
                    self.push(s, Target::Local(owner, l), false);
                    // An assignment's target is its first name.
                    if !every {
                        break;
                    }
                }
            }
        }
    }

    /// Top-level and block constants: the checker folds their uses into
    /// values, so a use is a constant expression written as the name.
    fn consts(&mut self) {
        let mut decls = Vec::new();
        ast_consts(&self.ast.stmts, &mut decls);
        for (name, span) in &decls {
            self.push(*span, Target::Const(name.clone(), *span), true);
        }
        let p = self.program;
        for b in std::iter::once(&p.main).chain(p.functions.iter().map(|(_, f)| &f.body)) {
            for (h, e) in b.exprs.iter() {
                if !matches!(e, hir::Expr::Const(_)) {
                    continue;
                }
                let s = b.span(h);
                let Some(word) = self.text.get(s.range()) else {
                    continue;
                };
                // The nearest declaration before the use, else the first.
                let decl = decls
                    .iter()
                    .rfind(|(n, d)| n == word && d.start < s.start)
                    .or_else(|| decls.iter().find(|(n, _)| n == word));
                if let Some((name, d)) = decl {
                    self.push(s, Target::Const(name.clone(), *d), false);
                }
            }
        }
    }
}

/// Where a construct's clauses end: at its body's `{` or `for`, or at its end.
fn header_end(text: &str, c: &Construct) -> u32 {
    let span = Span {
        start: c.kind_span.end,
        end: c.span.end,
    };
    let Some(part) = text.get(span.range()) else {
        return span.end;
    };
    let mut depth = 0i32;
    for (s, t, _) in lang::lexer::lex(part).tokens {
        match t {
            Tok::LParen => depth += 1,
            Tok::RParen => depth -= 1,
            Tok::LBrace | Tok::For | Tok::Semi if depth <= 0 => return span.start + s as u32,
            _ => {}
        }
    }
    span.end
}

/// The span of function `name`'s name in its declaration.
fn fn_name_span(prog: &ast::Program, name: &str, decl: Span) -> Option<Span> {
    prog.stmts.iter().find_map(|s| match &s.kind {
        ast::StmtKind::Fn(f) if f.name.name == name && f.span == decl => Some(f.name.span),
        _ => None,
    })
}

/// Every `const` declaration, in source order.
fn ast_consts(stmts: &[ast::Stmt], out: &mut Vec<(String, Span)>) {
    for s in stmts {
        match &s.kind {
            ast::StmtKind::Const { name, .. } => out.push((name.name.clone(), name.span)),
            _ => {
                for b in blocks_of(s) {
                    ast_consts(&b.stmts, out);
                }
            }
        }
    }
}

/// The constant declared at `name` (its name's span): whether it has a
/// type written (`const N: i64 = 4;`), and its initialiser; `None`: no
/// constant is declared there.
pub fn const_decl(stmts: &[ast::Stmt], name: Span) -> Option<(bool, &ast::Expr)> {
    stmts.iter().find_map(|s| match &s.kind {
        ast::StmtKind::Const { name: n, ty, init } if n.span == name => Some((ty.is_some(), init)),
        _ => blocks_of(s)
            .into_iter()
            .find_map(|b| const_decl(&b.stmts, name)),
    })
}

/// Whether an untyped constant's initialiser made of literals is a float
/// (`Some(true)`) or an integer (`Some(false)`), as the checker folds it: a
/// float anywhere makes it a float; `None` where names, casts or calls
/// decide (not worked out here).
pub fn literal_is_float(e: &ast::Expr) -> Option<bool> {
    use ast::{BinOp as B, ExprKind as E};
    match &e.kind {
        E::Int(_, None) => Some(false),
        E::Float(_, None) => Some(true),
        E::Unary(_, a) => literal_is_float(a),
        E::Binary(op, a, b)
            if !matches!(
                op,
                B::Or | B::And | B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge
            ) =>
        {
            Some(literal_is_float(a)? || literal_is_float(b)?)
        }
        _ => None,
    }
}

/// The blocks directly inside a statement.
pub fn blocks_of(s: &ast::Stmt) -> Vec<&ast::Block> {
    match &s.kind {
        ast::StmtKind::If { then, els, .. } => std::iter::once(then).chain(els).collect(),
        ast::StmtKind::While { body, .. } | ast::StmtKind::Block(body) => vec![body],
        ast::StmtKind::For(l) => vec![&l.body],
        ast::StmtKind::Fn(f) => vec![&f.body],
        ast::StmtKind::Directive(d) => match &d.body {
            ast::DirectiveBody::None => Vec::new(),
            ast::DirectiveBody::Block(b) => vec![b],
            ast::DirectiveBody::For(l) => vec![&l.body],
        },
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of every occurrence of the target at the first `at` in `text`.
    fn occurrences(text: &str, at: &str) -> Vec<(String, bool)> {
        let a = Analysis::new(text);
        assert!(a.program.is_some(), "{:?}", a.diags);
        let o = a
            .occurrence_at(text.find(at).unwrap())
            .expect("an occurrence");
        a.occurrences_of(&o.target)
            .into_iter()
            .map(|x| (text[x.span.range()].to_string(), x.decl))
            .collect()
    }

    #[test]
    fn constants_assignments_and_clause_lists_resolve() {
        let text = "const N = 4;\nlet s = 0.0f32;\nlet a = zeros(f32, N);\n\
                    parallel loop reduction(+: s) copyin(a) for i in 0..N { s += a[i]; }\n\
                    s = s * 2.0;\nfn g() -> f32 { return s; }\n";
        let n = occurrences(text, "N =");
        assert_eq!(n.len(), 3, "{n:?}");
        assert!(n[0].1 && n.iter().skip(1).all(|x| !x.1));
        // Declaration, the reduction clause, `s +=`, `s = s * 2.0` (twice)
        // and the read in `g` (a top-level variable seen from a function).
        let s = occurrences(text, "s = 0.0f32");
        assert_eq!(s.len(), 6, "{s:?}");
        let a = occurrences(text, "a = zeros");
        assert_eq!(a.len(), 3, "{a:?}");
    }

    #[test]
    fn destructured_variables_resolve_and_hidden_ones_do_not_show() {
        let text = "fn two(x: f64) -> (f64, f64) { return (x, x * 2.0); }\n\
                    let (a, b) = two(1.0);\n(a, b) = (b, a);\nlet c = a + b;\n";
        // The declaration, the assignment's target, its read, `a + b`.
        let a = occurrences(text, "a, b) = two");
        assert_eq!(a.len(), 4, "{a:?}");
        assert!(a[0].1 && a.iter().skip(1).all(|x| !x.1 && x.0 == "a"));
        let b = occurrences(text, "b) = (b");
        assert_eq!(b.len(), 4, "{b:?}");
    }

    #[test]
    fn a_text_with_errors_has_diagnostics_and_no_occurrences() {
        let a = Analysis::new("let x = ;\nlet y = x + 1;");
        assert!(a.program.is_none());
        assert!(!a.diags.is_empty());
        assert!(a.occurrences.is_empty());
    }

    #[test]
    fn imported_names_resolve_and_errors_land_in_the_document() {
        let dir = std::env::temp_dir().join(format!("accl_lsp_imports_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("lib.accl"),
            "const K = 2;\nfn twice(x: i32) -> i32 { return x * K; }\n",
        )
        .unwrap();
        std::fs::write(dir.join("bad.accl"), "fn f() -> i32 { return 1.5; }\n").unwrap();
        let text = "import \"lib.accl\";\nlet y = twice(3);\n";
        let p = crate::imports::Prelude::of(text, Some(&dir));
        assert!(p.error.is_none());
        let a = Analysis::with(text, &p);
        assert!(a.program.is_some(), "{:?}", a.diags);
        assert!(a.diags.is_empty());
        // `twice` in the document resolves to the imported function.
        let at = text.find("twice").unwrap() + p.text.len();
        assert!(matches!(
            a.occurrence_at(at).map(|o| &o.target),
            Some(crate::Target::Function(_))
        ));
        // An error inside the imported file is shown on the import.
        let text = "import \"bad.accl\";\nlet y = 1;\n";
        let p = crate::imports::Prelude::of(text, Some(&dir));
        let a = Analysis::with(text, &p);
        assert_eq!(a.diags.len(), 1);
        assert_eq!(a.diags[0].code, "accl::type::mismatch");
        assert!(
            a.diags[0].message.starts_with("in `"),
            "{}",
            a.diags[0].message
        );
        assert_eq!(a.diags[0].span(), Span::new(0, 18));
        // A missing file is an error on its import.
        let text = "import \"nope.accl\";\n";
        let p = crate::imports::Prelude::of(text, Some(&dir));
        let a = Analysis::with(text, &p);
        assert_eq!(a.diags[0].code, "accl::import::not_found");
        assert_eq!(a.diags[0].span(), Span::new(0, 19));
        std::fs::remove_dir_all(&dir).ok();
    }
}
