//! The string builtins at run time (`find`, `replace`, `trim`,
//! `starts_with`, `ends_with`, `parse_i32`, `parse_f64`, `char_at`,
//! `split_count`, `split_part`, and `len` of a string). Indices count
//! characters (Unicode scalar values), as a user reading the text does, not
//! bytes; what they build counts against the memory limit.

use super::machine::Ctx;
use super::value::{RtVal, R};
use lang::{Diag, Span, Value};
use std::rc::Rc;

fn text(v: &RtVal) -> &str {
    match v {
        RtVal::Str(s) => s,
        _ => "",
    }
}

fn int(v: &RtVal) -> i128 {
    match v {
        RtVal::Scalar(v) => v.as_i128().unwrap_or(0),
        _ => 0,
    }
}

/// The string builtin `name`, or `None` when it is not one of them.
pub fn call(
    name: &str,
    args: &[RtVal],
    spans: &[Span],
    span: Span,
    cx: &mut Ctx,
) -> Option<R<RtVal>> {
    let sp = |i: usize| spans.get(i).copied().unwrap_or(span);
    let scalar = |v: Value| Some(Ok(RtVal::Scalar(v)));
    match name {
        "len" => {
            let RtVal::Str(s) = args.first()? else {
                return None;
            };
            scalar(Value::I32(s.chars().count().min(i32::MAX as usize) as i32))
        }
        "find" => {
            let (s, part) = (text(&args[0]), text(&args[1]));
            let at = s
                .find(part)
                .map_or(-1, |b| s[..b].chars().count().min(i32::MAX as usize) as i32);
            scalar(Value::I32(at))
        }
        "starts_with" => scalar(Value::Bool(text(&args[0]).starts_with(text(&args[1])))),
        "ends_with" => scalar(Value::Bool(text(&args[0]).ends_with(text(&args[1])))),
        "trim" => Some(Ok(RtVal::Str(Rc::new(text(&args[0]).trim().to_string())))),
        "replace" => Some(replace(
            text(&args[0]),
            text(&args[1]),
            text(&args[2]),
            span,
            cx,
        )),
        "parse_i32" => {
            Some(parse(text(&args[0]), sp(0), "i32").map(|v| RtVal::Scalar(Value::I32(v))))
        }
        "parse_f64" => {
            let t = text(&args[0]).trim();
            Some(match t.parse::<f64>() {
                Ok(v) => Ok(RtVal::Scalar(Value::F64(v))),
                Err(_) => Err(not_a_number(
                    t,
                    sp(0),
                    "f64",
                    "a number such as `2.5`, `-1e-3` or `inf`",
                )),
            })
        }
        "char_at" => {
            let s = text(&args[0]);
            let i = int(&args[1]);
            let c = usize::try_from(i).ok().and_then(|i| s.chars().nth(i));
            Some(match c {
                Some(c) => Ok(RtVal::Str(c.to_string().into())),
                None => Err(Box::new(
                    Diag::error(
                        "accl::run::index_out_of_bounds",
                        format!(
                            "character {i} of a string of {} characters",
                            s.chars().count()
                        ),
                        sp(1),
                        format!("index {i}"),
                    )
                    .with_help("characters are numbered from 0 to len(s) - 1"),
                )),
            })
        }
        "split_count" => {
            let (s, sep) = (text(&args[0]), text(&args[1]));
            if sep.is_empty() {
                return Some(Err(Box::new(lang::check::empty_separator(
                    "accl::run::empty_separator",
                    sp(1),
                ))));
            }
            scalar(Value::I32(
                (s.matches(sep).count() + 1).min(i32::MAX as usize) as i32,
            ))
        }
        "split_part" => {
            let (s, sep) = (text(&args[0]), text(&args[1]));
            if sep.is_empty() {
                return Some(Err(Box::new(lang::check::empty_separator(
                    "accl::run::empty_separator",
                    sp(1),
                ))));
            }
            let i = int(&args[2]);
            let part = usize::try_from(i).ok().and_then(|i| s.split(sep).nth(i));
            Some(match part {
                Some(p) => Ok(RtVal::Str(Rc::new(p.to_string()))),
                None => Err(Box::new(
                    Diag::error(
                        "accl::run::index_out_of_bounds",
                        format!(
                            "part {i} of a string split into {}",
                            s.matches(sep).count() + 1
                        ),
                        sp(2),
                        format!("index {i}"),
                    )
                    .with_help("parts are numbered from 0 to split_count(s, sep) - 1"),
                )),
            })
        }
        _ => None,
    }
}

fn replace(s: &str, from: &str, to: &str, span: Span, cx: &mut Ctx) -> R<RtVal> {
    if from.is_empty() {
        return Ok(RtVal::Str(Rc::new(s.to_string())));
    }
    // The result's size first: it counts against the memory limit.
    let n = s.matches(from).count();
    let bytes = (s.len() - n * from.len()).saturating_add(n.saturating_mul(to.len()));
    let mut out = cx.new_string(bytes, span)?;
    let mut last = 0;
    for (at, _) in s.match_indices(from) {
        out.push_str(&s[last..at]);
        out.push_str(to);
        last = at + from.len();
    }
    out.push_str(&s[last..]);
    Ok(RtVal::Str(out.into()))
}

fn parse(s: &str, span: Span, ty: &str) -> R<i32> {
    let t = s.trim();
    t.parse::<i32>().map_err(|_| {
        not_a_number(
            t,
            span,
            ty,
            "an integer such as `42` or `-7` that fits an `i32`",
        )
    })
}

fn not_a_number(t: &str, span: Span, ty: &str, what: &str) -> Box<Diag> {
    let shown: String = t.chars().take(40).collect();
    let more = if t.chars().count() > 40 { "..." } else { "" };
    Box::new(
        Diag::error(
            "accl::run::parse",
            format!("\"{shown}{more}\" is not a `{ty}`"),
            span,
            "this text",
        )
        .with_help(format!("parse_{ty} takes {what}")),
    )
}
