//! The MPI builtins' signatures and their reduction operators. The
//! communication itself is the `accl` crate's (rsmpi on Open MPI, behind
//! its `mpi` feature); without a launcher the builtins act as rank 0 of 1.
//!
//! Arrays passed to `mpi_bcast` and `mpi_sendrecv` may be sections
//! (`a[lo:count, ..]`): these builtins are [`lang::Builtin::sections`], so
//! each array argument reaches the typing rule as the array followed by
//! `lo, count` per axis ([`lang::builtins::section_arg`]).

use lang::builtins::section_arg;
use lang::{Builtin, Builtins, Effect, Scalar, Sig, Type, Typing, Value};

/// The operator of `mpi_allreduce(x, op)`, written as a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
}

impl ReduceOp {
    /// The strings `mpi_allreduce` accepts, in the order the docs list them.
    pub const NAMES: [&'static str; 4] = ["+", "*", "max", "min"];

    pub fn parse(s: &str) -> Option<ReduceOp> {
        Some(match s {
            "+" => ReduceOp::Sum,
            "*" => ReduceOp::Prod,
            "max" => ReduceOp::Max,
            "min" => ReduceOp::Min,
            _ => return None,
        })
    }

    /// Does this operator apply to elements of type `s`? (`bool` reduces
    /// with `max`, a logical or, and `min`, a logical and.)
    pub fn applies_to(self, s: Scalar) -> bool {
        s != Scalar::Bool || matches!(self, ReduceOp::Max | ReduceOp::Min)
    }
}

/// `-1`: "no partner" for `mpi_sendrecv` (MPI's `MPI_PROC_NULL`).
pub const PROC_NULL: i32 = -1;

/// A rank argument (a destination, a source or a root): any integer.
fn rank_param(t: Type, what: &str) -> Result<Type, String> {
    if t.is_int_like() {
        Ok(t.defaulted())
    } else {
        Err(format!("takes an integer {what} rank, not `{t}`"))
    }
}

fn allreduce_rule(args: &[Type]) -> Result<Sig, String> {
    let mut i = 0;
    if section_arg(args, &mut i).is_some() {
        return match &args[i..] {
            [Type::Str] => {
                let mut params = args[..i].to_vec();
                params.push(Type::Str);
                Ok(Sig {
                    params,
                    ret: Type::Unit,
                })
            }
            [t] => Err(format!(
                "takes the operator as a string (\"+\", \"*\", \"max\" or \"min\"), not `{t}`"
            )),
            _ => Err("is `mpi_allreduce(a, op)` of an array or a section, in place".into()),
        };
    }
    match args {
        [t @ (Type::Scalar(_) | Type::IntLit | Type::FloatLit), Type::Str] => Ok(Sig {
            params: vec![t.defaulted(), Type::Str],
            ret: t.defaulted(),
        }),
        [_, t] if *t != Type::Str => Err(format!(
            "takes the operator as a string (\"+\", \"*\", \"max\" or \"min\"), not `{t}`"
        )),
        [t, _] => Err(format!("reduces a number or a `bool`, not `{t}`")),
        _ => Err("is `mpi_allreduce(x, op)` with op \"+\", \"*\", \"max\" or \"min\"".into()),
    }
}

fn bcast_rule(args: &[Type]) -> Result<Sig, String> {
    let usage = "is `mpi_bcast(x, root)` of a scalar, an array or a section";
    let mut i = 0;
    if section_arg(args, &mut i).is_some() {
        let [root] = &args[i..] else {
            return Err(usage.into());
        };
        let mut params = args[..i].to_vec();
        params.push(rank_param(*root, "root")?);
        return Ok(Sig {
            params,
            ret: Type::Unit,
        });
    }
    match args {
        [t @ (Type::Scalar(_) | Type::IntLit | Type::FloatLit), root] => Ok(Sig {
            params: vec![t.defaulted(), rank_param(*root, "root")?],
            ret: t.defaulted(),
        }),
        _ => Err(usage.into()),
    }
}

fn sendrecv_rule(args: &[Type]) -> Result<Sig, String> {
    let usage =
        "is `mpi_sendrecv(send, dest, recv, source)` with `send` and `recv` arrays or sections";
    let mut i = 0;
    let Some((s, _)) = section_arg(args, &mut i) else {
        return Err(match args.first() {
            Some(t) if !t.is_array() => format!("sends an array or a section, not `{t}`"),
            _ => usage.into(),
        });
    };
    let Some(&dest) = args.get(i) else {
        return Err(usage.into());
    };
    let dest_at = i;
    i += 1;
    let recv_at = i;
    let Some((r, _)) = section_arg(args, &mut i) else {
        return Err(match args.get(recv_at) {
            Some(t) if !t.is_array() => format!("receives into an array or a section, not `{t}`"),
            _ => usage.into(),
        });
    };
    let [source] = &args[i..] else {
        return Err(usage.into());
    };
    if s != r {
        return Err(format!(
            "sends `{s}` elements but receives into `{r}` elements: both sections need one element type"
        ));
    }
    let mut params = args.to_vec();
    params[dest_at] = rank_param(dest, "destination")?;
    params[i] = rank_param(*source, "source")?;
    Ok(Sig {
        params,
        ret: Type::Unit,
    })
}

/// `mpi_isend(a[lo:n], dest[, tag])` and `mpi_irecv(a[lo:n], source[, tag])`:
/// a request number.
fn nonblocking_rule(args: &[Type], who: &str) -> Result<Sig, String> {
    let usage = format!("is `mpi_i{who}(a[lo:n], {who}_rank)` or `mpi_i{who}(a[lo:n], {who}_rank, tag)` with an array or a section");
    let mut i = 0;
    if section_arg(args, &mut i).is_none() {
        return Err(match args.first() {
            Some(t) if !t.is_array() => format!("takes an array or a section, not `{t}`"),
            _ => usage,
        });
    }
    let mut params = args[..i].to_vec();
    match &args[i..] {
        [rank] => params.push(rank_param(*rank, "partner")?),
        [rank, tag] => {
            params.push(rank_param(*rank, "partner")?);
            if !tag.is_int_like() {
                return Err(format!("takes an integer tag, not `{tag}`"));
            }
            params.push(tag.defaulted());
        }
        _ => return Err(usage),
    }
    Ok(Sig {
        params,
        ret: Type::I32,
    })
}

fn isend_rule(args: &[Type]) -> Result<Sig, String> {
    nonblocking_rule(args, "send").map_err(|e| e.replace("send_rank", "dest"))
}

fn irecv_rule(args: &[Type]) -> Result<Sig, String> {
    nonblocking_rule(args, "recv").map_err(|e| e.replace("recv_rank", "source"))
}

fn waitall_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [] => Ok(Sig {
            params: vec![],
            ret: Type::Unit,
        }),
        [t @ Type::Array(Scalar::I32, 1)] => Ok(Sig {
            params: vec![*t],
            ret: Type::Unit,
        }),
        _ => Err("is `mpi_waitall()` (every request) or `mpi_waitall(requests)` with an `i32[]` of request numbers".into()),
    }
}

fn add(b: &mut Builtins, name: &str, synopsis: &str, typing: Typing, sections: bool) {
    b.add(Builtin {
        name: name.to_string(),
        typing,
        effect: Effect::Host,
        synopsis: synopsis.to_string(),
        place_arg: false,
        sections,
    });
}

/// Add the MPI builtins and `mpi::PROC_NULL` to `b`.
pub fn add_builtins(b: &mut Builtins) {
    let fixed = |params: Vec<Type>, ret: Type| Typing::Fixed { params, ret };
    add(
        b,
        "mpi_rank",
        "mpi_rank() -> i32: this process's rank (0 without an MPI launcher)",
        fixed(vec![], Type::I32),
        false,
    );
    add(
        b,
        "mpi_size",
        "mpi_size() -> i32: the number of ranks (1 without an MPI launcher)",
        fixed(vec![], Type::I32),
        false,
    );
    add(
        b,
        "mpi_barrier",
        "mpi_barrier(): wait until every rank has reached it",
        fixed(vec![], Type::Unit),
        false,
    );
    add(
        b,
        "mpi_allreduce",
        "mpi_allreduce(x, op) -> x combined over every rank, op \"+\", \"*\", \"max\" or \"min\"; an array or section a: mpi_allreduce(a[lo:n], op) combines it element by element, in place",
        Typing::Rule(allreduce_rule),
        true,
    );
    add(
        b,
        "mpi_isend",
        "mpi_isend(a[lo:n], dest[, tag]) -> i32: start sending an array or section to rank dest (tag 0 to 9999, default 0); the elements are copied now; the request number goes to mpi_wait",
        Typing::Rule(isend_rule),
        true,
    );
    add(
        b,
        "mpi_irecv",
        "mpi_irecv(a[lo:n], source[, tag]) -> i32: start receiving an array or section from rank source; the elements land at its mpi_wait",
        Typing::Rule(irecv_rule),
        true,
    );
    add(
        b,
        "mpi_wait",
        "mpi_wait(r): wait for request r of mpi_isend or mpi_irecv (a receive's elements land now)",
        fixed(vec![Type::I32], Type::Unit),
        false,
    );
    add(
        b,
        "mpi_waitall",
        "mpi_waitall() waits for every request not waited for yet; mpi_waitall(rs) for the requests in the i32 array rs",
        Typing::Rule(waitall_rule),
        false,
    );
    add(
        b,
        "mpi_bcast",
        "mpi_bcast(x, root) -> the root's x (a scalar); an array or section a: mpi_bcast(a[lo:n], root) overwrites it with the root's",
        Typing::Rule(bcast_rule),
        true,
    );
    add(
        b,
        "mpi_sendrecv",
        "mpi_sendrecv(send, dest, recv, source): send an array or section to rank dest while receiving one from rank source (-1 or mpi::PROC_NULL: no partner)",
        Typing::Rule(sendrecv_rule),
        true,
    );
    b.add_const("mpi", "PROC_NULL", Value::I32(PROC_NULL));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_see_sections_as_array_and_bounds() {
        let a2 = Type::Array(Scalar::F64, 2);
        let sec = [a2, Type::I64, Type::I64, Type::I64, Type::I64];
        let mut args = sec.to_vec();
        args.push(Type::IntLit);
        args.extend(sec);
        args.push(Type::I64);
        let sig = sendrecv_rule(&args).unwrap();
        assert_eq!(sig.params[5], Type::I32);
        assert_eq!(sig.params[11], Type::I64);
        let mut bad = args.clone();
        bad[6] = Type::Array(Scalar::F32, 2);
        assert!(sendrecv_rule(&bad)
            .unwrap_err()
            .contains("one element type"));
        let sig = bcast_rule(&[Type::FloatLit, Type::IntLit]).unwrap();
        assert_eq!(sig.ret, Type::F64);
        assert_eq!(
            bcast_rule(&[Type::Array(Scalar::I32, 1), Type::I64, Type::I64, Type::I32])
                .unwrap()
                .ret,
            Type::Unit
        );
        assert!(allreduce_rule(&[Type::I64, Type::Str]).is_ok());
        assert!(allreduce_rule(&[Type::Array(Scalar::I32, 1), Type::Str]).is_err());
        assert_eq!(ReduceOp::parse("max"), Some(ReduceOp::Max));
        assert!(!ReduceOp::Sum.applies_to(Scalar::Bool));
    }
}
