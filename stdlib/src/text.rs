//! `format("..", values..)`: Rust's format syntax, checked at run time.
//!
//! A placeholder is `{}` or `{N}` (argument N, from 0), with an optional
//! spec after `:`: `[[fill]align][sign][#][0][width][.precision][type]`,
//! where align is `<` `^` `>`, sign `+`, type `e` `E` (floats), `x` `X` `b`
//! `o` (integers). `{{` and `}}` are literal braces. As in Rust, precision
//! rounds floats, truncates strings and is ignored on integers; numbers
//! align right and everything else left; every argument must be used.
//! Width and precision taken from arguments (`{:1$}`, `{:.*}`) are not
//! supported. Values without a spec print as `print` shows them.

use crate::array::Array;
use crate::format;
use lang::Value;
use std::fmt::Write;

/// One argument of [`format`].
pub enum Arg<'a> {
    Scalar(Value),
    Str(&'a str),
    Array(&'a Array),
}

/// Why a format string was refused: a message and the byte range of the
/// format string it is about (for a label inside a string literal).
#[derive(Debug, Clone, PartialEq)]
pub struct FmtError {
    pub message: String,
    pub at: std::ops::Range<usize>,
}

fn fail<T>(message: impl Into<String>, at: std::ops::Range<usize>) -> Result<T, FmtError> {
    Err(FmtError {
        message: message.into(),
        at,
    })
}

#[derive(Default, Clone, Copy)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    plus: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    ty: Option<char>,
}

/// `fmt` with its placeholders replaced by `args`.
///
/// ```
/// use stdlib::text::{format, Arg};
/// use lang::Value;
/// let s = format("{:>6.2}|{}|{:#x}", &[Arg::Scalar(Value::F64(2.5)), Arg::Str("a"), Arg::Scalar(Value::I32(255))]);
/// assert_eq!(s.unwrap(), "  2.50|a|0xff");
/// ```
pub fn format(fmt: &str, args: &[Arg]) -> Result<String, FmtError> {
    format_within(fmt, args, usize::MAX).unwrap_or_else(|_| fail("the result is too long", 0..0))
}

/// [`format`], stopping as soon as the result grows past `max` bytes:
/// `Err(bytes so far)` then (a placeholder adds at most its width, capped
/// at 2^16, or its argument's text, so the string never grows much past
/// `max`). Allocations are fallible: one the system refuses is
/// `Err(bytes wanted)` too.
///
/// ```
/// use stdlib::text::{format_within, Arg};
/// assert!(format_within("{:100}", &[Arg::Str("a")], 10).is_err());
/// assert_eq!(format_within("{}", &[Arg::Str("a")], 10).unwrap().unwrap(), "a");
/// ```
#[allow(clippy::result_large_err)]
pub fn format_within(
    fmt: &str,
    args: &[Arg],
    max: usize,
) -> Result<Result<String, FmtError>, usize> {
    let mut out = String::new();
    out.try_reserve(fmt.len().min(max)).map_err(|_| fmt.len())?;
    Ok(format_into(&mut out, fmt, args, max)?.map(|()| out))
}

fn format_into(
    out: &mut String,
    fmt: &str,
    args: &[Arg],
    max: usize,
) -> Result<Result<(), FmtError>, usize> {
    macro_rules! fail {
        ($m:expr, $at:expr $(,)?) => {
            return Ok(fail($m, $at))
        };
    }
    let mut used = vec![false; args.len()];
    let mut next = 0usize;
    let mut it = fmt.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        match c {
            '{' if it.peek().map(|p| p.1) == Some('{') => {
                it.next();
                out.push('{');
            }
            '}' if it.peek().map(|p| p.1) == Some('}') => {
                it.next();
                out.push('}');
            }
            '}' => fail!("unmatched `}` (write `}}` for a brace)", i..i + 1),
            '{' => {
                let Some(close) = fmt[i..].find('}').map(|k| i + k) else {
                    fail!("unclosed `{` (write `{{` for a brace)", i..fmt.len());
                };
                let inner = &fmt[i + 1..close];
                while it.peek().is_some_and(|p| p.0 <= close) {
                    it.next();
                }
                let (pos, spec) = match inner.split_once(':') {
                    Some((p, s)) => (p, Some(s)),
                    None => (inner, None),
                };
                let k = if pos.is_empty() {
                    next += 1;
                    next - 1
                } else {
                    match pos.trim().parse::<usize>() {
                        Ok(k) => k,
                        Err(_) => {
                            fail!(
                                format!("`{pos}` is not an argument number (named arguments are not supported)"),
                                i..close + 1,
                            )
                        }
                    }
                };
                let Some(arg) = args.get(k) else {
                    fail!(
                        format!(
                            "placeholder for argument {k}, but {} given",
                            match args.len() {
                                0 => "no argument is".to_string(),
                                1 => "only 1 argument is".to_string(),
                                n => format!("only {n} arguments are"),
                            }
                        ),
                        i..close + 1,
                    );
                };
                used[k] = true;
                let spec = match spec {
                    Some(s) => match parse_spec(s, i..close + 1) {
                        Ok(s) => s,
                        Err(e) => return Ok(Err(e)),
                    },
                    None => Spec::default(),
                };
                // Room for the widest this placeholder can be, asked of
                // the allocator first: a refusal is an error, not an abort.
                let room = spec.width.max(match arg {
                    Arg::Str(s) => s.len(),
                    _ => 64,
                });
                out.try_reserve(room)
                    .map_err(|_| out.len().saturating_add(room))?;
                if let Err(e) = one(out, arg, &spec, i..close + 1) {
                    return Ok(Err(e));
                }
                if out.len() > max {
                    return Err(out.len());
                }
            }
            c => {
                if out.len() >= max {
                    return Err(out.len() + 1);
                }
                out.push(c)
            }
        }
    }
    if let Some(k) = used.iter().position(|u| !u) {
        fail!(
            format!(
                "argument {k} is never used ({} placeholder{} for {} argument{})",
                used.iter().filter(|u| **u).count(),
                if used.iter().filter(|u| **u).count() == 1 {
                    ""
                } else {
                    "s"
                },
                args.len(),
                if args.len() == 1 { "" } else { "s" }
            ),
            0..fmt.len()
        );
    }
    Ok(Ok(()))
}

fn parse_spec(s: &str, at: std::ops::Range<usize>) -> Result<Spec, FmtError> {
    let mut sp = Spec::default();
    let cs: Vec<char> = s.chars().collect();
    let mut k = 0;
    let is_align = |c: char| matches!(c, '<' | '^' | '>');
    if cs.len() >= 2 && is_align(cs[1]) {
        sp.fill = Some(cs[0]);
        sp.align = Some(cs[1]);
        k = 2;
    } else if cs.first().is_some_and(|&c| is_align(c)) {
        sp.align = Some(cs[0]);
        k = 1;
    }
    if cs.get(k) == Some(&'+') {
        sp.plus = true;
        k += 1;
    } else if cs.get(k) == Some(&'-') {
        k += 1;
    }
    if cs.get(k) == Some(&'#') {
        sp.alternate = true;
        k += 1;
    }
    if cs.get(k) == Some(&'0') {
        sp.zero = true;
        k += 1;
    }
    let digits = |k: &mut usize| -> Option<usize> {
        let start = *k;
        while cs.get(*k).is_some_and(|c| c.is_ascii_digit()) {
            *k += 1;
        }
        let t: String = cs[start..*k].iter().collect();
        t.parse().ok()
    };
    if let Some(w) = digits(&mut k) {
        sp.width = w.min(1 << 16);
    }
    if cs.get(k) == Some(&'.') {
        k += 1;
        match digits(&mut k) {
            Some(p) => sp.precision = Some(p.min(1 << 10)),
            None => {
                return fail(
                    format!(
                    "`{s}`: a number must follow `.` (precision from an argument is not supported)"
                ),
                    at,
                )
            }
        }
    }
    if let Some(&c) = cs.get(k) {
        if matches!(c, 'e' | 'E' | 'x' | 'X' | 'b' | 'o' | '?') {
            sp.ty = Some(c);
            k += 1;
        }
    }
    if k != cs.len() {
        return fail(
            format!("`{s}` is not a format spec: it is `[[fill]align][+][#][0][width][.precision][e|E|x|X|b|o]`"),
            at,
        );
    }
    Ok(sp)
}

/// A float as `print` shows it, or with the spec's precision and type.
fn float(x: f64, sp: &Spec, single: bool) -> String {
    match (sp.ty, sp.precision) {
        (Some('e'), Some(p)) => format!("{x:.p$e}"),
        (Some('e'), None) if single => format!("{:e}", x as f32),
        (Some('e'), None) => format!("{x:e}"),
        (Some('E'), Some(p)) => format!("{x:.p$E}"),
        (Some('E'), None) if single => format!("{:E}", x as f32),
        (Some('E'), None) => format!("{x:E}"),
        (_, Some(p)) if single => format!("{:.p$}", x as f32),
        (_, Some(p)) => format!("{x:.p$}"),
        _ if single => format::scalar(Value::F32(x as f32)),
        _ => format::scalar(Value::F64(x)),
    }
}

fn one(out: &mut String, arg: &Arg, sp: &Spec, at: std::ops::Range<usize>) -> Result<(), FmtError> {
    let numeric = matches!(arg, Arg::Scalar(v) if !matches!(v, Value::Bool(_)));
    let (sign, body) = match arg {
        Arg::Array(a) => {
            if sp.ty.is_some() || sp.precision.is_some() || sp.plus || sp.zero {
                return fail("an array takes only width and alignment (`{:>40}`)", at);
            }
            (String::new(), format::array(a))
        }
        Arg::Str(s) => {
            if sp.ty.is_some_and(|t| t != '?') || sp.plus || sp.zero {
                return fail("a string takes width, alignment and precision only", at);
            }
            let s = match sp.precision {
                Some(p) => s.chars().take(p).collect(),
                None => s.to_string(),
            };
            if sp.ty == Some('?') {
                (String::new(), format!("{s:?}"))
            } else {
                (String::new(), s)
            }
        }
        Arg::Scalar(Value::Bool(b)) => {
            if sp.ty.is_some() || sp.plus || sp.zero {
                return fail("a `bool` takes width and alignment only", at);
            }
            (String::new(), b.to_string())
        }
        Arg::Scalar(v) => {
            let (neg, mag) = match *v {
                Value::F32(x) => (x.is_sign_negative() && !x.is_nan(), {
                    if matches!(sp.ty, Some('x' | 'X' | 'b' | 'o')) {
                        return fail("`x`, `X`, `b` and `o` format integers, not floats", at);
                    }
                    float((x as f64).abs(), sp, true)
                }),
                Value::F64(x) | Value::FloatLit(x) => (x.is_sign_negative() && !x.is_nan(), {
                    if matches!(sp.ty, Some('x' | 'X' | 'b' | 'o')) {
                        return fail("`x`, `X`, `b` and `o` format integers, not floats", at);
                    }
                    float(x.abs(), sp, false)
                }),
                v => {
                    let Some(i) = v.as_i128() else {
                        return fail("not a number", at);
                    };
                    // Hex, binary and octal of a signed value show its two's
                    // complement bits, as Rust does.
                    let bits = |i: i128| -> u128 {
                        match v {
                            Value::I32(x) => x as u32 as u128,
                            Value::I64(x) => x as u64 as u128,
                            _ => i as u128,
                        }
                    };
                    let alt = sp.alternate;
                    match sp.ty {
                        Some('x') => (
                            false,
                            format!("{}{:x}", if alt { "0x" } else { "" }, bits(i)),
                        ),
                        Some('X') => (
                            false,
                            format!("{}{:X}", if alt { "0x" } else { "" }, bits(i)),
                        ),
                        Some('b') => (
                            false,
                            format!("{}{:b}", if alt { "0b" } else { "" }, bits(i)),
                        ),
                        Some('o') => (
                            false,
                            format!("{}{:o}", if alt { "0o" } else { "" }, bits(i)),
                        ),
                        Some('e') => (i < 0, format!("{:e}", i.unsigned_abs())),
                        Some('E') => (i < 0, format!("{:E}", i.unsigned_abs())),
                        _ => (i < 0, i.unsigned_abs().to_string()),
                    }
                }
            };
            let sign = if neg {
                "-"
            } else if sp.plus {
                "+"
            } else {
                ""
            };
            (sign.to_string(), mag)
        }
    };
    let len = sign.chars().count() + body.chars().count();
    let pad = sp.width.saturating_sub(len);
    if sp.zero && numeric {
        // Sign-aware zero padding: zeros go after the sign and any prefix.
        let (prefix, digits) = match body.get(..2) {
            Some(p @ ("0x" | "0b" | "0o")) => (p, &body[2..]),
            _ => ("", body.as_str()),
        };
        let _ = write!(out, "{sign}{prefix}{}{digits}", "0".repeat(pad));
        return Ok(());
    }
    let fill = sp.fill.unwrap_or(' ');
    let align = sp.align.unwrap_or(if numeric { '>' } else { '<' });
    let (left, right) = match align {
        '<' => (0, pad),
        '^' => (pad / 2, pad - pad / 2),
        _ => (pad, 0),
    };
    out.extend(std::iter::repeat_n(fill, left));
    out.push_str(&sign);
    out.push_str(&body);
    out.extend(std::iter::repeat_n(fill, right));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[Arg]) -> String {
        format(fmt, args).unwrap_or_else(|e| panic!("{fmt}: {}", e.message))
    }

    #[test]
    fn agrees_with_rust_on_numbers() {
        let x = -1234.56789f64;
        for (spec, want) in [
            ("{}", format!("{x}")),
            ("{:.3}", format!("{x:.3}")),
            ("{:10.2}", format!("{x:10.2}")),
            ("{:<10.2}|", format!("{x:<10.2}|")),
            ("{:^11.1}|", format!("{x:^11.1}|")),
            ("{:010.3}", format!("{x:010.3}")),
            ("{:+.1}", format!("{:+.1}", 2.25f64)),
            ("{:e}", format!("{x:e}")),
            ("{:.2e}", format!("{x:.2e}")),
            ("{:*>12.4E}", format!("{x:*>12.4E}")),
        ] {
            let v = if spec.contains('+') { 2.25 } else { x };
            assert_eq!(f(spec, &[Arg::Scalar(Value::F64(v))]), want, "{spec}");
        }
        for (spec, v, want) in [
            ("{:5}", -42i32, format!("{:5}", -42)),
            ("{:05}", -42, format!("{:05}", -42)),
            ("{:x}", -1, format!("{:x}", -1i32)),
            ("{:#010x}", 255, format!("{:#010x}", 255)),
            ("{:b}", 5, format!("{:b}", 5)),
            ("{:#o}", 8, format!("{:#o}", 8)),
            ("{:+}", 7, format!("{:+}", 7)),
            ("{:.3}", 7, "7".to_string()),
        ] {
            assert_eq!(f(spec, &[Arg::Scalar(Value::I32(v))]), want, "{spec}");
        }
        assert_eq!(
            f("{:X}", &[Arg::Scalar(Value::I64(-2))]),
            format!("{:X}", -2i64)
        );
        assert_eq!(f("{:.2}", &[Arg::Scalar(Value::F32(0.1))]), "0.10");
    }

    #[test]
    fn strings_positions_and_braces() {
        let a = [Arg::Str("heat"), Arg::Scalar(Value::I32(50))];
        assert_eq!(f("{}_{:04}.png", &a), "heat_0050.png");
        assert_eq!(f("{1}-{0}-{1}", &a), "50-heat-50");
        assert_eq!(f("{{{}}}", &a[..1]), "{heat}");
        assert_eq!(
            f(
                "[{:>6}][{:<6}][{:^6.2}]",
                &[Arg::Str("ab"), Arg::Str("cd"), Arg::Str("xyz")]
            ),
            "[    ab][cd    ][  xy  ]"
        );
        assert_eq!(f("{:?}", &[Arg::Str("a\"b")]), "\"a\\\"b\"");
        assert_eq!(f("{:>6}", &[Arg::Scalar(Value::Bool(true))]), "  true");
    }

    #[test]
    fn bad_formats_say_where() {
        let one = [Arg::Scalar(Value::I32(1))];
        for (fmt, args, msg, at) in [
            (
                "a {} {}",
                &one[..],
                "placeholder for argument 1, but only 1 argument is given",
                5..7,
            ),
            ("x {", &one[..], "unclosed `{`", 2..3),
            ("x } {}", &one[..], "unmatched `}`", 2..3),
            ("none", &one[..], "argument 0 is never used", 0..4),
            ("{:.}", &one[..], "a number must follow `.`", 0..4),
            ("{:q}", &one[..], "not a format spec", 0..4),
            ("{name}", &one[..], "not an argument number", 0..6),
        ] {
            let e = format(fmt, args).unwrap_err();
            assert!(e.message.contains(msg), "{fmt}: {}", e.message);
            assert_eq!(e.at, at, "{fmt}");
        }
        let fl = [Arg::Scalar(Value::F64(1.0))];
        assert!(format("{:x}", &fl)
            .unwrap_err()
            .message
            .contains("integers"));
        assert!(format("{:+}", &[Arg::Str("s")]).is_err());
    }
}
