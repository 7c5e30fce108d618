//! The `mpi_*` builtins at run time: argument checks and diagnostics,
//! sections packed into byte buffers and unpacked from them, over the
//! process's MPI world ([`crate::mpi`]; rank 0 of 1 without a launcher).
//!
//! Section arguments are evaluated and packed by [`super::section_arg`].

use super::error;
use super::machine::{Ctx, Land, MpiRequest};
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

/// The host reads (or writes) a section: checked against pending async
/// work as any builtin's array argument is.
fn access(cx: &mut Ctx, s: &Section, write: bool) -> R<()> {
    let rows = s.region.axis(0, s.array.shape());
    cx.host_access_rows(&s.array, rows, write, s.span)
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
        "mpi_allreduce" if matches!(args[0], RtVal::Array(_)) => {
            let mut i = 0;
            let sec = section(args, spans, &mut i, cx)?;
            let shape = shape(&sec);
            let op = reduce_op(&args[i], shape.elem, sp(i))?;
            access(cx, &sec, true)?;
            // Every rank's shape first: a section that differs is a
            // diagnostic, not a reduction of unrelated bytes.
            // Every rank's shape first: a section that differs is a
            // diagnostic, not a reduction of unrelated bytes.
            let mine = shape.codes();
            let mut other = mine;
            for (k, &v) in mine.iter().enumerate() {
                for op in [ReduceOp::Min, ReduceOp::Max] {
                    let r = crate::mpi::allreduce(Value::I64(v), op)
                        .map_err(|m| mpi_failed(span, &m))?;
                    if let Value::I64(r) = r {
                        if r != v {
                            other[k] = r;
                        }
                    }
                }
            }
            if other != mine {
                let what = match Shape::from_codes(other) {
                    Some(s) => describe(s),
                    None => "something else".to_string(),
                };
                return Err(shape_mismatch(
                    cx,
                    &format!("another rank reduces {what}"),
                    &sec,
                    shape,
                ));
            }
            let mut buf = sec.pack()?;
            crate::mpi::allreduce_elems(&mut buf, shape.elem, op)
                .map_err(|m| mpi_failed(span, &m))?;
            sec.unpack(&buf);
            RtVal::Unit
        }
        "mpi_allreduce" => {
            let RtVal::Scalar(x) = args[0] else {
                return Err(error::internal(span, "expected a scalar"));
            };
            let op = reduce_op(
                &args[1],
                x.ty().scalar().unwrap_or(lang::Scalar::F64),
                sp(1),
            )?;
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
                return Err(shape_mismatch(
                    cx,
                    &format!("root rank {root} broadcasts {what}"),
                    &sec,
                    shape,
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
                    return Err(mismatch(source, sent, &text(cx, recv.span), recv.span, rs));
                }
            }
            if source >= 0 {
                recv.unpack(&inbox);
            }
            RtVal::Unit
        }
        "mpi_isend" | "mpi_irecv" => {
            let size = world()?.1;
            let send = name == "mpi_isend";
            let mut i = 0;
            let sec = section(args, spans, &mut i, cx)?;
            let what = if send { "destination" } else { "source" };
            let peer = check_rank(int(&args[i]), size, sp(i), what, true)?;
            let tag = match args.get(i + 1) {
                Some(t) => {
                    let t = int(t);
                    if !(0..=crate::mpi::MAX_TAG as i128).contains(&t) {
                        return Err(Box::new(
                            Diag::error(
                                "accl::run::mpi_tag",
                                format!("tag {t} is outside 0..={}", crate::mpi::MAX_TAG),
                                sp(i + 1),
                                "this tag",
                            )
                            .with_help("a send and the receive that takes it name the same tag"),
                        ));
                    }
                    t as i32
                }
                None => 0,
            };
            let shape = shape(&sec);
            let started = if send {
                access(cx, &sec, false)?;
                // The elements are copied now: later writes to the section
                // do not reach the message.
                let data = if peer >= 0 { sec.pack()? } else { Vec::new() };
                if peer == 0 && !crate::mpi::launched() {
                    // One rank: the message waits here for its receive.
                    cx.mpi_self.push_back((tag, shape, data));
                    crate::mpi::isend(Vec::new(), shape, -1, tag)
                } else {
                    crate::mpi::isend(data, shape, peer, tag)
                }
            } else {
                crate::mpi::irecv(shape, peer, tag)
            };
            let pending = started.map_err(|m| mpi_failed(span, &m))?;
            let land: Option<Land> = (!send).then(|| {
                Box::new(move |cx: &mut Ctx, bytes: &[u8]| {
                    access(cx, &sec, true)?;
                    sec.unpack(bytes);
                    Ok(())
                }) as Land
            });
            let id = cx.next_request;
            cx.next_request = cx.next_request.wrapping_add(1).max(0);
            cx.mpi_requests.insert(
                id,
                MpiRequest {
                    pending,
                    span,
                    land,
                },
            );
            RtVal::Scalar(Value::I32(id))
        }
        "mpi_wait" => {
            let id = int(&args[0]);
            let req = i32::try_from(id)
                .ok()
                .and_then(|id| cx.mpi_requests.remove(&id));
            let Some(req) = req else {
                return Err(no_request(id, sp(0), "this request"));
            };
            complete(cx, req)?;
            RtVal::Unit
        }
        "mpi_waitall" => {
            let ids: Vec<i32> = match args.first() {
                Some(RtVal::Array(a)) => {
                    let d = a.data();
                    (0..a.len())
                        .filter_map(|k| d.get(k)?.as_i128())
                        .map(|v| v as i32)
                        .collect()
                }
                _ => cx.mpi_requests.keys().copied().collect(),
            };
            for id in &ids {
                if !cx.mpi_requests.contains_key(id) {
                    return Err(no_request(*id as i128, sp(0), "these requests"));
                }
            }
            for id in ids {
                if let Some(req) = cx.mpi_requests.remove(&id) {
                    complete(cx, req)?;
                }
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

/// The operator of `mpi_allreduce` (its string argument, at `span`) for
/// elements of type `elem`.
fn reduce_op(arg: &RtVal, elem: lang::Scalar, span: Span) -> R<ReduceOp> {
    let op_text = match arg {
        RtVal::Str(s) => s.to_string(),
        _ => String::new(),
    };
    let op = ReduceOp::parse(&op_text).filter(|op| op.applies_to(elem));
    let Some(op) = op else {
        let bool_arg = elem == lang::Scalar::Bool;
        let known = ReduceOp::parse(&op_text).is_some();
        return Err(Box::new(
            Diag::error(
                "accl::run::mpi_op",
                if known && bool_arg {
                    format!("`mpi_allreduce` of a `bool` with \"{op_text}\"")
                } else {
                    format!("`mpi_allreduce` has no operator \"{op_text}\"")
                },
                span,
                if known {
                    "not for a `bool`"
                } else {
                    "unknown operator"
                },
            )
            .with_help(if bool_arg {
                "a `bool` reduces with \"max\" (any rank's true) or \"min\" (every rank's true)"
            } else {
                "the operators are \"+\", \"*\", \"max\" and \"min\""
            }),
        ));
    };
    Ok(op)
}

/// `accl::run::mpi_mismatch`: rank `source` sent `sent`, but the section at
/// `at` (its text `name`) receives `rs`.
fn mismatch(source: i32, sent: Option<Shape>, name: &str, at: Span, rs: Shape) -> Box<Diag> {
    let what = match sent {
        Some(s) => format!("sends {}", describe(s)),
        None => "sends something else".to_string(),
    };
    Box::new(
        Diag::error(
            "accl::run::mpi_mismatch",
            format!("rank {source} {what}, but `{name}` receives {}", describe(rs)),
            at,
            format!("{} elements", rs.count),
        )
        .with_help(
            "the section a rank receives must match what its source sends: same element type and count",
        ),
    )
}

/// Wait for a non-blocking message; a receive's elements land in its
/// section.
fn complete(cx: &mut Ctx, req: MpiRequest) -> R<()> {
    let span = req.span;
    let expect = req.pending.expected();
    let (peer, tag) = req.pending.peer_and_tag();
    if let (Some(expect), 0, false) = (expect, peer, crate::mpi::launched()) {
        // One rank: the first message it sent itself with this tag.
        let at = cx.mpi_self.iter().position(|m| m.0 == tag);
        let Some((_, shape, bytes)) = at.and_then(|at| cx.mpi_self.remove(at)) else {
            return Err(Box::new(
                Diag::error(
                    "accl::run::mpi_request",
                    format!("this receive from rank 0 with tag {tag} would wait forever: no such message was sent"),
                    span,
                    "started here",
                )
                .with_help("with one rank, a receive from rank 0 takes what `mpi_isend(.., 0, tag)` sent"),
            ));
        };
        if shape != expect {
            return Err(mismatch(0, Some(shape), &text(cx, span), span, expect));
        }
        drop(req.pending);
        return match req.land {
            Some(land) => land(cx, &bytes),
            None => Ok(()),
        };
    }
    match crate::mpi::wait(req.pending) {
        Ok(Some(bytes)) => match req.land {
            Some(land) => land(cx, &bytes),
            None => Ok(()),
        },
        Ok(None) => Ok(()),
        Err(ExchangeError::Mpi(m)) => Err(mpi_failed(span, &m)),
        Err(ExchangeError::Mismatch { source, sent }) => {
            let name = text(cx, span);
            Err(mismatch(
                source,
                sent,
                &name,
                span,
                expect.unwrap_or(Shape {
                    elem: lang::Scalar::U8,
                    count: 0,
                }),
            ))
        }
    }
}

/// At the end of an input: a request never waited for is an error at the
/// call that made it (the first of them); all are let go.
pub fn not_waited(cx: &mut Ctx) -> R<()> {
    cx.mpi_self.clear();
    let Some((_, first)) = cx.mpi_requests.pop_first() else {
        return Ok(());
    };
    let more = cx.mpi_requests.len();
    cx.mpi_requests.clear();
    cx.mpi_self.clear();
    Err(Box::new(
        Diag::error(
            "accl::run::mpi_not_waited",
            "this message was never waited for",
            first.span,
            "started here",
        )
        .with_help(if more == 0 {
            "pass its request number to `mpi_wait`, or call `mpi_waitall()` before the end"
                .to_string()
        } else {
            format!(
                "{more} more {} not waited for either; `mpi_waitall()` waits for every one",
                if more == 1 { "was" } else { "were" }
            )
        }),
    ))
}

/// `accl::run::mpi_request`: request `id`, named at `span`, is not waiting.
fn no_request(id: i128, span: Span, label: &str) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::mpi_request",
            format!("no request {id} is waiting: it was waited for already, or never made"),
            span,
            label.to_string(),
        )
        .with_help("wait once for each number `mpi_isend` or `mpi_irecv` returned"),
    )
}

/// `accl::run::mpi_mismatch` at section `sec` (of `shape`), which differs
/// from what another rank passes (`other`: "root rank 2 broadcasts ..").
fn shape_mismatch(cx: &Ctx, other: &str, sec: &Section, shape: Shape) -> Box<Diag> {
    Box::new(
        Diag::error(
            "accl::run::mpi_mismatch",
            format!(
                "{other}, but `{}` holds {}",
                text(cx, sec.span),
                describe(shape)
            ),
            sec.span,
            format!("{} elements here", shape.count),
        )
        .with_help("every rank passes a section of the same shape and element type"),
    )
}
