//! The prologue and epilogue every unit the interpreter enters shares (a
//! compiled loop, a construct's loop nest): its frame's scalars and its
//! arrays' descriptors in, the scalars back out with the unit's status.

use crate::lower::{self, ArrVars, Gen, PTR};
use crate::plan::scalar;
use crate::runtime::*;
use cranelift_codegen::ir::{types, InstBuilder};
use lang::hir::{self, Body};
use lang::Scalar;

/// The start of a compiled unit the interpreter enters with its frame
/// (`slots`: each scalar local's bits at 8 bytes a slot) and its arrays'
/// descriptors (`descs`): the `scalars` read into their variables, and each
/// of `arrays` (local, element, rank) given its pointer and extents.
pub(crate) fn load(
    g: &mut Gen,
    body: &Body,
    slots: cranelift_codegen::ir::Value,
    descs: cranelift_codegen::ir::Value,
    scalars: &[usize],
    arrays: &[(usize, Scalar, u8)],
) {
    for &l in scalars {
        let t = scalar(body.locals[hir::LocalH::new(l)].ty).unwrap_or(Scalar::I64);
        let bits =
            g.b.ins()
                .load(types::I64, lower::flags(), slots, (l * 8) as i32);
        let v = g.value_of(bits, t);
        let var = g.var(l);
        g.b.def_var(var, v);
    }
    for (k, &(l, elem, rank)) in arrays.iter().enumerate() {
        let base = k as i32 * DESC_SIZE;
        let ptr = g.b.declare_var(PTR);
        let pv = g.b.ins().load(PTR, lower::flags(), descs, base);
        g.b.def_var(ptr, pv);
        let mut dims = Vec::new();
        for d in 0..rank as i32 {
            let dv = g.b.declare_var(types::I64);
            let x =
                g.b.ins()
                    .load(types::I64, lower::flags(), descs, base + 8 + 8 * d);
            g.b.def_var(dv, x);
            dims.push(dv);
        }
        g.arrays.insert(l, ArrVars { ptr, dims, elem });
    }
}

/// The end of such a unit: from where its code ends (`NEXT`), its
/// `return` exit and its trap exit, the `scalars` written back to their
/// slots and the status returned.
pub(crate) fn close(
    g: &mut Gen,
    body: &Body,
    slots: cranelift_codegen::ir::Value,
    scalars: &[usize],
    [ret_exit, trap_exit]: [cranelift_codegen::ir::Block; 2],
) {
    let done = g.b.create_block();
    g.b.ins().jump(done, &[]);
    for (blk, status) in [(done, NEXT), (ret_exit, RETURN), (trap_exit, TRAP)] {
        g.b.switch_to_block(blk);
        g.sync_out();
        for &l in scalars {
            let t = scalar(body.locals[hir::LocalH::new(l)].ty).unwrap_or(Scalar::I64);
            let var = g.var(l);
            let v = g.b.use_var(var);
            let bits = g.slot_bits(v, t);
            g.b.ins().store(lower::flags(), bits, slots, (l * 8) as i32);
        }
        let st = g.b.ins().iconst(types::I32, status as i64);
        g.b.ins().return_(&[st]);
    }
}
