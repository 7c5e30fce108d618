//! Facts about a kernel's body that decide how it maps onto a device:
//! whether a gang passes values through memory, whether the body is
//! straight-line (coarsening), whether anything leaves a gang iteration
//! early (unroll and jam), whether it caches sections. Walked once when
//! the kernel is lowered ([`crate::kir::BodyFacts`]); the plan reads them
//! at every launch.

use crate::kir::{ArrayH, Block, BodyFacts, Expr, ExprH, FuncH, Function, Kernel, StmtKind};

/// The facts about `k`'s body that its layouts depend on (lowering records
/// them in the kernel).
pub fn body_facts(k: &Kernel) -> BodyFacts {
    BodyFacts {
        shares_memory: gang_shares_memory(k),
        straight_line: straight_line(&k.entry, &k.entry.body),
        no_early_exit: straight(&k.entry.body),
        caches: has_cache(k),
    }
}

/// Does some array of `k` get both read and written by its code (loads,
/// stores, atomics, in the kernel or its functions)? Only then can the
/// lanes of a gang pass values through memory within one gang iteration,
/// and need the barriers of gang-redundant stores and `loop vector`
/// (iterations of a `parallel loop` are independent, so nothing passes
/// between them).
fn gang_shares_memory(k: &Kernel) -> bool {
    let (read, written) = array_access(k);
    read.iter().zip(&written).any(|(r, w)| *r && *w)
}

/// Which arrays of `k` its code reads (loads, atomics) and which it writes
/// (element stores, atomics), in the kernel or its functions, by array
/// index.
pub fn array_access(k: &Kernel) -> (Vec<bool>, Vec<bool>) {
    fn exprs(f: &Function, read: &mut [bool], written: &mut [bool]) {
        for (_, e) in f.exprs.iter() {
            match e {
                Expr::Load { array, .. } => read[array.index()] = true,
                Expr::Atomic { array, .. } => {
                    read[array.index()] = true;
                    written[array.index()] = true;
                }
                _ => {}
            }
        }
    }
    fn stores(b: &Block, written: &mut [bool]) {
        for s in b {
            match &s.kind {
                StmtKind::StoreElem { array, .. } => written[array.index()] = true,
                StmtKind::If { then, els, .. } => {
                    stores(then, written);
                    stores(els, written);
                }
                StmtKind::Loop { body, continuing } => {
                    stores(body, written);
                    stores(continuing, written);
                }
                StmtKind::VectorLoop(v) => stores(&v.body, written),
                _ => {}
            }
        }
    }
    let n = k.arrays.len();
    let (mut read, mut written) = (vec![false; n], vec![false; n]);
    for f in std::iter::once(&k.entry).chain(k.functions.iter().map(|(_, f)| f)) {
        exprs(f, &mut read, &mut written);
        stores(&f.body, &mut written);
    }
    (read, written)
}

/// The arrays whose buffers `crate::Spec::coherent_writes` makes
/// `Coherent`: those [`loop_updated`] or [`reloaded`] finds.
pub fn coherent(k: &Kernel) -> Vec<bool> {
    let looped = loop_updated(k);
    let reloaded = reloaded(k);
    looped
        .iter()
        .zip(&reloaded)
        .map(|(l, r)| *l || *r)
        .collect()
}

/// The arrays an invocation of `k` may load after it stored to them with
/// a store to another array in between, in program order outside loops
/// (`loop_updated` covers loops): `v[i] += a[i]; w[i] += 1.0; x[i] +=
/// v[i];` reloads `v`. Calls are followed into the functions they call.
/// Together with [`loop_updated`], the ones
/// `crate::Spec::coherent_writes` makes `Coherent`. (A load right after
/// its array's store, as the Jacobi sweep's error reads `b[i, j]`, came
/// out right on an H100 and stays as it is.)
pub fn reloaded(k: &Kernel) -> Vec<bool> {
    struct Walk<'k> {
        k: &'k Kernel,
        stored: Vec<bool>,
        /// Another array was stored to after this one's last store.
        passed: Vec<bool>,
        reloaded: Vec<bool>,
        /// Functions being walked (no recursion on the device, but a
        /// guard all the same).
        open: Vec<FuncH>,
    }
    impl Walk<'_> {
        fn expr(&mut self, f: &Function, e: ExprH) {
            match &f.exprs[e] {
                Expr::Load { array, .. } => self.load(*array),
                Expr::Atomic { array, .. } => {
                    self.load(*array);
                    self.store(*array);
                }
                Expr::Call(h, _) => self.call(*h),
                _ => {}
            }
            for o in f.exprs[e].operands() {
                self.expr(f, o);
            }
        }
        fn load(&mut self, a: ArrayH) {
            if self.stored[a.index()] && self.passed[a.index()] {
                self.reloaded[a.index()] = true;
            }
        }
        fn store(&mut self, a: ArrayH) {
            for (b, p) in self.passed.iter_mut().enumerate() {
                *p |= self.stored[b] && b != a.index();
            }
            self.stored[a.index()] = true;
            self.passed[a.index()] = false;
        }
        fn call(&mut self, h: FuncH) {
            if self.open.contains(&h) {
                return;
            }
            self.open.push(h);
            let k = self.k;
            let g = &k.functions[h];
            self.block(g, &g.body);
            self.open.pop();
        }
        fn block(&mut self, f: &Function, b: &Block) {
            for s in b {
                match &s.kind {
                    StmtKind::StoreElem {
                        array,
                        index,
                        value,
                    } => {
                        index.iter().chain([value]).for_each(|&e| self.expr(f, e));
                        self.store(*array);
                    }
                    StmtKind::Store { value: e, .. } | StmtKind::Eval(e) => self.expr(f, *e),
                    StmtKind::Return(Some(e)) => self.expr(f, *e),
                    StmtKind::ReturnTuple(es) => es.iter().for_each(|&e| self.expr(f, e)),
                    StmtKind::CallTuple { func, args, .. } => {
                        args.iter().for_each(|&a| self.expr(f, a));
                        self.call(*func);
                    }
                    StmtKind::If { cond, then, els } => {
                        self.expr(f, *cond);
                        self.block(f, then);
                        self.block(f, els);
                    }
                    // Twice: a load in one trip after a store in the one
                    // before.
                    StmtKind::Loop { body, continuing } => {
                        for _ in 0..2 {
                            self.block(f, body);
                            self.block(f, continuing);
                        }
                    }
                    StmtKind::VectorLoop(v) => self.block(f, &v.body),
                    StmtKind::Cache { lo, .. } => self.expr(f, *lo),
                    _ => {}
                }
            }
        }
    }
    let n = k.arrays.len();
    let mut w = Walk {
        k,
        stored: vec![false; n],
        passed: vec![false; n],
        reloaded: vec![false; n],
        open: Vec::new(),
    };
    w.block(&k.entry, &k.entry.body);
    w.reloaded
}

/// The arrays that sequential loops of `k` (in the kernel or its
/// functions, at any depth, and in the functions called from such loops)
/// both store to and load from, by array index: the ones
/// `crate::Spec::coherent_writes` makes `Coherent`. (A loop that writes an
/// array and a later loop that reads it count too.)
pub fn loop_updated(k: &Kernel) -> Vec<bool> {
    struct Seen {
        read: Vec<bool>,
        written: Vec<bool>,
        /// Functions called from inside a loop.
        called: Vec<bool>,
    }
    fn loads(f: &Function, e: ExprH, seen: &mut Seen) {
        match &f.exprs[e] {
            Expr::Load { array, .. } => seen.read[array.index()] = true,
            Expr::Call(h, _) => seen.called[h.index()] = true,
            _ => {}
        }
        for o in f.exprs[e].operands() {
            loads(f, o, seen);
        }
    }
    fn walk(f: &Function, b: &Block, in_loop: bool, seen: &mut Seen) {
        for s in b {
            match &s.kind {
                StmtKind::StoreElem {
                    array,
                    index,
                    value,
                } if in_loop => {
                    seen.written[array.index()] = true;
                    index.iter().chain([value]).for_each(|&e| loads(f, e, seen));
                }
                StmtKind::Store { value: e, .. } | StmtKind::Eval(e) if in_loop => {
                    loads(f, *e, seen)
                }
                StmtKind::CallTuple { func, args, .. } if in_loop => {
                    seen.called[func.index()] = true;
                    args.iter().for_each(|&a| loads(f, a, seen));
                }
                StmtKind::If { cond, then, els } => {
                    if in_loop {
                        loads(f, *cond, seen);
                    }
                    walk(f, then, in_loop, seen);
                    walk(f, els, in_loop, seen);
                }
                StmtKind::Loop { body, continuing } => {
                    walk(f, body, true, seen);
                    walk(f, continuing, true, seen);
                }
                StmtKind::VectorLoop(v) => walk(f, &v.body, in_loop, seen),
                _ => {}
            }
        }
    }
    let n = k.arrays.len();
    let funcs: Vec<_> = k.functions.iter().collect();
    let mut seen = Seen {
        read: vec![false; n],
        written: vec![false; n],
        called: vec![false; funcs.len()],
    };
    // Until no more functions turn out to be called from loops (each
    // round walks everything again; what it marks only grows).
    loop {
        let before = seen.called.clone();
        walk(&k.entry, &k.entry.body, false, &mut seen);
        for (h, f) in &funcs {
            walk(f, &f.body, before[h.index()], &mut seen);
        }
        if seen.called == before {
            break;
        }
    }
    let Seen { read, written, .. } = seen;
    read.iter().zip(&written).map(|(r, w)| *r && *w).collect()
}

/// Only local and element stores, no load of an array after a store to it
/// (see `crate::spirv::coarsen`).
fn straight_line(f: &Function, b: &Block) -> bool {
    let mut stored = Vec::new();
    for s in b {
        match &s.kind {
            StmtKind::Store { value, .. } => {
                if !plain(f, *value, &stored) {
                    return false;
                }
            }
            StmtKind::StoreElem {
                array,
                index,
                value,
            } => {
                if !index.iter().chain([value]).all(|&e| plain(f, e, &stored)) {
                    return false;
                }
                stored.push(*array);
            }
            _ => return false,
        }
    }
    true
}

/// No call, no atomic, no load of an array in `stored`.
fn plain(f: &Function, e: ExprH, stored: &[ArrayH]) -> bool {
    match &f.exprs[e] {
        Expr::Const(_) | Expr::Param(_) | Expr::Local(_) | Expr::InvocationIndex => true,
        Expr::Load { array, index } => {
            !stored.contains(array) && index.iter().all(|&i| plain(f, i, stored))
        }
        Expr::Unary(_, a) | Expr::Cast(a, _) => plain(f, *a, stored),
        Expr::Binary(_, a, b) | Expr::Reduce(_, a, b) => {
            plain(f, *a, stored) && plain(f, *b, stored)
        }
        Expr::Math(_, args) => args.iter().all(|&a| plain(f, a, stored)),
        Expr::Call(..) | Expr::Atomic { .. } => false,
    }
}

/// No `break`/`continue`/`return` that leaves the gang iteration or a
/// `loop vector` (those inside nested sequential loops stay there).
fn straight(b: &Block) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) | StmtKind::ReturnTuple(_) => {
            false
        }
        StmtKind::If { then, els, .. } => straight(then) && straight(els),
        StmtKind::VectorLoop(v) => straight(&v.body),
        StmtKind::Loop { body, continuing } => {
            exits_only_inner(body) && exits_only_inner(continuing)
        }
        _ => true,
    })
}

/// Inside a sequential loop: `break`/`continue` are its own; a `return`
/// still leaves everything.
fn exits_only_inner(b: &Block) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Return(_) | StmtKind::ReturnTuple(_) => false,
        StmtKind::If { then, els, .. } => exits_only_inner(then) && exits_only_inner(els),
        StmtKind::Loop { body, continuing } => {
            exits_only_inner(body) && exits_only_inner(continuing)
        }
        StmtKind::VectorLoop(v) => exits_only_inner(&v.body),
        _ => true,
    })
}

/// Does a kernel with `cache` statements keep its gangs whole workgroups?
fn has_cache(k: &Kernel) -> bool {
    k.entry
        .body
        .iter()
        .any(|s| matches!(s.kind, StmtKind::Cache { .. }))
}
