//! Signatures of the atomic builtins (`atomic_add(a[k], v)` and the other
//! capture forms, `atomic_read`, `atomic_write`): an array element and a
//! value of its type.

use super::arity::count;
use lang::{Scalar, Sig, Type};

pub(super) fn atomic_rule(args: &[Type]) -> Result<Sig, String> {
    count(args, 2)?;
    match args[0] {
        Type::Scalar(s @ (Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64)) => {
            Ok(Sig {
                params: vec![args[0], Type::Scalar(s)],
                ret: Type::Scalar(s),
            })
        }
        t => Err(format!(
            "works on i32, u32, i64, f32 and f64 elements, not `{t}`"
        )),
    }
}

pub(super) fn atomic_int_rule(args: &[Type]) -> Result<Sig, String> {
    match args.first() {
        Some(Type::Scalar(Scalar::F32 | Scalar::F64)) => {
            Err("works on i32, u32 and i64 elements (a bitwise operator)".into())
        }
        _ => atomic_rule(args),
    }
}

pub(super) fn atomic_read_rule(args: &[Type]) -> Result<Sig, String> {
    count(args, 1)?;
    match args[0] {
        Type::Scalar(Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::F32 | Scalar::F64) => {
            Ok(Sig {
                params: vec![args[0]],
                ret: args[0],
            })
        }
        t => Err(format!(
            "works on i32, u32, i64, f32 and f64 elements, not `{t}`"
        )),
    }
}

pub(super) fn atomic_write_rule(args: &[Type]) -> Result<Sig, String> {
    let sig = atomic_rule(args)?;
    Ok(Sig {
        ret: Type::Unit,
        ..sig
    })
}
