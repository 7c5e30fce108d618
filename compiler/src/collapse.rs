//! Automatic collapse: a `parallel loop` whose body is one inner `for`
//! loop whose iterations are provably independent runs as if written with
//! `collapse(2)` (and so on down a perfect nest, up to [`MAX_LEVELS`]).
//!
//! Why: `parallel loop for y in .. { for x in 0..W { img[y, x] = f(x, y); } }`
//! (the shared Mandelbrot examples) gives the device one invocation per row,
//! each running a long sequential loop: a few hundred threads on a GPU with
//! a hundred thousand, so the kernel is latency-bound, and on a GPU that
//! time-slices queues, async queues cannot help it. One invocation per
//! element fills the device. OpenACC compilers do the same for inner loops
//! they can prove independent.
//!
//! The proof is deliberately simple and syntactic (anything it does not
//! understand keeps the loop sequential):
//! * the construct has no `seq`/`gang`/`worker`/`vector`, no reductions, no
//!   `private`, no `vector_length`/`num_gangs`, and an explicit
//!   `collapse(n)` of more than 1 is left alone;
//! * the inner loop's bounds use neither loop variables of the nest nor
//!   arrays nor calls, so the host evaluates them once at launch;
//! * the inner body assigns only locals it declares itself, has no
//!   `break`/`continue` of the inner loop, `return`, atomics, nested
//!   constructs, or calls that could touch arrays;
//! * every array it writes is read and written only at one index list,
//!   which has each collapsed loop variable itself as a component and
//!   otherwise uses only loop variables of the nest and values from outside
//!   the construct: distinct iterations touch distinct elements and read
//!   nothing another iteration writes.
//!
//! The host reference runs the nest as written; results are the same,
//! element for element, because the iterations are independent.

use lang::hir::{self, Block, Expr, ExprH, LocalH, StmtKind};
use lang::Builtins;

/// The deepest nest collapsed automatically.
pub const MAX_LEVELS: usize = 3;

/// The loop headers and innermost body to compile `construct` with: the
/// nest as written, or deeper when its inner loops are independent.
pub fn levels<'a>(
    program: &hir::Program,
    body: &'a hir::Body,
    construct: &hir::Construct,
    loops: &'a [hir::LoopHeader],
    block: &'a Block,
    builtins: &Builtins,
) -> (Vec<hir::LoopHeader>, &'a Block) {
    let mut loops = loops.to_vec();
    let mut block = block;
    let c = &construct.clauses;
    if c.seq
        || c.gang
        || c.worker
        || c.vector
        || c.collapse > 1
        || !c.reductions.is_empty()
        || !c.private.is_empty()
        || c.vector_length.is_some()
        || c.num_gangs.is_some()
    {
        return (loops, block);
    }
    let cx = Cx {
        program,
        body,
        builtins,
    };
    // The perfect nest below: single `for` statements with bounds the host
    // can evaluate at launch.
    let mut nest: Vec<(&hir::LoopHeader, &Block)> = Vec::new();
    let mut inner = block;
    while loops.len() + nest.len() < MAX_LEVELS {
        let [s] = inner.as_slice() else { break };
        let StmtKind::For(f) = &s.kind else { break };
        let mut vars: Vec<LocalH> = loops.iter().map(|l| l.var).collect();
        vars.extend(nest.iter().map(|(h, _)| h.var));
        if !cx.invariant(f.header.lo, &vars) || !cx.invariant(f.header.hi, &vars) {
            break;
        }
        nest.push((&f.header, &f.body));
        inner = &f.body;
    }
    // The deepest prefix of it whose iterations are independent.
    for d in (1..=nest.len()).rev() {
        let new: Vec<LocalH> = nest[..d].iter().map(|(h, _)| h.var).collect();
        let mut vars: Vec<LocalH> = loops.iter().map(|l| l.var).collect();
        vars.extend(&new);
        let body = nest[d - 1].1;
        let headers: Vec<&hir::LoopHeader> = nest[..d].iter().map(|(h, _)| *h).collect();
        if cx.independent(body, &new, &vars, &headers) {
            loops.extend(nest[..d].iter().map(|(h, _)| (*h).clone()));
            block = body;
            break;
        }
    }
    (loops, block)
}

struct Cx<'a> {
    program: &'a hir::Program,
    body: &'a hir::Body,
    builtins: &'a Builtins,
}

impl Cx<'_> {
    /// A bound the host can evaluate at launch: constants and locals from
    /// outside the nest, with arithmetic.
    fn invariant(&self, e: ExprH, vars: &[LocalH]) -> bool {
        match &self.body.exprs[e] {
            Expr::Const(_) => true,
            Expr::Local(l) => !vars.contains(l),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.invariant(*a, vars),
            Expr::Binary(_, a, b) => self.invariant(*a, vars) && self.invariant(*b, vars),
            _ => false,
        }
    }

    /// Do distinct values of the `new` loop variables touch distinct
    /// elements, none of which another iteration reads?
    fn independent(
        &self,
        block: &Block,
        new: &[LocalH],
        vars: &[LocalH],
        headers: &[&hir::LoopHeader],
    ) -> bool {
        // Locals of the body only: no assignment of an outer one (not even a
        // reduction), no `continue` of the collapsed loop.
        let w = crate::autovec::walk(self.program, self.body, self.builtins, block, Vec::new());
        if w.refused.is_some()
            || w.continues
            || !w.updates.is_empty()
            || w.assigned.iter().any(|(l, _)| !w.declared.contains(l))
        {
            return false;
        }
        let written: Vec<LocalH> = w.accesses.iter().filter(|a| a.2).map(|a| a.0).collect();
        for a in &written {
            let mut of_a = w.accesses.iter().filter(|acc| acc.0 == *a);
            let Some(first) = of_a.next() else { continue };
            let idx: Vec<ExprH> = first.1.iter().map(|&e| self.resolve(e, vars, &w)).collect();
            let idx = &idx;
            // One index list for every access of the array...
            if !of_a.all(|acc| {
                let other: Vec<ExprH> = acc.1.iter().map(|&e| self.resolve(e, vars, &w)).collect();
                self.same_list(&other, idx)
            }) {
                return false;
            }
            // ...with each new variable as a component (or as the part in
            // `0..K` of `outer * K + x`, the flattened index of C: distinct
            // pairs of `outer` and `x` are distinct elements), and nothing
            // that varies inside an iteration.
            let has = |x: LocalH| {
                idx.iter().any(|&e| {
                    matches!(self.body.exprs[e], Expr::Local(l) if l == x)
                        || (idx.len() == 1 && self.flattened(e, x, vars, headers))
                })
            };
            if !new.iter().all(|&x| has(x))
                || !idx.iter().all(|&e| self.index_term(e, vars, &w.declared))
            {
                return false;
            }
        }
        true
    }

    /// `e` itself, or the initial value of the body's `let` local `e`
    /// when nothing assigns it and that value reads only loop variables of
    /// the nest and values from outside the construct (`let k = i * cols +
    /// j;` then `a[k]`).
    fn resolve(&self, e: ExprH, vars: &[LocalH], w: &crate::autovec::Walk) -> ExprH {
        let Expr::Local(l) = self.body.exprs[e] else {
            return e;
        };
        w.let_init(l)
            .filter(|&init| self.index_term(init, vars, &w.declared))
            .unwrap_or(e)
    }

    /// Is `e` `outer * K + x` (in either order of either operation) with
    /// `outer` a loop variable of the nest other than `x`, and `x` running
    /// over `0..K` exactly?
    fn flattened(
        &self,
        e: ExprH,
        x: LocalH,
        vars: &[LocalH],
        headers: &[&hir::LoopHeader],
    ) -> bool {
        let Some(h) = headers.iter().find(|h| h.var == x) else {
            return false;
        };
        let zero = matches!(&self.body.exprs[h.lo], Expr::Const(c) if c.as_i128() == Some(0));
        if !zero || h.inclusive {
            return false;
        }
        let Expr::Binary(lang::ast::BinOp::Add, a, b) = self.body.exprs[e] else {
            return false;
        };
        let is_x = |e: ExprH| matches!(self.body.exprs[e], Expr::Local(l) if l == x);
        let times = |e: ExprH| match self.body.exprs[e] {
            Expr::Binary(lang::ast::BinOp::Mul, p, q) => {
                [(p, q), (q, p)].into_iter().any(|(v, k)| {
                    matches!(self.body.exprs[v], Expr::Local(o) if o != x && vars.contains(&o))
                        && self.same(k, h.hi)
                })
            }
            _ => false,
        };
        (is_x(b) && times(a)) || (is_x(a) && times(b))
    }

    /// An index component: arithmetic on constants, loop variables of the
    /// nest and locals from outside the construct.
    fn index_term(&self, e: ExprH, vars: &[LocalH], declared: &[LocalH]) -> bool {
        match &self.body.exprs[e] {
            Expr::Const(_) => true,
            Expr::Local(l) => vars.contains(l) || !declared.contains(l),
            Expr::Unary(_, a) | Expr::Cast(a, _) => self.index_term(*a, vars, declared),
            Expr::Binary(_, a, b) => {
                self.index_term(*a, vars, declared) && self.index_term(*b, vars, declared)
            }
            _ => false,
        }
    }

    fn same_list(&self, a: &[ExprH], b: &[ExprH]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| self.same(x, y))
    }

    /// Structurally equal expressions.
    fn same(&self, a: ExprH, b: ExprH) -> bool {
        match (&self.body.exprs[a], &self.body.exprs[b]) {
            (Expr::Const(x), Expr::Const(y)) => x == y,
            (Expr::Local(x), Expr::Local(y)) => x == y,
            (Expr::Unary(o, x), Expr::Unary(p, y)) => o == p && self.same(*x, *y),
            (Expr::Cast(x, s), Expr::Cast(y, t)) => s == t && self.same(*x, *y),
            (Expr::Binary(o, x1, x2), Expr::Binary(p, y1, y2)) => {
                o == p && self.same(*x1, *y1) && self.same(*x2, *y2)
            }
            _ => false,
        }
    }
}
