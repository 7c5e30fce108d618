//! Compiled functions: each planned function with its native signature,
//! and the entry the interpreter calls it through (slot bits in, slot
//! bits out).

use crate::lower::{self, cl, Exit};
use crate::plan::scalar;
use crate::runtime::*;
use crate::{exits, open, zero, Builder, Rets, EMPTY};
use cranelift_codegen::ir::{types, InstBuilder};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Module};
use lang::hir;

impl Builder<'_> {
    /// A whole function, with its native signature.
    pub(crate) fn function(&mut self, f: &hir::Function, id: FuncId) -> Result<(), String> {
        let fc = self.module.isa().frontend_config();
        let mut ctx = self.module.make_context();
        ctx.func.signature = self
            .module
            .declarations()
            .get_function_decl(id)
            .signature
            .clone();
        let ret = Rets::of(f.ret);
        {
            let mut fbc = FunctionBuilderContext::new();
            let mut fb = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let params = open(&mut fb);
            let rt = *params.last().expect("the runtime block");
            let out = ret.in_memory().then(|| params[params.len() - 2]);
            let (ops, next, trap_exit, ret_exit) = exits(&mut fb);
            for &r in &ret.types {
                fb.append_block_param(ret_exit, cl(r));
            }
            let mut g = self.gen(
                fb,
                &f.body,
                rt,
                ops,
                next,
                trap_exit,
                ret_exit,
                Exit::Function,
            );
            g.load_globals();
            g.sync_in();
            // Every local starts at zero, as a fresh frame's slots do.
            for (l, local) in f.body.locals.iter() {
                if let Some(t) = scalar(local.ty) {
                    let v = g.var(l.index());
                    let z = zero(&mut g, t);
                    g.b.def_var(v, z);
                }
            }
            for (i, &p) in f.params.iter().enumerate() {
                let v = g.var(p.index());
                g.b.def_var(v, params[i]);
            }
            g.block(&f.body.block);
            // Falling off the end returns the zeros a fresh frame holds.
            let zs: Vec<_> = ret.types.iter().map(|&r| zero(&mut g, r).into()).collect();
            g.b.ins().jump(ret_exit, &zs);
            g.b.switch_to_block(ret_exit);
            // The frontend adds parameters of its own to a block with
            // several predecessors; the result is the first.
            let rv: Vec<_> =
                g.b.block_params(ret_exit)
                    .iter()
                    .copied()
                    .take(ret.types.len())
                    .collect();
            g.sync_out();
            match out {
                Some(out) => {
                    for (k, (&v, &t)) in rv.iter().zip(&ret.types).enumerate() {
                        let bits = g.slot_bits(v, t);
                        g.b.ins().store(lower::flags(), bits, out, 8 * k as i32);
                    }
                    g.b.ins().return_(&[]);
                }
                None => {
                    g.b.ins().return_(&rv);
                }
            }
            g.b.switch_to_block(trap_exit);
            g.sync_out();
            let zs: Vec<_> = match out {
                Some(_) => Vec::new(),
                None => ret.types.iter().map(|&r| zero(&mut g, r)).collect(),
            };
            g.b.ins().return_(&zs);
            g.b.seal_all_blocks();
            g.b.finalize(fc);
        }
        self.define(id, &mut ctx)
    }

    /// `FnEntry` for compiled function `i`: slot bits in, slot bits out.
    pub(crate) fn fn_entry(&mut self, i: usize, id: FuncId) -> Result<FuncId, String> {
        let (params, ret) = self.fn_sigs[i].clone().unwrap_or_default();
        let fc = self.module.isa().frontend_config();
        let (eid, mut ctx) = self.declare_entry("entry", 2)?;
        {
            let mut fbc = FunctionBuilderContext::new();
            let mut fb = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let p = open(&mut fb);
            let (args, rt) = (p[0], p[1]);
            let (ops, next, trap_exit, ret_exit) = exits(&mut fb);
            let mut g = self.gen(
                fb,
                &EMPTY,
                rt,
                ops,
                next,
                trap_exit,
                ret_exit,
                Exit::Function,
            );
            let mut vals = Vec::new();
            for (k, &t) in params.iter().enumerate() {
                let bits =
                    g.b.ins()
                        .load(types::I64, lower::flags(), args, (k * 8) as i32);
                vals.push(g.value_of(bits, t));
            }
            if ret.in_memory() {
                // The callee writes the elements straight into `Rt::rets`.
                let rets = g.b.ins().iadd_imm_s(rt, OFF_RETS as i64);
                vals.push(rets);
            }
            vals.push(rt);
            let fref = g.func_ref(id);
            let call = g.b.ins().call(fref, &vals);
            let r = g.b.inst_results(call).to_vec();
            let k = g.load_rt(types::I32, OFF_TRAP_KIND);
            let ok = g.b.create_block();
            g.b.ins().brif(k, trap_exit, &[], ok, &[]);
            g.b.switch_to_block(ok);
            if !ret.in_memory() {
                g.store_rets(&r, &ret);
            }
            let s = g.b.ins().iconst(types::I32, NEXT as i64);
            g.b.ins().return_(&[s]);
            g.b.switch_to_block(trap_exit);
            let s = g.b.ins().iconst(types::I32, TRAP as i64);
            g.b.ins().return_(&[s]);
            g.b.switch_to_block(ret_exit);
            g.b.ins()
                .trap(cranelift_codegen::ir::TrapCode::unwrap_user(1));
            g.b.seal_all_blocks();
            g.b.finalize(fc);
        }
        self.define(eid, &mut ctx)?;
        Ok(eid)
    }
}
