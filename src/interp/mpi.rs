//! The `mpi_*` builtins at run time: argument checks and diagnostics,
//! sections packed into byte buffers and unpacked from them, over the
//! process's MPI world ([`crate::mpi`]; rank 0 of 1 without a launcher).
//!
//! Section arguments are evaluated and packed by [`super::section_arg`].

use super::error;
use super::machine::Ctx;
use super::scalar::{bits_to_value, value_to_bits};
use super::section_arg::{buffer, section, text, Section};
use super::value::{RtVal, R};
use crate::mpi::{ExchangeError, Shape};
use lang::{Diag, Span, Value};
use stdlib::mpi::ReduceOp;

/// A zeroed buffer of `bytes`, as [`buffer`].
fn zeroed(bytes: usize, span: Span) -> R<Vec<u8>> {
    let mut v = buffer(bytes, span)?;
    v.resize(bytes, 0);
    Ok(v)
}

fn int(v: &RtVal) -> i128 {
    match v {
        RtVal::Scalar(v) => v.as_i128().unwrap_or(0),
        _ => 0,
    }
}

/// The element type and count of a section, as MPI's header says them.
fn shape(s: &Section) -> Shape {
    Shape {
        elem: s.array.scalar(),
        count: s.region.len(s.array.shape()),
    }
}

fn mpi_failed(span: Span, m: &str) -> Box<Diag> {
    Box::new(
        Diag::error("accl::run::mpi", format!("MPI: {m}"), span, "in this call")
            .with_help("the job's other ranks may have failed first: look for their errors"),
    )
}

/// A partner or root rank outside the job (`-1` is no partner where
/// `no_partner` allows it).
fn check_rank(r: i128, size: i32, span: Span, what: &str, no_partner: bool) -> R<i32> {
    if (0..size as i128).contains(&r) || (no_partner && r == -1) {
        return Ok(r as i32);
    }
    let launched = crate::mpi::launched();
    let ranks = if size == 1 {
        "the only rank is 0".to_string()
    } else {
        format!("the ranks are 0 to {}", size - 1)
    };
    let mut help = String::new();
    if no_partner {
        help.push_str(
            "-1 (`mpi::PROC_NULL`) means no partner, so an edge rank needs no special case",
        );
    }
    if !launched {
        if !help.is_empty() {
            help.push_str("; ");
        }
        help.push_str(
            "without an MPI launcher the script is one rank: run it with `mpirun -np N accl run FILE`",
        );
    }
    if help.is_empty() {
        help = format!("the {what} is one of the job's ranks, 0 to mpi_size() - 1");
    }
    Err(Box::new(
        Diag::error(
            "accl::run::mpi_rank",
            format!("{what} rank {r} is not a rank of this job ({ranks})"),
            span,
            format!("rank {r}"),
        )
        .with_help(help),
    ))
}

/// The host reads (or writes) a whole array: checked against pending async
/// work as any builtin's array argument is.
fn access(cx: &mut Ctx, s: &Section, write: bool) -> R<()> {
    cx.host_access(&s.array, None, write, s.span)
}

fn describe(s: Shape) -> String {
    format!(
        "{} `{}` element{}",
        s.count,
        s.elem,
        if s.count == 1 { "" } else { "s" }
    )
}

/// Every `mpi_*` builtin.
pub fn call(name: &str, args: &[RtVal], spans: &[Span], span: Span, cx: &mut Ctx) -> R<RtVal> {
    let sp = |i: usize| spans.get(i).copied().unwrap_or(span);
    let world = || crate::mpi::world().map_err(|m| mpi_failed(span, &m));
    Ok(match name {
        "mpi_rank" => RtVal::Scalar(Value::I32(world()?.0)),
        "mpi_size" => RtVal::Scalar(Value::I32(world()?.1)),
        "mpi_barrier" => {
            crate::mpi::barrier().map_err(|m| mpi_failed(span, &m))?;
            RtVal::Unit
        }
        "mpi_allreduce" => {
            let RtVal::Scalar(x) = args[0] else {
                return Err(error::internal(span, "expected a scalar"));
            };
            let op_text = match &args[1] {
                RtVal::Str(s) => s.to_string(),
                _ => String::new(),
            };
            let op = ReduceOp::parse(&op_text)
                .filter(|op| x.ty().scalar().is_none_or(|s| op.applies_to(s)));
            let Some(op) = op else {
                let bool_arg = matches!(x, Value::Bool(_));
                let known = ReduceOp::parse(&op_text).is_some();
                return Err(Box::new(
                    Diag::error(
                        "accl::run::mpi_op",
                        if known && bool_arg {
                            format!("`mpi_allreduce` of a `bool` with \"{op_text}\"")
                        } else {
                            format!("`mpi_allreduce` has no operator \"{op_text}\"")
                        },
                        sp(1),
                        if known { "not for a `bool`" } else { "unknown operator" },
                    )
                    .with_help(if bool_arg {
                        "a `bool` reduces with \"max\" (any rank's true) or \"min\" (every rank's true)"
                    } else {
                        "the operators are \"+\", \"*\", \"max\" and \"min\""
                    }),
                ));
            };
            let v = crate::mpi::allreduce(x, op).map_err(|m| mpi_failed(span, &m))?;
            RtVal::Scalar(v)
        }
        "mpi_bcast" => {
            let size = world()?.1;
            if let RtVal::Scalar(x) = args[0] {
                let root = check_rank(int(&args[1]), size, sp(1), "root", false)?;
                let s = x.ty().scalar().unwrap_or(lang::Scalar::F64);
                let mut buf = value_to_bits(x, s).to_ne_bytes();
                crate::mpi::bcast(&mut buf, root).map_err(|m| mpi_failed(span, &m))?;
                return Ok(RtVal::Scalar(bits_to_value(s, u64::from_ne_bytes(buf))));
            }
            let mut i = 0;
            let sec = section(args, spans, &mut i, cx)?;
            let root = check_rank(int(&args[i]), size, sp(i), "root", false)?;
            let me = world()?.0;
            access(cx, &sec, me != root)?;
            // The root's shape first, so a section that differs from the
            // root's is a diagnostic on this rank, not a truncated message.
            let shape = shape(&sec);
            let mut header = shape.header();
            crate::mpi::bcast(&mut header, root).map_err(|m| mpi_failed(span, &m))?;
            if header != shape.header() {
                let what = match Shape::from_header(&header) {
                    Some(s) => describe(s),
                    None => "something else".to_string(),
                };
                return Err(Box::new(
                    Diag::error(
                        "accl::run::mpi_mismatch",
                        format!(
                            "root rank {root} broadcasts {what}, but `{}` holds {}",
                            text(cx, sec.span),
                            describe(shape)
                        ),
                        sec.span,
                        format!("{} elements here", shape.count),
                    )
                    .with_help("every rank passes a section of the same shape and element type"),
                ));
            }
            let mut buf = if me == root {
                sec.pack()?
            } else {
                zeroed(shape.count * shape.elem.size(), sec.span)?
            };
            crate::mpi::bcast(&mut buf, root).map_err(|m| mpi_failed(span, &m))?;
            if me != root {
                sec.unpack(&buf);
            }
            RtVal::Unit
        }
        "mpi_sendrecv" => {
            let size = world()?.1;
            let mut i = 0;
            let send = section(args, spans, &mut i, cx)?;
            let dest_at = i;
            let dest = check_rank(int(&args[i]), size, sp(i), "destination", true)?;
            i += 1;
            let recv = section(args, spans, &mut i, cx)?;
            let source = check_rank(int(&args[i]), size, sp(i), "source", true)?;
            if !crate::mpi::launched() && (dest == 0) != (source == 0) {
                // One rank: the only exchange is with itself, both ways (a
                // receive from itself with no send to it would wait forever).
                let (at, what) = if dest == 0 {
                    (sp(i), "source")
                } else {
                    (sp(dest_at), "destination")
                };
                return Err(Box::new(
                    Diag::error(
                        "accl::run::mpi_rank",
                        format!("`mpi_sendrecv` with one rank exchanges with rank 0 both ways, but its {what} is -1"),
                        at,
                        "no partner",
                    )
                    .with_help("name rank 0 as both destination and source (a copy), or -1 as both (nothing moves)"),
                ));
            }
            let (ss, rs) = (shape(&send), shape(&recv));
            if dest >= 0 && source >= 0 && ss.count != rs.count {
                return Err(Box::new(
                    Diag::error(
                        "accl::run::mpi_count",
                        format!(
                            "`mpi_sendrecv` sends {} but receives {}",
                            describe(ss),
                            describe(rs)
                        ),
                        send.span,
                        format!("{} elements sent", ss.count),
                    )
                    .with_label(recv.span, format!("{} elements received", rs.count))
                    .with_help(
                        "an exchange sends and receives sections of one size (with one partner -1, the other section may be any size)",
                    ),
                ));
            }
            if dest >= 0 {
                access(cx, &send, false)?;
            }
            if source >= 0 {
                access(cx, &recv, true)?;
            }
            let out = if dest >= 0 { send.pack()? } else { Vec::new() };
            let mut inbox = zeroed(
                if source >= 0 {
                    rs.count * rs.elem.size()
                } else {
                    0
                },
                recv.span,
            )?;
            match crate::mpi::sendrecv(&out, ss, dest, &mut inbox, rs, source) {
                Ok(()) => {}
                Err(ExchangeError::Mpi(m)) => return Err(mpi_failed(span, &m)),
                Err(ExchangeError::Mismatch { source, sent }) => {
                    let what = match sent {
                        Some(s) => format!("sends {}", describe(s)),
                        None => "sends something else".to_string(),
                    };
                    return Err(Box::new(
                        Diag::error(
                            "accl::run::mpi_mismatch",
                            format!(
                                "rank {source} {what}, but `{}` receives {}",
                                text(cx, recv.span),
                                describe(rs)
                            ),
                            recv.span,
                            format!("{} elements", rs.count),
                        )
                        .with_help(
                            "the section a rank receives must match what its source sends: same element type and count",
                        ),
                    ));
                }
            }
            if source >= 0 {
                recv.unpack(&inbox);
            }
            RtVal::Unit
        }
        _ => {
            return Err(error::internal(
                span,
                &format!("no host implementation of `{name}`"),
            ))
        }
    })
}
