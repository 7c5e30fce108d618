//! Functions returning tuples: the result is a struct of the elements'
//! register types (no decorations: it lives in registers only), built by
//! `OpCompositeConstruct` at each `return` and taken apart with
//! `OpCompositeExtract` into the caller's locals.

use super::types::Ty;
use super::{spv, Writer};
use crate::kir::{ExprH, FuncH, Function, LocalH};
use lang::{Diag, Scalar, Value};
use rspirv::spirv::Word;

impl Writer<'_> {
    /// The return type of `f`: the tuple's struct, or its one value's type.
    pub(super) fn return_type(&mut self, f: &Function) -> Word {
        if f.ret_tuple.is_empty() {
            return self.m.ty(f.ret.map_or(Ty::Void, Ty::reg));
        }
        let elems: Vec<Ty> = f.ret_tuple.iter().map(|&s| Ty::reg(s)).collect();
        self.m.tuple_struct(&elems)
    }

    /// `return (vs..);`
    pub(super) fn return_tuple(&mut self, f: &Function, vs: &[ExprH]) -> Result<(), Diag> {
        let mut ids = Vec::new();
        for &v in vs {
            ids.push(self.expr(f, v)?);
        }
        let st = self.return_type(f);
        let v = spv(self.m.b.composite_construct(st, None, ids));
        spv(self.m.b.ret_value(v));
        self.terminated = true;
        Ok(())
    }

    /// The end of a function returning a tuple, reached only if the
    /// checker let a path fall through (it does not): zeros, not undef.
    pub(super) fn return_zero_tuple(&mut self, f: &Function) {
        let ids: Vec<Word> = f
            .ret_tuple
            .iter()
            .map(|&s| self.constant(Value::zero(s)))
            .collect();
        let st = self.return_type(f);
        let v = spv(self.m.b.composite_construct(st, None, ids));
        spv(self.m.b.ret_value(v));
    }

    /// `(results..) = func(args..)`.
    pub(super) fn call_tuple(
        &mut self,
        f: &Function,
        func: FuncH,
        args: &[ExprH],
        results: &[LocalH],
    ) -> Result<(), Diag> {
        let mut vs = Vec::new();
        for &a in args {
            vs.push(self.expr(f, a)?);
        }
        let g = &self.k.functions[func];
        let elems: Vec<Scalar> = g.ret_tuple.clone();
        let st = self.return_type(g);
        let r = spv(self
            .m
            .b
            .function_call(st, None, self.func_ids[func.index()], vs));
        for (i, (&l, &s)) in results.iter().zip(&elems).enumerate() {
            let t = self.m.ty(Ty::reg(s));
            let v = spv(self.m.b.composite_extract(t, None, r, [i as u32]));
            spv(self.m.b.store(self.locals[l.index()], v, None, []));
        }
        Ok(())
    }
}
