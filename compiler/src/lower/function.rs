//! Device functions: one KIR function per function and tuple of array
//! bindings it is called with, and whether it writes memory.

use super::{internal, scalar_of, Binding, Fx, Lowerer};
use crate::kir::*;
use lang::hir::FnH;
use lang::{Diag, Span, Type};

impl Lowerer<'_> {
    /// The KIR function for `f` called with these array bindings (lowered once).
    pub(super) fn function(
        &mut self,
        f: FnH,
        arrays: Vec<ArrayH>,
        span: Span,
    ) -> Result<FuncH, Diag> {
        let key = (f, arrays);
        if let Some(&h) = self.fn_cache.get(&key) {
            return Ok(h);
        }
        let program = self.program;
        let func = &program.functions[f];
        let name = if key.1.is_empty() {
            func.name.clone()
        } else {
            let names: Vec<&str> = key
                .1
                .iter()
                .map(|a| self.arrays[*a].name.as_str())
                .collect();
            format!("{}<{}>", func.name, names.join(","))
        };
        let mut fx = Fx::new(name, &func.body);
        fx.loop_depth = 1; // `break` cannot escape a function: the checker ensures it.
        let mut arrays = key.1.iter();
        for &p in &func.params {
            let l = &func.body.locals[p];
            if l.ty.is_array() {
                let Some(&a) = arrays.next() else {
                    return Err(internal(span, "array argument count"));
                };
                if let Type::Array(e, r) = l.ty {
                    let ap = &self.arrays[a];
                    if (ap.elem, ap.rank) != (e, r) {
                        return Err(internal(span, "array argument of another type"));
                    }
                }
                fx.map.insert(p, Binding::Array(a));
            } else {
                let ty = scalar_of(l.ty, func.span)?;
                let kl = fx.local(&l.name, ty, func.span);
                fx.out.args.push(kl);
                fx.map.insert(p, Binding::Local(kl));
            }
        }
        fx.out.ret_tuple = super::tuples::tuple_elems(func.ret);
        fx.out.ret = match func.ret {
            Type::Unit | Type::Tuple(_) => None,
            t => Some(scalar_of(t, func.span)?),
        };
        let body = self.block(&mut fx, &func.body.block)?;
        fx.out.body = body;
        let writes = writes_memory(&fx.out.body)
            || (0..fx.out.exprs.len())
                .any(|i| self.has_effects(&fx.out, lang::arena::Handle::new(i)));
        let h = self.functions.append(fx.out, func.span);
        self.fn_cache.insert(key, h);
        self.fn_effects.insert(h, writes);
        Ok(h)
    }
}

/// Does a block store to an array?
fn writes_memory(b: &Block) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::StoreElem { .. } => true,
        StmtKind::If { then, els, .. } => writes_memory(then) || writes_memory(els),
        StmtKind::Loop { body, continuing } => writes_memory(body) || writes_memory(continuing),
        StmtKind::VectorLoop(v) => writes_memory(&v.body),
        _ => false,
    })
}
