//! Scalars as OpenACC data. A scalar in a data clause has a device copy of
//! its own (OpenACC 3.3, 2.6): `kernels copyin(i) { i = 2; }` leaves the
//! host's `i` as it was, `enter data copyin(x)` makes `x` present, and
//! `update self(x)` brings the device's value back. Kernels take scalars by
//! value, so such a scalar becomes, for the whole body that declares it, an
//! array of one element: its uses read and write element 0, and its data
//! clauses are the array's, with the present table's rules, queues and race
//! checks of every other array on both backends.
//!
//! Which scalars: those named in a data clause of a `data`, `enter data`,
//! `exit data`, `update` or `declare` directive (or the runtime routines
//! that equal them), those `acc_is_present` asks about, and those a compute
//! construct names in `copyin`, `create`, `present` or `no_create` and
//! assigns. A compute construct's clause on a scalar it only reads, or
//! `copy`/`copyout` of one it assigns, gives the same answer with the
//! scalar passed by value, which keeps it a push constant of the kernel.
//! Scalars that a `reduction`, `private` or `firstprivate` clause names,
//! loop variables, parameters and top-level variables that functions use
//! stay plain values.
//!
//! A compute construct that uses such a scalar with no data clause for it
//! gets `copyin` for it (`parallel`, `serial`: a firstprivate scalar whose
//! device copy is used where one is present) or the arrays' implicit
//! `copy` (`kernels`).

use super::Checker;
use crate::diag::Diag;
use crate::hir::{
    self, assigned_in, ArrayUse, Block, Body, Construct, ConstructBody, DataClause, DataKind,
    DirectiveKind, Expr, ExprH, LocalH, Place, StmtKind,
};
use crate::span::Span;
use crate::types::{Scalar, Type};
use crate::value::Value;
use std::collections::HashSet;

impl Checker<'_> {
    /// The pass over every body, once all are checked.
    pub(super) fn give_data_scalars_device_copies(&mut self) {
        let mut diags = Vec::new();
        let used_by_fns: HashSet<LocalH> = self
            .out
            .functions
            .iter()
            .flat_map(|(_, f)| f.globals.iter().copied())
            .collect();
        let of = |body: Option<hir::FnH>, v: &[(Option<hir::FnH>, LocalH)]| -> HashSet<LocalH> {
            v.iter()
                .filter(|(b, _)| *b == body)
                .map(|&(_, l)| l)
                .collect()
        };
        let present = |body: Option<hir::FnH>, v: &[(Option<hir::FnH>, LocalH, Span)]| {
            v.iter()
                .filter(|(b, _, _)| *b == body)
                .map(|&(_, l, s)| (l, s))
                .collect::<Vec<_>>()
        };
        let mut keep = of(None, &self.unboxed);
        keep.extend(used_by_fns);
        keep.extend(self.out.globals.iter().copied());
        diags.extend(box_scalars(
            &mut self.out.main,
            &keep,
            &present(None, &self.present_scalars),
        ));
        let fns: Vec<hir::FnH> = self.out.functions.iter().map(|(h, _)| h).collect();
        for h in fns {
            let mut keep = of(Some(h), &self.unboxed);
            keep.extend(self.out.functions[h].params.iter().copied());
            let present = present(Some(h), &self.present_scalars);
            diags.extend(box_scalars(
                &mut self.out.functions[h].body,
                &keep,
                &present,
            ));
        }
        for d in diags {
            self.err(d);
        }
    }
}

/// Gives the data scalars of `body` their device copies; `keep` are the
/// locals that stay values, `present` the scalars that must be data
/// (`acc_is_present` arguments, `atomic` targets).
fn box_scalars(body: &mut Body, keep: &HashSet<LocalH>, present: &[(LocalH, Span)]) -> Vec<Diag> {
    let mut lets = HashSet::new();
    declared(&body.block, &mut lets);
    let mut wanted = HashSet::new();
    wanted_in(&body.block, &mut wanted);
    wanted.extend(present.iter().map(|&(l, _)| l));
    let boxed: HashSet<LocalH> = wanted
        .into_iter()
        .filter(|l| {
            let local = &body.locals[*l];
            lets.contains(l)
                && !keep.contains(l)
                && !local.constant
                && matches!(local.ty, Type::Scalar(_))
        })
        .collect();
    let mut diags = Vec::new();
    for &(l, span) in present {
        if !boxed.contains(&l) {
            let name = &body.locals[l].name;
            diags.push(
                Diag::error(
                    "accl::device::scalar_not_data",
                    format!("`{name}` has no device copy here"),
                    span,
                    "a scalar that stays a value",
                )
                .with_help(
                    "a scalar is data (with a device copy for `acc_is_present` and `atomic`) when declared with `let`, used by no function as a top-level variable, and named in no `reduction`, `private` or `firstprivate` clause",
                ),
            );
        }
    }
    if boxed.is_empty() {
        return diags;
    }
    let mut cx = Rewrite {
        exprs: &mut body.exprs,
        types: &mut body.types,
        boxed: &boxed,
    };
    for &l in &boxed {
        if let Type::Scalar(s) = body.locals[l].ty {
            body.locals[l].ty = Type::Array(s, 1);
            body.locals[l].data_scalar = true;
        }
    }
    // Every read of the value is a read of element 0 (rewritten in place,
    // so every use of the expression sees it); an expression already typed
    // as the array is the array itself (`acc_is_present(x)`).
    let reads: Vec<ExprH> = cx
        .exprs
        .iter()
        .filter(|(h, e)| {
            matches!(e, Expr::Local(l) if boxed.contains(l))
                && matches!(cx.types[h.index()], Type::Scalar(_))
        })
        .map(|(h, _)| h)
        .collect();
    for h in reads {
        let Expr::Local(l) = cx.exprs[h] else {
            continue;
        };
        let span = cx.exprs.span(h);
        let (array, zero) = cx.element(l, span, &body.locals[l].ty);
        cx.exprs[h] = Expr::Index(array, vec![zero]);
    }
    let locals = &body.locals;
    cx.block(&mut body.block, locals);
    diags
}

struct Rewrite<'a> {
    exprs: &'a mut crate::arena::Arena<Expr>,
    types: &'a mut Vec<Type>,
    boxed: &'a HashSet<LocalH>,
}

impl Rewrite<'_> {
    fn push(&mut self, e: Expr, ty: Type, span: Span) -> ExprH {
        let h = self.exprs.append(e, span);
        self.types.push(ty);
        h
    }

    /// The array of `l` and the index 0.
    fn element(&mut self, l: LocalH, span: Span, ty: &Type) -> (ExprH, ExprH) {
        let array = self.push(Expr::Local(l), *ty, span);
        let zero = self.push(Expr::Const(Value::I32(0)), Type::Scalar(Scalar::I32), span);
        (array, zero)
    }

    fn place(&mut self, place: &mut Place, span: Span, locals: &crate::arena::Arena<hir::Local>) {
        if let Place::Local(l) = *place {
            if self.boxed.contains(&l) {
                let (array, zero) = self.element(l, span, &locals[l].ty);
                *place = Place::Element {
                    array,
                    indices: vec![zero],
                };
            }
        }
    }

    fn block(&mut self, b: &mut Block, locals: &crate::arena::Arena<hir::Local>) {
        for s in b {
            let span = s.span;
            match &mut s.kind {
                StmtKind::Let { local, init } if self.boxed.contains(local) => {
                    let ty = locals[*local].ty;
                    *init = self.push(Expr::Array(vec![1], vec![*init]), ty, span);
                }
                StmtKind::Assign { place, .. } | StmtKind::Atomic { place, .. } => {
                    self.place(place, span, locals)
                }
                StmtKind::If { then, els, .. } => {
                    self.block(then, locals);
                    self.block(els, locals);
                }
                StmtKind::While { body, .. } | StmtKind::Block(body) => self.block(body, locals),
                StmtKind::For(f) => self.block(&mut f.body, locals),
                StmtKind::Construct(c) => {
                    self.construct(c);
                    match &mut c.body {
                        ConstructBody::Loops { body, .. } | ConstructBody::Block(body) => {
                            self.block(body, locals)
                        }
                        ConstructBody::None => {}
                    }
                }
                _ => {}
            }
        }
    }

    /// The construct's clauses and captures: the scalar is an array now.
    fn construct(&mut self, c: &mut Construct) {
        let boxed = self.boxed;
        let cl = &mut c.clauses;
        let (moved, kept): (Vec<DataClause>, Vec<DataClause>) =
            std::mem::take(&mut cl.scalar_clauses)
                .into_iter()
                .partition(|dc| boxed.contains(&dc.var));
        cl.scalar_clauses = kept;
        cl.data.extend(moved);
        if !matches!(
            c.kind,
            DirectiveKind::Parallel | DirectiveKind::ParallelLoop
        ) {
            return;
        }
        let mut assigned = Vec::new();
        if let ConstructBody::Loops { body, .. } | ConstructBody::Block(body) = &c.body {
            assigned_in(body, &mut assigned);
        }
        let mut used: Vec<LocalH> = Vec::new();
        let mut note = |l: &LocalH| {
            if boxed.contains(l) && !used.contains(l) {
                used.push(*l);
            }
        };
        c.captures.scalars.iter().for_each(&mut note);
        cl.copy_scalars.iter().for_each(&mut note);
        cl.firstprivate.iter().for_each(&mut note);
        assigned.iter().for_each(&mut note);
        cl.data.iter().map(|dc| &dc.var).for_each(&mut note);
        c.captures.scalars.retain(|l| !boxed.contains(l));
        cl.copy_scalars.retain(|l| !boxed.contains(l));
        cl.scalar_copies.retain(|l| !boxed.contains(l));
        cl.firstprivate.retain(|l| !boxed.contains(l));
        for l in used {
            let written = assigned.contains(&l);
            match c.captures.arrays.iter_mut().find(|a| a.var == l) {
                Some(a) => a.written |= written,
                None => c.captures.arrays.push(ArrayUse {
                    var: l,
                    read: true,
                    written,
                    span: c.kind_span,
                }),
            }
            if !cl.kernels && !cl.data.iter().any(|dc| dc.var == l) {
                cl.data.push(DataClause {
                    kind: DataKind::CopyIn,
                    var: l,
                    section: Vec::new(),
                    span: c.kind_span,
                });
            }
        }
    }
}

/// The locals `let` declares in `b`, at any depth.
fn declared(b: &Block, out: &mut HashSet<LocalH>) {
    for s in b {
        match &s.kind {
            StmtKind::Let { local, .. } => {
                out.insert(*local);
            }
            StmtKind::If { then, els, .. } => {
                declared(then, out);
                declared(els, out);
            }
            StmtKind::While { body, .. } | StmtKind::Block(body) => declared(body, out),
            StmtKind::For(f) => declared(&f.body, out),
            StmtKind::Construct(c) => match &c.body {
                ConstructBody::Loops { body, .. } | ConstructBody::Block(body) => {
                    declared(body, out)
                }
                ConstructBody::None => {}
            },
            _ => {}
        }
    }
}

/// The scalars the data clauses in `b` ask a device copy for.
fn wanted_in(b: &Block, out: &mut HashSet<LocalH>) {
    for s in b {
        match &s.kind {
            StmtKind::If { then, els, .. } => {
                wanted_in(then, out);
                wanted_in(els, out);
            }
            StmtKind::While { body, .. } | StmtKind::Block(body) => wanted_in(body, out),
            StmtKind::For(f) => wanted_in(&f.body, out),
            StmtKind::Construct(c) => {
                let compute = matches!(
                    c.kind,
                    DirectiveKind::Parallel | DirectiveKind::ParallelLoop
                );
                let mut assigned = Vec::new();
                if let ConstructBody::Loops { body, .. } | ConstructBody::Block(body) = &c.body {
                    if compute {
                        assigned_in(body, &mut assigned);
                    }
                    wanted_in(body, out);
                }
                for dc in &c.clauses.scalar_clauses {
                    let own_copy = matches!(
                        dc.kind,
                        DataKind::CopyIn
                            | DataKind::Create
                            | DataKind::Present
                            | DataKind::NoCreate
                    );
                    if !compute || (own_copy && assigned.contains(&dc.var)) {
                        out.insert(dc.var);
                    }
                }
            }
            _ => {}
        }
    }
}
