//! Innermost `for` loops in 128-bit SIMD: a loop whose body is
//! straight-line element-wise code runs several turns at once, one per
//! lane (four `f32` or `i32`, two `f64`), then its last turns one at a
//! time as before.
//!
//! Only what gives the scalar loop's bits is taken: lane-wise IEEE `+ - *
//! /`, negation, `sqrt`, `abs`, `floor`, `ceil`, `trunc` (each the same
//! correctly rounded or exact operation on every lane), wrapping `i32`
//! `+ - *`, `min`/`max` of `i32`; never a reassociation, a fused
//! multiply-add or a reduction into a scalar (whose order would change
//! the bits), nor anything that can fail (integer division) or branch.
//! Turns that run together must not see each other's writes: an array the
//! loop writes is read and written at one element per turn only, and an
//! array reached through two names (`let b = a`) is caught at run time by
//! comparing the storage of the written array with every other array's
//! (overlap: the scalar loop runs). Bounds stay proven before the loop:
//! the vector turns run only in a `for` loop's quick version, where every
//! index that is the loop variable plus a constant was checked for the
//! whole range, and after a check of every other (loop-invariant) index;
//! otherwise the scalar loop runs and raises its error at the same
//! element.

use crate::lower::{cl, Gen};
use crate::plan::scalar;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type as ClType, Value};
use lang::ast::{BinOp, UnOp};
use lang::hir::{Body, Expr, ExprH, ForLoop, LocalH, Place, StmtKind};
use lang::{Builtins, Scalar, Type};
use std::collections::HashMap;

/// An element access of a vector loop: the array, its other indices
/// (loop-invariant) and the constant `c` of its last index `var + c`.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub array: usize,
    pub rest: Vec<ExprH>,
    pub c: i64,
}

/// How a loop runs in SIMD.
#[derive(Debug)]
pub struct Plan {
    pub elem: Scalar,
    pub lanes: u8,
    /// Every distinct access (by array, other indices' text and `c`).
    pub accesses: Vec<Access>,
    /// (written array, another array the loop reaches): their storage
    /// must not overlap.
    pub pairs: Vec<(usize, usize)>,
}

/// The vector type of `elem`, and how many lanes it has.
fn vector(elem: Scalar) -> Option<(ClType, u8)> {
    match elem {
        Scalar::F32 => Some((types::F32X4, 4)),
        Scalar::F64 => Some((types::F64X2, 2)),
        Scalar::I32 => Some((types::I32X4, 4)),
        _ => None,
    }
}

fn float(t: Scalar) -> bool {
    matches!(t, Scalar::F32 | Scalar::F64)
}

/// Whether loop `fl` of `body` can run in SIMD, and how; `Err` says why
/// not.
pub fn plan(body: &Body, fl: &ForLoop, builtins: &Builtins) -> Result<Plan, String> {
    let var = fl.header.var;
    if !matches!(body.locals[var].ty, Type::Scalar(Scalar::I32 | Scalar::I64)) {
        return Err("its counter is not an `i32` or `i64`".into());
    }
    for s in &fl.body {
        match &s.kind {
            StmtKind::Let { .. }
            | StmtKind::Assign {
                place: Place::Element { .. },
                ..
            } => {}
            StmtKind::Assign { .. } => return Err("it assigns a scalar".into()),
            _ => return Err("its body is not only `let`s and element stores".into()),
        }
    }
    let elem = fl
        .body
        .iter()
        .find_map(|s| match &s.kind {
            StmtKind::Assign {
                place: Place::Element { array, .. },
                ..
            } => match body.exprs[*array] {
                Expr::Local(a) => match body.locals[a].ty {
                    Type::Array(e, _) => Some(e),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .ok_or("it stores no array element")?;
    let (_, lanes) = vector(elem).ok_or(format!(
        "its elements are `{}` (SIMD takes `f32`, `f64` and `i32`)",
        elem.name()
    ))?;
    let mut r = Recog {
        body,
        builtins,
        var,
        elem,
        lets: Vec::new(),
        accesses: Vec::new(),
        written: Vec::new(),
    };
    for s in &fl.body {
        match &s.kind {
            StmtKind::Let { local, init } => {
                if scalar(body.locals[*local].ty) != Some(elem) {
                    return Err(format!(
                        "`{}` is not `{}`",
                        body.locals[*local].name,
                        elem.name()
                    ));
                }
                r.value(*init)?;
                r.lets.push(*local);
            }
            StmtKind::Assign {
                place: Place::Element { array, indices },
                op,
                value,
            } => {
                if let Some(op) = op {
                    r.op(*op)?;
                }
                r.value(*value)?;
                let a = r.access(*array, indices)?;
                r.written.push(a.array);
                r.accesses.push(a);
            }
            _ => {}
        }
    }
    let mut accesses: Vec<Access> = Vec::new();
    for a in &r.accesses {
        if !accesses.iter().any(|b| r.same(a, b)) {
            accesses.push(a.clone());
        }
    }
    let mut pairs = Vec::new();
    for &w in &r.written {
        if accesses.iter().filter(|a| a.array == w).count() > 1 {
            return Err(format!(
                "it writes `{}` and reaches it at another element in the same turn \
                 (a dependence between turns)",
                body.locals[LocalH::new(w)].name
            ));
        }
        for a in &accesses {
            if a.array != w && !pairs.contains(&(w, a.array)) && !pairs.contains(&(a.array, w)) {
                pairs.push((w, a.array));
            }
        }
    }
    Ok(Plan {
        elem,
        lanes,
        accesses,
        pairs,
    })
}

/// The recogniser's walk over one loop body.
struct Recog<'a> {
    body: &'a Body,
    builtins: &'a Builtins,
    var: LocalH,
    elem: Scalar,
    /// The body's `let` locals so far (vectors, one value per lane).
    lets: Vec<LocalH>,
    accesses: Vec<Access>,
    written: Vec<usize>,
}

impl Recog<'_> {
    fn ty(&self, e: ExprH) -> Option<Scalar> {
        scalar(self.body.ty(e).defaulted())
    }

    fn op(&self, op: BinOp) -> Result<(), String> {
        let ok = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul => true,
            BinOp::Div => float(self.elem),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "it uses `{}` on `{}`",
                op.symbol(),
                self.elem.name()
            ))
        }
    }

    /// A value of the element type, computed lane by lane.
    fn value(&mut self, e: ExprH) -> Result<(), String> {
        if self.ty(e) != Some(self.elem) {
            return Err(format!(
                "it computes a value that is not `{}`",
                self.elem.name()
            ));
        }
        match &self.body.exprs[e] {
            Expr::Const(_) => Ok(()),
            Expr::Local(l) if *l == self.var => {
                Err("it uses the loop variable other than in an index".into())
            }
            Expr::Local(_) => Ok(()),
            Expr::Unary(UnOp::Neg, a) => self.value(*a),
            Expr::Binary(op, a, b) => {
                self.op(*op)?;
                self.value(*a)?;
                self.value(*b)
            }
            Expr::Cast(a, _) => self.value(*a),
            Expr::Index(arr, ix) => {
                let a = self.access(*arr, ix)?;
                self.accesses.push(a);
                Ok(())
            }
            Expr::Builtin(id, args) => {
                let name = self.builtins.get(*id).name.as_str();
                let ok = match name {
                    "sqrt" | "floor" | "ceil" | "trunc" => float(self.elem),
                    "abs" => true,
                    // Float `min`/`max` are std's (NaN and signed zeros),
                    // which no vector instruction matches.
                    "min" | "max" => !float(self.elem),
                    _ => false,
                };
                if !ok {
                    return Err(format!("it calls `{name}` on `{}`", self.elem.name()));
                }
                args.iter().try_for_each(|&a| self.value(a))
            }
            Expr::Global(_) => Err("it reads a top-level variable".into()),
            Expr::Call(..) => Err("it calls a function".into()),
            _ => Err("it computes something other than element-wise arithmetic".into()),
        }
    }

    /// `array[rest.., var + c]` with loop-invariant `rest`.
    fn access(&self, array: ExprH, ix: &[ExprH]) -> Result<Access, String> {
        let Expr::Local(a) = self.body.exprs[array] else {
            return Err("it indexes something other than an array variable".into());
        };
        match self.body.locals[a].ty {
            Type::Array(e, _) if e == self.elem => {}
            _ => {
                return Err(format!(
                    "it reaches `{}`, whose elements are not `{}`",
                    self.body.locals[a].name,
                    self.elem.name()
                ))
            }
        }
        let (&last, rest) = ix.split_last().ok_or("an access without an index")?;
        let c = crate::walk::offset_of(self.body, last, self.var.index()).ok_or(format!(
            "an access of `{}` whose last index is not the loop variable plus a constant",
            self.body.locals[a].name
        ))?;
        for &i in rest {
            if !self.invariant(i) {
                return Err(format!(
                    "an access of `{}` with another index that changes in the loop or may fail",
                    self.body.locals[a].name
                ));
            }
        }
        Ok(Access {
            array: a.index(),
            rest: rest.to_vec(),
            c,
        })
    }

    /// An integer computed from locals the loop does not change and
    /// constants, with operators that cannot fail.
    fn invariant(&self, e: ExprH) -> bool {
        match &self.body.exprs[e] {
            Expr::Const(_) => true,
            Expr::Local(l) => *l != self.var && !self.lets.contains(l),
            Expr::Unary(UnOp::Neg, a) => self.invariant(*a),
            Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) => {
                self.invariant(*a) && self.invariant(*b)
            }
            Expr::Cast(a, t) => {
                !float(*t)
                    && self.ty(*a).is_some_and(|s| !float(s) && s != Scalar::Bool)
                    && self.invariant(*a)
            }
            _ => false,
        }
    }

    /// Whether two accesses reach the same element in every turn.
    fn same(&self, a: &Access, b: &Access) -> bool {
        a.array == b.array
            && a.c == b.c
            && a.rest.len() == b.rest.len()
            && a.rest
                .iter()
                .zip(&b.rest)
                .all(|(&x, &y)| key(self.body, x) == key(self.body, y))
    }
}

/// The text of an invariant index (equal text, equal value in a turn).
fn key(body: &Body, e: ExprH) -> String {
    match &body.exprs[e] {
        Expr::Local(l) => format!("l{}", l.index()),
        Expr::Const(v) => format!("c{v:?}"),
        Expr::Unary(op, a) => format!("({op:?} {})", key(body, *a)),
        Expr::Cast(a, t) => format!("({t:?} {})", key(body, *a)),
        Expr::Binary(op, a, b) => format!("({op:?} {} {})", key(body, *a), key(body, *b)),
        _ => format!("e{}", e.index()),
    }
}

/// What `--explain` and the trace say of a unit's vector loops.
pub fn describe(loops: &[(String, u8)]) -> Option<String> {
    if loops.is_empty() {
        return None;
    }
    let each: Vec<String> = loops
        .iter()
        .map(|(v, n)| format!("innermost loop `{v}` in {n}-lane SIMD"))
        .collect();
    Some(each.join(", "))
}

/// Vector loads and stores: unaligned (rows start anywhere).
fn vflags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl Gen<'_, '_> {
    /// Whether this machine's code has 128-bit vectors with every lane
    /// operation the loops use (x86-64: SSE4.1's `pmulld`, `pminsd` and
    /// `roundps`; AArch64: NEON, always there), and `ACCL_JIT_SIMD=0` does
    /// not turn them off (to compare with the scalar loops).
    fn simd_ok(&self) -> bool {
        use cranelift_module::Module;
        if std::env::var("ACCL_JIT_SIMD").is_ok_and(|v| v == "0") {
            return false;
        }
        let isa = self.module.isa();
        match isa.name() {
            "x64" => isa
                .isa_flags()
                .iter()
                .any(|f| f.name == "has_sse41" && f.as_bool() == Some(true)),
            "aarch64" => true,
            _ => false,
        }
    }

    /// The quick turns of `for` loop `fl` from `lo` to `end` (`lo <= end`,
    /// no limit check due, the loop variable's indices proven inside their
    /// axes), each turn's count `base + i`: groups of turns in SIMD while
    /// more than a group is left and the run-time checks hold, then the
    /// rest one at a time (at least the last turn, so the loop variable
    /// and the body's locals end as the scalar loop leaves them).
    pub(crate) fn simd_turns(
        &mut self,
        fl: &ForLoop,
        lo: Value,
        end: Value,
        out: cranelift_codegen::ir::Block,
        base: Value,
    ) {
        let var = fl.header.var.index();
        let p = match self.simd_ok() {
            true => plan(self.body, fl, self.builtins).ok(),
            false => None,
        };
        let p = p.filter(|p| {
            p.accesses.iter().all(|a| {
                let axis = a.rest.len();
                self.in_bounds
                    .iter()
                    .any(|&(v, s, x, c)| v == var && s == a.array && x == axis && c == a.c)
            })
        });
        let Some(p) = p else {
            self.for_turns(fl, lo, end, out, Some(base));
            return;
        };
        let (vt, lanes) = vector(p.elem).expect("planned: a vector element");
        let w = lanes as i64;
        let size = cl(p.elem).bytes() as i64;
        let rest = self.b.create_block();
        let start = self.b.append_block_param(rest, types::I64);
        // More than one group of turns (the last turn is always scalar).
        let span = self.b.ins().isub(end, lo);
        let mut ok = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, span, w);
        // Each access's row: its other indices checked, then its start.
        let mut rows: Vec<Value> = Vec::new();
        for a in &p.accesses {
            let (ptr, dims) = {
                let v = &self.arrays[&a.array];
                (v.ptr, v.dims.clone())
            };
            let mut off: Option<Value> = None;
            for (axis, &i) in a.rest.iter().enumerate() {
                let k = self.index(i);
                let n = self.b.use_var(dims[axis]);
                let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, k, n);
                ok = self.b.ins().band(ok, inside);
                off = Some(match off {
                    None => k,
                    Some(o) => {
                        let m = self.b.ins().imul(o, n);
                        self.b.ins().iadd(m, k)
                    }
                });
            }
            let base_ptr = self.b.use_var(ptr);
            let row = match off {
                None => base_ptr,
                Some(o) => {
                    let n = self.b.use_var(dims[a.rest.len()]);
                    let m = self.b.ins().imul(o, n);
                    let bytes = self.b.ins().imul_imm_s(m, size);
                    self.b.ins().iadd(base_ptr, bytes)
                }
            };
            rows.push(row);
        }
        for &(x, y) in &p.pairs {
            let apart = self.apart(x, y, size);
            ok = self.b.ins().band(ok, apart);
        }
        let pre = self.b.create_block();
        self.b.ins().brif(ok, pre, &[], rest, &[lo.into()]);
        self.b.switch_to_block(pre);
        let lets: Vec<LocalH> = fl
            .body
            .iter()
            .filter_map(|s| match s.kind {
                StmtKind::Let { local, .. } => Some(local),
                _ => None,
            })
            .collect();
        let mut splats = HashMap::new();
        for s in &fl.body {
            self.splats(s, vt, &lets, &mut splats);
        }
        let head = self.b.create_block();
        let i = self.b.append_block_param(head, types::I64);
        self.b.ins().jump(head, &[lo.into()]);
        self.b.switch_to_block(head);
        let at = self.b.ins().imul_imm_s(i, size);
        let mut v = Lanes {
            vt,
            elem: p.elem,
            var,
            size,
            at,
            rows,
            accesses: &p.accesses,
            lets: HashMap::new(),
            splats,
        };
        for s in &fl.body {
            self.vector_stmt(s, &mut v);
        }
        let next = self.b.ins().iadd_imm_s(i, w);
        let after = self.b.ins().iadd_imm_s(next, w);
        let more = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, after, end);
        self.b
            .ins()
            .brif(more, head, &[next.into()], rest, &[next.into()]);
        self.b.switch_to_block(rest);
        self.for_turns(fl, start, end, out, Some(base));
        let name = self.body.locals[fl.header.var].name.clone();
        if !self.simd.iter().any(|(n, _)| *n == name) {
            self.simd.push((name, lanes));
        }
    }

    /// Whether the storage of arrays `x` and `y` (elements of `size`
    /// bytes) is disjoint.
    fn apart(&mut self, x: usize, y: usize, size: i64) -> Value {
        let mut ends = Vec::new();
        for a in [x, y] {
            let (ptr, dims) = {
                let v = &self.arrays[&a];
                (v.ptr, v.dims.clone())
            };
            let p = self.b.use_var(ptr);
            let mut n = self.b.ins().iconst(types::I64, size);
            for d in dims {
                let d = self.b.use_var(d);
                n = self.b.ins().imul(n, d);
            }
            let e = self.b.ins().iadd(p, n);
            ends.push((p, e));
        }
        let ((px, ex), (py, ey)) = (ends[0], ends[1]);
        let before = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, ex, py);
        let after = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, ey, px);
        self.b.ins().bor(before, after)
    }

    /// The splats of every constant and loop-invariant local (not one of
    /// the body's `lets`) that statement `s` uses as a value, made before
    /// the vector loop.
    fn splats(
        &mut self,
        s: &lang::hir::Stmt,
        vt: ClType,
        lets: &[LocalH],
        out: &mut HashMap<String, Value>,
    ) {
        let mut es = match &s.kind {
            StmtKind::Let { init: e, .. } | StmtKind::Assign { value: e, .. } => vec![*e],
            _ => Vec::new(),
        };
        while let Some(e) = es.pop() {
            match &self.body.exprs[e] {
                Expr::Local(l) if lets.contains(l) => {}
                Expr::Const(_) | Expr::Local(_) => {
                    if let std::collections::hash_map::Entry::Vacant(at) =
                        out.entry(key(self.body, e))
                    {
                        let x = self.expr(e);
                        at.insert(self.b.ins().splat(vt, x));
                    }
                }
                Expr::Unary(_, a) | Expr::Cast(a, _) => es.push(*a),
                Expr::Binary(_, a, b) => es.extend([*a, *b]),
                Expr::Builtin(_, args) => es.extend(args.iter().copied()),
                _ => {}
            }
        }
    }

    fn vector_stmt(&mut self, s: &lang::hir::Stmt, v: &mut Lanes) {
        match &s.kind {
            StmtKind::Let { local, init } => {
                let x = self.vector_expr(*init, v);
                v.lets.insert(local.index(), x);
            }
            StmtKind::Assign {
                place: Place::Element { array, indices },
                op,
                value,
            } => {
                let x = self.vector_expr(*value, v);
                let (addr, off) = v.addr(self, *array, indices);
                let x = match op {
                    None => x,
                    Some(op) => {
                        let old = self.b.ins().load(v.vt, vflags(), addr, off);
                        self.vector_op(*op, v.elem, old, x)
                    }
                };
                self.b.ins().store(vflags(), x, addr, off);
            }
            _ => unreachable!("planned: lets and element stores"),
        }
    }

    fn vector_expr(&mut self, e: ExprH, v: &mut Lanes) -> Value {
        match &self.body.exprs[e] {
            Expr::Local(l) if v.lets.contains_key(&l.index()) => v.lets[&l.index()],
            Expr::Const(_) | Expr::Local(_) => v.splats[&key(self.body, e)],
            Expr::Unary(_, a) => {
                let x = self.vector_expr(*a, v);
                if float(v.elem) {
                    self.b.ins().fneg(x)
                } else {
                    self.b.ins().ineg(x)
                }
            }
            Expr::Binary(op, a, b) => {
                let (op, a, b) = (*op, *a, *b);
                let x = self.vector_expr(a, v);
                let y = self.vector_expr(b, v);
                self.vector_op(op, v.elem, x, y)
            }
            Expr::Cast(a, _) => self.vector_expr(*a, v),
            Expr::Index(arr, ix) => {
                let (arr, ix) = (*arr, ix.clone());
                let (addr, off) = v.addr(self, arr, &ix);
                self.b.ins().load(v.vt, vflags(), addr, off)
            }
            Expr::Builtin(id, args) => {
                let name = self.builtins.get(*id).name.clone();
                let args = args.clone();
                let x: Vec<Value> = args.iter().map(|&a| self.vector_expr(a, v)).collect();
                let ins = self.b.ins();
                match (name.as_str(), float(v.elem)) {
                    ("sqrt", _) => ins.sqrt(x[0]),
                    ("floor", _) => ins.floor(x[0]),
                    ("ceil", _) => ins.ceil(x[0]),
                    ("trunc", _) => ins.trunc(x[0]),
                    ("abs", true) => ins.fabs(x[0]),
                    ("abs", false) => ins.iabs(x[0]),
                    ("min", _) => ins.smin(x[0], x[1]),
                    _ => ins.smax(x[0], x[1]),
                }
            }
            _ => unreachable!("planned: element-wise arithmetic"),
        }
    }

    fn vector_op(&mut self, op: BinOp, elem: Scalar, x: Value, y: Value) -> Value {
        let ins = self.b.ins();
        match (op, float(elem)) {
            (BinOp::Add, true) => ins.fadd(x, y),
            (BinOp::Sub, true) => ins.fsub(x, y),
            (BinOp::Mul, true) => ins.fmul(x, y),
            (BinOp::Div, true) => ins.fdiv(x, y),
            (BinOp::Add, false) => ins.iadd(x, y),
            (BinOp::Sub, false) => ins.isub(x, y),
            _ => ins.imul(x, y),
        }
    }
}

/// One group of turns being generated.
struct Lanes<'p> {
    vt: ClType,
    elem: Scalar,
    /// The loop variable (local), the element size, and the first turn's
    /// counter times that size.
    var: usize,
    size: i64,
    at: Value,
    /// Each access's row start (in `accesses`' order).
    rows: Vec<Value>,
    accesses: &'p [Access],
    /// The body's `let` locals, one value per lane.
    lets: HashMap<usize, Value>,
    /// Constants and invariant locals, by their text, in every lane.
    splats: HashMap<String, Value>,
}

impl Lanes<'_> {
    /// The address of the group's row of an access and the constant byte
    /// offset of its first lane's element from there.
    fn addr(&self, g: &mut Gen, array: ExprH, ix: &[ExprH]) -> (Value, i32) {
        let Expr::Local(a) = g.body.exprs[array] else {
            unreachable!("planned: a local array")
        };
        let (&last, rest) = ix.split_last().expect("planned: an index");
        let c = crate::walk::offset_of(g.body, last, self.var).expect("planned: var + c");
        let k = self
            .accesses
            .iter()
            .position(|acc| {
                acc.array == a.index()
                    && acc.c == c
                    && acc.rest.len() == rest.len()
                    && acc
                        .rest
                        .iter()
                        .zip(rest)
                        .all(|(&x, &y)| key(g.body, x) == key(g.body, y))
            })
            .expect("planned: a known access");
        let p = g.b.ins().iadd(self.rows[k], self.at);
        // |c| <= 2^20 and elements of at most 8 bytes: it fits.
        (p, (c * self.size) as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of the first `for` loop of function `f` in `src` (checked
    /// with no builtins).
    fn plan_of(src: &str) -> Result<Plan, String> {
        crate::with_loop_of_f(src, |_, f, fl| plan(&f.body, fl, &Builtins::new()))
    }

    fn why(src: &str) -> String {
        match plan_of(src) {
            Ok(p) => panic!("{src}: vectorised as {p:?}"),
            Err(w) => w,
        }
    }

    #[test]
    fn element_wise_loops_run_in_lanes_of_their_element_type() {
        let p = plan_of(
            "fn f(a: f32[,], b: f32[,], i: i64, n: i64) {
    for j in 1..n - 1 {
        let t = b[i, j - 1] + b[i, j + 1];
        a[i, j] = 0.25 * (t + b[i - 1, j] + b[i + 1, j]);
    }
}",
        )
        .expect("vectorised");
        assert_eq!((p.elem, p.lanes), (Scalar::F32, 4));
        // a[i, j]; b[i, j - 1], b[i, j + 1], b[i - 1, j], b[i + 1, j].
        assert_eq!(p.accesses.len(), 5);
        assert_eq!(p.pairs.len(), 1, "{p:?}");
        let p = plan_of("fn f(a: f64[], n: i32) { for j in 0..n { a[j] = -a[j] / 3.0; } }")
            .expect("vectorised");
        assert_eq!((p.elem, p.lanes, p.accesses.len()), (Scalar::F64, 2, 1));
        assert!(p.pairs.is_empty());
        let p = plan_of(
            "fn f(a: i32[], b: i32[], k: i32, n: i64) { for j in 0..n { a[j] *= b[j + 2] - k; } }",
        )
        .expect("vectorised");
        assert_eq!((p.elem, p.lanes, p.accesses.len()), (Scalar::I32, 4, 2));
    }

    #[test]
    fn a_dependence_between_turns_stays_scalar() {
        for body in [
            "a[j] = a[j - 1] + 1.0;",
            "a[j + 1] = b[j]; a[j] = b[j];",
            "a[j] = b[j] + a[j + 1];",
        ] {
            let w = why(&format!(
                "fn f(a: f32[], b: f32[], n: i64) {{ for j in 1..n {{ {body} }} }}"
            ));
            assert!(w.contains("dependence between turns"), "{body}: {w}");
        }
        // The same element read and written: no dependence.
        plan_of("fn f(a: f32[], n: i64) { for j in 0..n { a[j] = a[j] * a[j] + 1.0; } }")
            .expect("vectorised");
    }

    #[test]
    fn anything_but_straight_line_element_wise_code_stays_scalar() {
        let cases = [
            (
                "let s = 0.0f32; for j in 0..n { s += a[j]; }",
                "assigns a scalar",
            ),
            (
                "for j in 0..n { if a[j] > 0.0 { a[j] = 0.0; } }",
                "not only `let`s",
            ),
            ("for j in 0..n { a[j] = g(a[j]); }", "calls a function"),
            ("for j in 0..n { a[j] = a[j] % 2.0; }", "`%`"),
            ("for j in 0..n { a[j] = j as f32; }", "not `f32`"),
            ("for j in 0..n { a[j] = c[j] as f32; }", "not `f32`"),
            ("for j in 0..n { a[j] = a[2 * j]; }", "plus a constant"),
            ("for j in 0..n { m[j, j] = 1.0; }", "changes in the loop"),
            (
                "for j in 0..n { m[k / 2, j] = 1.0; }",
                "changes in the loop",
            ),
            ("for j in 0..n { u[j] = u[j] + 1; }", "`u8`"),
            ("for j in 0..n { q[j] = q[j] / 2; }", "`/` on `i32`"),
            ("for j in 0..n { let t = 1.0; }", "stores no array element"),
        ];
        for (body, want) in cases {
            let src = format!(
                "fn g(x: f32) -> f32 {{ return x; }}
fn f(a: f32[], c: f64[], m: f32[,], u: u8[], q: i32[], k: i64, n: i64) {{ {body} }}"
            );
            match plan_of(&src) {
                Ok(p) => panic!("{body}: vectorised as {p:?}"),
                Err(w) => assert!(w.contains(want), "{body}: {w}"),
            }
        }
    }

    #[test]
    fn the_description_names_each_loop_and_its_lanes() {
        assert_eq!(describe(&[]), None);
        assert_eq!(
            describe(&[("j".into(), 4)]).as_deref(),
            Some("innermost loop `j` in 4-lane SIMD")
        );
    }
}
