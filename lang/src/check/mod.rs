//! The type checker: [`ast::Program`] to [`hir::Program`].
//!
//! One pass over each body, with an expected type pushed down into
//! expressions so that untyped literals take the type of their context
//! (`docs/language.md`, "Literals and constants"). Expressions made only of
//! literals and constants are folded on the spot, so a literal-typed
//! expression is always a `Const` node and giving it a type later is a
//! rewrite of that one node.
//!
//! Device rules need the whole program (is the function called in a kernel
//! recursive? does it print?), so calls from device code are recorded while
//! bodies are checked and judged at the end ([`device`]).

mod assign;
mod atomic_forms;
mod call;
mod clauses;
pub use clauses::{clause_names, clauses_of};
mod construct;
mod data_scalars;
mod declare;
mod declare_data;
mod defaults;
mod descending;
mod device;
mod expr;
mod foreach;
pub use foreach::empty_separator;
mod frame;
mod globals;
mod literals;
mod names;
mod on_device;
mod private_arrays;
mod rebind;
mod reduction_vars;
mod returns;
mod routine_clauses;
mod routines;
mod sections;
mod sizes;
pub use sizes::{size_error, MAX_LANES};
mod tuples;
mod update;
mod update_races;

use crate::arena::Arena;
use crate::ast;
use crate::builtins::Builtins;
use crate::diag::Diag;
use crate::hir::{self, ExprH, FnH, LocalH};
use crate::span::Span;
use crate::types::Type;
use crate::value::Value;
use frame::DevFrame;
use std::collections::HashMap;

/// A variable that exists before the program runs (REPL and embedding).
#[derive(Debug, Clone)]
pub struct Global {
    pub name: String,
    pub ty: Type,
    /// A constant array of an earlier input: nothing may write it.
    pub constant: bool,
}

/// The outcome of a successful check: the program and any warnings.
#[derive(Debug, Clone)]
pub struct Checked {
    pub program: hir::Program,
    pub warnings: Vec<Diag>,
}

/// Check a parsed program against a builtin table and pre-existing globals.
/// On failure, returns every diagnostic found (errors and warnings).
///
/// `src` is the text the program was parsed from; it is quoted in help lines
/// (`(i as f32) + x`).
pub fn check(
    prog: &ast::Program,
    src: &str,
    builtins: &Builtins,
    globals: &[Global],
) -> Result<Checked, Vec<Diag>> {
    crate::stack::large(|| check_here(prog, src, builtins, globals))
}

fn check_here(
    prog: &ast::Program,
    src: &str,
    builtins: &Builtins,
    globals: &[Global],
) -> Result<Checked, Vec<Diag>> {
    let mut cx = Checker::new(builtins, src);
    cx.run(prog, globals);
    let (errors, warnings): (Vec<_>, Vec<_>) = cx.diags.into_iter().partition(|d| d.is_error());
    if errors.is_empty() {
        Ok(Checked {
            program: cx.out,
            warnings,
        })
    } else {
        let mut all = errors;
        all.extend(warnings);
        all.sort_by_key(|d| (d.span().start, d.span().end));
        Err(all)
    }
}

/// Parse and check a source text in one call.
pub fn check_source(src: &str, builtins: &Builtins) -> Result<Checked, Vec<Diag>> {
    crate::stack::large(|| check_source_here(src, builtins))
}

fn check_source_here(src: &str, builtins: &Builtins) -> Result<Checked, Vec<Diag>> {
    let (ast, diags) = crate::parse(src);
    if !diags.is_empty() {
        return Err(after_parse_errors(&ast, src, builtins, &[], diags));
    }
    check(&ast, src, builtins, &[])
}

/// The syntax errors `parse` found, then the type errors in what did parse,
/// so one syntax error does not hide every error after it. What a missing
/// statement may have caused is left out: an error at or inside a syntax
/// error, and an unknown name (its `let` or `fn` may be what failed).
pub fn after_parse_errors(
    prog: &ast::Program,
    src: &str,
    builtins: &Builtins,
    globals: &[Global],
    mut diags: Vec<Diag>,
) -> Vec<Diag> {
    let Err(found) = check(prog, src, builtins, globals) else {
        return diags;
    };
    let syntax: Vec<Span> = diags.iter().map(Diag::span).collect();
    let caused = |d: &Diag| {
        let s = d.span();
        d.code.starts_with("accl::name::")
            || syntax.iter().any(|e| s.start <= e.end && e.start <= s.end)
    };
    diags.extend(found.into_iter().filter(|d| d.is_error() && !caused(d)));
    diags.sort_by_key(|d| (d.span().start, d.span().end));
    diags
}

#[derive(Debug, Clone, Copy)]
enum Binding {
    Local(LocalH),
    Const(Value),
    /// A top-level variable seen from a function ([`globals`]).
    Global(LocalH),
}

struct Scope {
    names: HashMap<String, (Binding, Span)>,
}

/// Per-body state (a function, or the top level).
#[derive(Default)]
struct BodyCx {
    exprs: Arena<hir::Expr>,
    types: Vec<Type>,
    locals: Arena<hir::Local>,
    /// Scope index at which each local was declared.
    local_scope: Vec<usize>,
    /// Which function this is (None: top level).
    func: Option<FnH>,
    ret: Type,
}

/// A call found in a function body, for the device-legality pass.
struct FnFacts {
    /// The first thing in the body that cannot run on a device.
    violation: Option<(Span, String)>,
    callees: Vec<(FnH, Span)>,
    /// Top-level variables the body uses, each with its first use.
    globals: Vec<(LocalH, Span)>,
    /// Array parameters (by position) whose elements the body writes, each
    /// with the first write.
    written_params: Vec<(usize, Span)>,
    /// Array parameters passed on to a function: (parameter, callee, the
    /// callee's parameter, the argument).
    passed_params: Vec<(usize, FnH, usize, Span)>,
    /// `routine .. nohost`: no host version (called from device code only).
    nohost: bool,
    /// `routine .. bind(f)`: device code calls `f` instead.
    bind: Option<ast::Ident>,
}

/// A constant array passed to a user function, checked once every body is
/// (`literals.rs`): the callee must not write that parameter.
struct ConstArg {
    callee: FnH,
    param: usize,
    name: String,
    span: Span,
}

/// A call from inside a device construct to a user function.
struct DeviceCall {
    callee: FnH,
    call_span: Span,
    construct_span: Span,
}

struct Capture {
    scalars: Vec<LocalH>,
    arrays: Vec<hir::ArrayUse>,
    functions: Vec<FnH>,
}

struct Checker<'b> {
    builtins: &'b Builtins,
    diags: Vec<Diag>,
    out: hir::Program,
    fn_names: HashMap<String, FnH>,
    /// Declared parameter types of each function, by handle index.
    fn_param_tys: Vec<Vec<Type>>,
    /// Constant arrays passed to user functions.
    const_args: Vec<ConstArg>,
    src: &'b str,
    fn_facts: Vec<FnFacts>,
    device_calls: Vec<DeviceCall>,
    global_consts: HashMap<String, (Value, Span)>,
    body: BodyCx,
    scopes: Vec<Scope>,
    /// Enclosing loops: `(scope depth, is a device-construct loop)`.
    loop_stack: Vec<usize>,
    dev: Vec<DevFrame>,
    capture: Option<Capture>,
    /// Checking the body of a top-level function (not the top level).
    in_fn: bool,
    /// Resolving the target of a reduced array's update (its one allowed use).
    updating_reduced_array: bool,
    /// Arrays named in the data clauses of the constructs being checked.
    data_visible: Vec<LocalH>,
    /// Checking the bounds of a compute construct's own loops (host
    /// expressions: `len` and `shape` allowed).
    host_bounds: bool,
    /// Scalars in `copy`/`copyout` clauses of the constructs being
    /// checked: assigned in a kernel, their value comes back.
    copy_back: Vec<LocalH>,
    /// Scalars named in `reduction`, `private` or `firstprivate` clauses
    /// (by body): they stay plain values (`data_scalars`).
    unboxed: Vec<(Option<FnH>, LocalH)>,
    /// Scalars that must be data (by body): `acc_is_present` arguments and
    /// `atomic` targets, each with its span.
    present_scalars: Vec<(Option<FnH>, LocalH, Span)>,
    /// The loop nest being checked is a `collapse(force: n)`'s.
    collapse_force: bool,
    /// The device construct (by its keyword's span) already told that
    /// strings cannot be used in it.
    string_in_device: Option<Span>,
    /// The next construct body is the rest of the current block (a
    /// `declare`): checked in the block's own scope.
    same_scope_body: bool,
    /// Statements that go before the construct being checked (see
    /// [`on_device`]).
    hoisted: Vec<hir::Stmt>,
    /// Work left for "did you mean" suggestions, shared by all of them
    /// ([`crate::diag::did_you_mean_within`]).
    suggest_budget: usize,
    /// The variables of the top-level scope by name, as the top level ends
    /// (what functions see, [`globals`]).
    top_level: HashMap<String, LocalH>,
    /// Calls of user functions at the top level, in order.
    main_calls: Vec<(FnH, Span)>,
}

/// Work for all the "did you mean"s of one check: thousands of suggestions
/// among a few hundred names; past it, unknown names get none.
const SUGGEST_BUDGET: usize = 10_000_000;

impl<'b> Checker<'b> {
    fn new(builtins: &'b Builtins, src: &'b str) -> Self {
        Checker {
            builtins,
            diags: Vec::new(),
            out: hir::Program::default(),
            fn_names: HashMap::new(),
            fn_param_tys: Vec::new(),
            const_args: Vec::new(),
            src,
            fn_facts: Vec::new(),
            device_calls: Vec::new(),
            global_consts: HashMap::new(),
            body: BodyCx::default(),
            scopes: Vec::new(),
            loop_stack: Vec::new(),
            dev: Vec::new(),
            capture: None,
            in_fn: false,
            updating_reduced_array: false,
            data_visible: Vec::new(),
            host_bounds: false,
            collapse_force: false,
            copy_back: Vec::new(),
            unboxed: Vec::new(),
            present_scalars: Vec::new(),
            string_in_device: None,
            same_scope_body: false,
            hoisted: Vec::new(),
            suggest_budget: SUGGEST_BUDGET,
            top_level: HashMap::new(),
            main_calls: Vec::new(),
        }
    }

    fn err(&mut self, d: Diag) {
        self.diags.push(d);
    }

    fn run(&mut self, prog: &ast::Program, globals: &[Global]) {
        // Functions are hoisted: declare every signature first.
        for s in &prog.stmts {
            if let ast::StmtKind::Fn(f) = &s.kind {
                self.declare_fn(f);
            }
        }
        self.check_binds();
        // The top level.
        self.body = BodyCx {
            ret: Type::Unit,
            ..BodyCx::default()
        };
        self.push_scope();
        for g in globals {
            let l = self.new_local(&g.name, g.ty, true, Span::default());
            self.body.locals[l].constant = g.constant;
            self.out.globals.push(l);
        }
        let fns: Vec<&ast::FnDecl> = prog
            .stmts
            .iter()
            .filter_map(|s| match &s.kind {
                ast::StmtKind::Fn(f) => Some(f),
                _ => None,
            })
            .collect();
        let top: Vec<ast::Stmt> = prog
            .stmts
            .iter()
            .filter(|s| !matches!(s.kind, ast::StmtKind::Fn(_)))
            .cloned()
            .collect();
        let block = self.stmts(&top);
        self.out.main.block = block;
        if let Some(t) = &prog.tail {
            let (h, ty) = self.expr(t, None);
            let ty = self.finalize(h, ty);
            if matches!(ty, Type::TypeArg(_)) {
                self.err(Diag::error(
                    "accl::type::type_as_value",
                    "a type is not a value",
                    t.span,
                    "only builtins like `zeros` take a type argument",
                ));
            }
            self.out.tail = Some(h);
        }
        self.top_level = self.scopes[0]
            .names
            .iter()
            .filter_map(|(n, (b, _))| match b {
                Binding::Local(l) => Some((n.clone(), *l)),
                _ => None,
            })
            .collect();
        self.pop_scope();
        let main = std::mem::take(&mut self.body);
        let block = std::mem::take(&mut self.out.main.block);
        self.out.main = hir::Body {
            exprs: main.exprs,
            types: main.types,
            locals: main.locals,
            block,
        };
        // Then every function body (they see constants and functions only).
        for f in fns {
            self.fn_body(f);
        }
        self.judge_globals();
        self.judge_const_args();
        self.judge_device_calls();
        self.give_data_scalars_device_copies();
    }

    fn fn_body(&mut self, f: &ast::FnDecl) {
        let Some(&h) = self.fn_names.get(&f.name.name) else {
            return;
        };
        if self.out.functions[h].span != f.span {
            return; // a duplicate definition, already reported
        }
        let ret = self.out.functions[h].ret;
        self.body = BodyCx {
            func: Some(h),
            ret,
            ..BodyCx::default()
        };
        self.in_fn = true;
        self.push_scope();
        let mut params = Vec::new();
        for (p, ty) in f.params.iter().zip(self.param_types(h)) {
            params.push(self.new_local(&p.name.name, ty, true, p.name.span));
        }
        let block = self.block_in_scope(&f.body);
        self.pop_scope();
        self.in_fn = false;
        if ret != Type::Unit && !returns::block_returns(&f.body) {
            let end = f.body.span.end as usize;
            self.err(
                Diag::error(
                    "accl::type::missing_return",
                    format!(
                        "function `{}` may end without returning a `{ret}`",
                        f.name.name
                    ),
                    Span::new(end.saturating_sub(1), end),
                    "can reach the end of the function here",
                )
                .with_label(f.name.span, format!("declared to return `{ret}`"))
                .with_help("end every path with `return value;`"),
            );
        }
        let b = std::mem::take(&mut self.body);
        let func = &mut self.out.functions[h];
        func.params = params;
        func.body = hir::Body {
            exprs: b.exprs,
            types: b.types,
            locals: b.locals,
            block,
        };
    }

    // ------------------------------------------------------------ scopes

    fn push_scope(&mut self) {
        self.scopes.push(Scope {
            names: HashMap::new(),
        });
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    fn new_local(&mut self, name: &str, ty: Type, mutable: bool, span: Span) -> LocalH {
        let h = self.body.locals.append(
            hir::Local {
                name: name.to_string(),
                ty,
                mutable,
                constant: false,
                data_scalar: false,
            },
            span,
        );
        self.body.local_scope.push(self.scopes.len() - 1);
        if let Some(s) = self.scopes.last_mut() {
            s.names.insert(name.to_string(), (Binding::Local(h), span));
        }
        h
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        for s in self.scopes.iter().rev() {
            if let Some((b, _)) = s.names.get(name) {
                return Some(*b);
            }
        }
        if self.in_fn {
            if let Some(&l) = self.top_level.get(name) {
                return Some(Binding::Global(l));
            }
        }
        self.global_consts
            .get(name)
            .map(|(v, _)| Binding::Const(*v))
    }

    /// Every name visible here, for "did you mean".
    fn visible_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|s| s.names.keys().cloned())
            .collect();
        if self.in_fn {
            v.extend(self.top_level.keys().cloned());
        }
        v.extend(self.global_consts.keys().cloned());
        v.extend(self.fn_names.keys().cloned());
        v.extend(self.builtins.names().map(String::from));
        v
    }

    // ------------------------------------------------------------ statements

    fn block(&mut self, b: &ast::Block) -> hir::Block {
        self.push_scope();
        let out = self.block_in_scope(b);
        self.pop_scope();
        out
    }

    fn block_in_scope(&mut self, b: &ast::Block) -> hir::Block {
        self.stmts(&b.stmts)
    }

    /// Statements in the current scope; a `declare` takes the rest.
    fn stmts(&mut self, stmts: &[ast::Stmt]) -> hir::Block {
        let mut out = Vec::with_capacity(stmts.len());
        for (i, s) in stmts.iter().enumerate() {
            let at = out.len();
            if let ast::StmtKind::Directive(d) = &s.kind {
                if d.kind == ast::DirectiveKind::Declare {
                    out.extend(self.declare_directive(s, d, &stmts[i + 1..]));
                    self.flush_hoisted(&mut out, at);
                    break;
                }
            }
            if let Some(st) = self.stmt(s) {
                out.push(st);
            }
            self.flush_hoisted(&mut out, at);
        }
        out
    }

    /// Outside device code, the statements the last one needs before it.
    fn flush_hoisted(&mut self, out: &mut hir::Block, at: usize) {
        if self.dev.is_empty() && !self.hoisted.is_empty() {
            let pre = std::mem::take(&mut self.hoisted);
            out.splice(at..at, pre);
        }
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Option<hir::Stmt> {
        use ast::StmtKind as K;
        let kind = match &s.kind {
            K::Let { name, ty, init } => {
                if let Some(t) = ty.filter(|t| t.tuple.is_some()) {
                    self.value_type(t, "variable");
                    return None;
                }
                let want = ty.map(type_of);
                let (h, got) = self.expr(init, want);
                let ty = match want {
                    Some(w) => {
                        self.coerce(h, got, w, init.span);
                        w
                    }
                    None => self.finalize(h, got),
                };
                if !self.storable(ty, init.span) {
                    return None;
                }
                if ty.is_array() {
                    self.note_violation(s.span, "declares an array variable");
                }
                if ty.is_array() && !self.dev.is_empty() {
                    self.err(
                        Diag::error(
                            "accl::device::array_let",
                            "arrays cannot be created or aliased inside a device construct",
                            s.span,
                            "array variable declared in device code",
                        )
                        .with_label(self.dev[0].kind_span, "inside this construct")
                        .with_help(
                            "declare the array before the construct and list it in a data clause",
                        ),
                    );
                }
                let local = self.new_local(&name.name, ty, true, name.span);
                // An alias of a constant array is as constant as it.
                self.body.locals[local].constant = self.constant_array(h).is_some();
                hir::StmtKind::Let { local, init: h }
            }
            K::Const { name, ty, init } => {
                let want = ty.map(|t| self.value_type(t, "constant"));
                if matches!(init.kind, ast::ExprKind::Array(_)) || want.is_some_and(Type::is_array)
                {
                    return self
                        .const_array(name, want, init)
                        .map(|kind| hir::Stmt { kind, span: s.span });
                }
                self.const_decl(name, ty, init);
                return None;
            }
            K::LetTuple { pats, init } => return self.let_tuple(s, pats, init),
            K::Assign {
                target,
                op,
                op_span,
                value,
            } => {
                if let ast::ExprKind::Tuple(targets) = &target.kind {
                    return self.assign_tuple(s, targets, op.map(|o| (o, *op_span)), value);
                }
                return self
                    .assign(s, target, *op, *op_span, value)
                    .map(|kind| hir::Stmt { kind, span: s.span });
            }
            K::Expr(e) => {
                if let ast::ExprKind::Call(f, args) = &e.kind {
                    match self.routine_directive(f, args, e.span) {
                        Some(Ok(d)) => {
                            let as_directive = ast::Stmt {
                                kind: K::Directive(d),
                                span: s.span,
                            };
                            return self.stmt(&as_directive);
                        }
                        Some(Err(())) => return None,
                        None => {}
                    }
                }
                let (h, ty) = self.expr_any(e, None);
                if let Type::Tuple(t) = ty {
                    return Some(hir::Stmt {
                        kind: self.discard_tuple(h, t),
                        span: s.span,
                    });
                }
                self.finalize(h, ty);
                if !matches!(e.kind, ast::ExprKind::Call(..) | ast::ExprKind::Error) {
                    self.err(
                        Diag::error(
                            "accl::type::unused_value",
                            "this expression's value is unused",
                            e.span,
                            "computed and thrown away",
                        )
                        .warning()
                        .with_help("assign it to a variable, or remove it"),
                    );
                }
                hir::StmtKind::Expr(h)
            }
            K::If { cond, then, els } => {
                let c = self.cond(cond);
                let then = self.block(then);
                let els = els.as_ref().map(|b| self.block(b)).unwrap_or_default();
                hir::StmtKind::If { cond: c, then, els }
            }
            K::While { cond, body } => {
                let c = self.cond(cond);
                self.loop_stack.push(self.scopes.len());
                let body = self.block(body);
                self.loop_stack.pop();
                hir::StmtKind::While { cond: c, body }
            }
            K::For(f) if f.rev => self.descending(f),
            K::For(f) => hir::StmtKind::For(self.for_loop(f)),
            K::ForEach(f) => self.for_each(f),
            K::Break | K::Continue => {
                let what = if matches!(s.kind, K::Break) {
                    "break"
                } else {
                    "continue"
                };
                match self.loop_stack.last() {
                    None => {
                        self.err(Diag::error(
                            "accl::syntax::break_outside_loop",
                            format!("`{what}` outside of a loop"),
                            s.span,
                            "not inside `for` or `while`",
                        ));
                        return None;
                    }
                    Some(_)
                        if self.dev.last().is_some_and(|f| {
                            let base = if matches!(s.kind, K::Break) {
                                f.break_base
                            } else {
                                f.loop_base
                            };
                            self.loop_stack.len() <= base
                        }) =>
                    {
                        let f = self.dev.last().unwrap();
                        self.err(
                            Diag::error(
                                "accl::device::break_out_of_construct",
                                format!("`{what}` cannot leave a device construct's loop"),
                                s.span,
                                format!("would leave the `{}` iteration space", f.kind.name()),
                            )
                            .with_label(f.kind_span, "this construct's iterations run in parallel")
                            .with_help("guard the iteration's work with `if` instead"),
                        );
                        return None;
                    }
                    Some(_) => {
                        if matches!(s.kind, K::Break) {
                            hir::StmtKind::Break
                        } else {
                            hir::StmtKind::Continue
                        }
                    }
                }
            }
            K::Return(e) => {
                if let Some(f) = self.dev.first() {
                    let ks = f.kind_span;
                    self.err(
                        Diag::error(
                            "accl::device::return_in_construct",
                            "`return` inside a device construct",
                            s.span,
                            "cannot return from here",
                        )
                        .with_label(ks, "inside this construct"),
                    );
                    return None;
                }
                if !self.in_fn {
                    self.err(Diag::error(
                        "accl::syntax::return_outside_fn",
                        "`return` outside of a function",
                        s.span,
                        "the top level cannot return",
                    ));
                    return None;
                }
                let ret = self.body.ret;
                match e {
                    Some(e) if ret.tuple().is_some() => {
                        let t = ret.tuple().expect("checked");
                        self.return_tuple(s, e, t)
                    }
                    Some(e) => {
                        let (h, ty) = self.expr(e, Some(ret));
                        if ret == Type::Unit {
                            self.err(
                                Diag::error(
                                    "accl::type::return_value_in_unit_fn",
                                    "this function returns no value",
                                    e.span,
                                    "value returned here",
                                )
                                .with_help("declare the result type: `fn name(..) -> T`"),
                            );
                        } else {
                            self.coerce(h, ty, ret, e.span);
                        }
                        self.returns_constant(h, e.span);
                        hir::StmtKind::Return(Some(h))
                    }
                    None => {
                        if ret != Type::Unit {
                            self.err(Diag::error(
                                "accl::type::missing_return_value",
                                format!("this function must return a `{ret}`"),
                                s.span,
                                "`return` without a value",
                            ));
                        }
                        hir::StmtKind::Return(None)
                    }
                }
            }
            K::Block(b) => hir::StmtKind::Block(self.block(b)),
            K::Fn(f) => {
                self.err(
                    Diag::error(
                        "accl::syntax::nested_fn",
                        "functions are declared at the top level only",
                        f.name.span,
                        "nested function",
                    )
                    .with_help("move this function out of the block"),
                );
                return None;
            }
            K::Directive(d) if d.kind == ast::DirectiveKind::Declare => {
                return self.declare_directive(s, d, &[]);
            }
            K::Directive(d) if d.kind == ast::DirectiveKind::Loop && self.in_fn => {
                // A routine's own `loop`s run where it is called.
                return self.directive(s, d);
            }
            K::Directive(d) => {
                self.note_violation(
                    d.kind_span,
                    format!("contains {} construct", d.kind.described()),
                );
                self.update_races(d);
                if let Some(b) = self.private_arrays(s, d) {
                    return Some(hir::Stmt {
                        kind: hir::StmtKind::Block(self.block(&b)),
                        span: s.span,
                    });
                }
                return self.directive(s, d);
            }
            K::Atomic {
                target,
                op,
                op_span,
                value,
            } => return self.atomic(s, target, *op, *op_span, value, false),
            K::AtomicForm { capture, stmts } => return self.atomic_form(s, *capture, stmts),
            K::Cache(sections) => return self.cache(s, sections),
            K::Error | K::Import { .. } => return None,
        };
        Some(hir::Stmt { kind, span: s.span })
    }

    fn storable(&mut self, ty: Type, span: Span) -> bool {
        let what = match ty {
            Type::Unit => "the result of a call that returns nothing",
            Type::TypeArg(_) => "a type",
            _ => return true,
        };
        if ty != Type::Error {
            self.err(Diag::error(
                "accl::type::not_storable",
                format!("cannot store {what} in a variable"),
                span,
                format!("this is {what}"),
            ));
        }
        false
    }

    /// The name in a function declaration spanning `decl` (`fn name(..)`),
    /// for "defined here" labels; the `fn` keyword if it cannot be found.
    pub(super) fn fn_name_span(&self, decl: Span) -> Span {
        let start = decl.start as usize;
        let fallback = Span::new(start, start + 2);
        let Some(rest) = self.src.get(start..).and_then(|r| r.strip_prefix("fn")) else {
            return fallback;
        };
        let trimmed = rest.trim_start();
        let name_start = start + 2 + (rest.len() - trimmed.len());
        let len = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(trimmed.len());
        if len == 0 {
            fallback
        } else {
            Span::new(name_start, name_start + len)
        }
    }

    fn cond(&mut self, e: &ast::Expr) -> ExprH {
        let (h, ty) = self.expr(e, Some(Type::BOOL));
        self.coerce(h, ty, Type::BOOL, e.span);
        h
    }

    fn const_decl(&mut self, name: &ast::Ident, ty: &Option<ast::TypeExpr>, init: &ast::Expr) {
        let want = ty.map(|t| self.value_type(t, "constant"));
        let (h, got) = self.expr(init, want);
        if let Some(w) = want {
            self.coerce(h, got, w, init.span);
        }
        let value = match &self.body.exprs[h] {
            hir::Expr::Const(v) => *v,
            _ => {
                if self.body.types[h.index()] != Type::Error {
                    self.err(
                        Diag::error(
                            "accl::type::not_constant",
                            format!("the value of constant `{}` is not known at compile time", name.name),
                            init.span,
                            "not a constant expression",
                        )
                        .with_help("a constant is built from literals, other constants, operators and casts; use `let` for a variable"),
                    );
                }
                return;
            }
        };
        // Top-level constants are visible in functions too.
        if self.scopes.len() == 1 && !self.in_fn {
            self.global_consts
                .insert(name.name.clone(), (value, name.span));
        }
        if let Some(s) = self.scopes.last_mut() {
            s.names
                .insert(name.name.clone(), (Binding::Const(value), name.span));
        }
    }

    fn for_loop(&mut self, f: &ast::ForLoop) -> hir::ForLoop {
        let header = self.loop_header(f);
        self.loop_stack.push(self.scopes.len());
        let body = self.block_in_scope(&f.body);
        self.loop_stack.pop();
        self.pop_scope();
        hir::ForLoop { header, body }
    }

    /// Check a loop's bounds and declare its variable in a new scope (left
    /// open for the body; the caller pops it).
    fn loop_header(&mut self, f: &ast::ForLoop) -> hir::LoopHeader {
        // A plain `for` statement counts down in `descending`; here are a
        // construct's own loops.
        if f.rev {
            self.refuse_descending(f);
        }
        let (lo, lt) = self.expr(&f.lo, None);
        let (hi, ht) = self.expr(&f.hi, None);
        let ty = match self.unify(lo, lt, hi, ht, f.lo.span.to(f.hi.span), None) {
            Type::IntLit => Type::I32,
            t => t,
        };
        let ty = if ty != Type::Error && !ty.is_int_like() {
            self.err(
                Diag::error(
                    "accl::type::range_not_integer",
                    format!("loop bounds must be integers, found `{ty}`"),
                    f.lo.span.to(f.hi.span),
                    "not an integer range",
                )
                .with_help(format!(
                    "loop over integers and convert in the body: `for {v} in 0..n {{ let x = {v} as f64; .. }}`",
                    v = f.var.name
                )),
            );
            // The variable gets the error type, so its uses report nothing more.
            Type::Error
        } else {
            ty
        };
        self.coerce(lo, self.body.types[lo.index()], ty, f.lo.span);
        self.coerce(hi, self.body.types[hi.index()], ty, f.hi.span);
        self.push_scope();
        let var = self.new_local(&f.var.name, ty, false, f.var.span);
        hir::LoopHeader {
            var,
            lo,
            hi,
            inclusive: f.inclusive,
            span: f.span,
        }
    }
}

/// The type a written type expression denotes.
pub(crate) fn type_of(t: ast::TypeExpr) -> Type {
    if let Some(t) = t.tuple {
        Type::Tuple(t)
    } else if t.string {
        Type::Str
    } else if t.rank == 0 {
        Type::Scalar(t.elem)
    } else {
        Type::Array(t.elem, t.rank)
    }
}
