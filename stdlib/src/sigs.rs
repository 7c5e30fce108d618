//! Builtin signatures (the builtins are listed in `docs/language.md`,
//! "Builtins").

use lang::{Builtin, Builtins, Effect, Scalar, Sig, Type, Typing, Value};

mod arity;
mod atomic;
mod device;
mod strings;
use arity::count;
use atomic::{atomic_int_rule, atomic_read_rule, atomic_rule, atomic_write_rule};

fn add(
    b: &mut Builtins,
    name: &str,
    synopsis: &str,
    effect: Effect,
    rule: lang::builtins::TypingRule,
) {
    b.add(Builtin {
        name: name.to_string(),
        typing: Typing::Rule(rule),
        effect,
        synopsis: synopsis.to_string(),
        place_arg: false,
        sections: false,
    });
}

fn fixed(
    b: &mut Builtins,
    name: &str,
    synopsis: &str,
    effect: Effect,
    params: Vec<Type>,
    ret: Type,
) {
    b.add(Builtin {
        name: name.to_string(),
        typing: Typing::Fixed { params, ret },
        effect,
        synopsis: synopsis.to_string(),
        place_arg: false,
        sections: false,
    });
}

/// The common scalar type of numeric arguments (literals take the type of the
/// typed ones; all-literal calls default like Rust: i32 / f64).
fn common_numeric(args: &[Type], float_only: bool) -> Result<Type, String> {
    let mut typed: Option<Scalar> = None;
    let mut any_float_lit = false;
    for (i, a) in args.iter().enumerate() {
        match a {
            Type::Scalar(s) if s.is_numeric() => match typed {
                None => typed = Some(*s),
                Some(t) if t == *s => {}
                Some(t) => {
                    return Err(format!(
                        "needs arguments of one type, but got `{t}` and `{s}` (convert with `as`)"
                    ))
                }
            },
            Type::IntLit => {}
            Type::FloatLit => any_float_lit = true,
            t => return Err(format!("needs numbers, but argument {} is `{t}`", i + 1)),
        }
    }
    let t = match typed {
        Some(t) => {
            if any_float_lit && t.is_int() {
                return Err(format!("got a float literal among `{t}` arguments"));
            }
            t
        }
        None if any_float_lit || float_only => Scalar::F64,
        None => Scalar::I32,
    };
    if float_only && !t.is_float() {
        return Err(format!(
            "needs floating-point arguments, but got `{t}` (convert with `as f32` or `as f64`)"
        ));
    }
    Ok(Type::Scalar(t))
}

macro_rules! numeric_fn {
    ($name:ident, $n:expr, $float:expr) => {
        fn $name(args: &[Type]) -> Result<Sig, String> {
            count(args, $n)?;
            let t = common_numeric(args, $float)?;
            Ok(Sig {
                params: vec![t; $n],
                ret: t,
            })
        }
    };
}
numeric_fn!(num1, 1, false);
numeric_fn!(num2, 2, false);
numeric_fn!(num3, 3, false);
numeric_fn!(float1, 1, true);
numeric_fn!(float2, 2, true);
numeric_fn!(float3, 3, true);

fn dims(args: &[Type]) -> Result<Vec<Type>, String> {
    if args.is_empty() || args.len() > 3 {
        return Err(format!("needs 1 to 3 dimensions, got {}", args.len()));
    }
    args.iter()
        .map(|a| match a {
            Type::IntLit => Ok(Type::I64),
            Type::Scalar(s) if s.is_int() => Ok(*a),
            t => Err(format!("dimensions must be integers, found `{t}`")),
        })
        .collect()
}

fn type_arg(a: Option<&Type>) -> Result<Scalar, String> {
    match a {
        Some(Type::TypeArg(s)) => Ok(*s),
        Some(t) => Err(format!(
            "needs an element type first (like `f32`), found `{t}`"
        )),
        None => Err("needs an element type first (like `f32`)".to_string()),
    }
}

fn zeros(args: &[Type]) -> Result<Sig, String> {
    let t = type_arg(args.first())?;
    let mut params = vec![args[0]];
    let d = dims(&args[1..])?;
    let rank = d.len() as u8;
    params.extend(d);
    Ok(Sig {
        params,
        ret: Type::Array(t, rank),
    })
}

fn full(args: &[Type]) -> Result<Sig, String> {
    let t = type_arg(args.first())?;
    if args.len() < 3 {
        return Err("needs a type, a value and 1 to 3 dimensions: `full(f32, 1.0, n)`".into());
    }
    let mut params = vec![args[0], Type::Scalar(t)];
    let d = dims(&args[2..])?;
    let rank = d.len() as u8;
    params.extend(d);
    Ok(Sig {
        params,
        ret: Type::Array(t, rank),
    })
}

fn arange(args: &[Type]) -> Result<Sig, String> {
    let t = type_arg(args.first())?;
    if t == Scalar::Bool {
        return Err("needs a numeric element type".into());
    }
    match args.len() {
        2 | 3 => Ok(Sig {
            params: std::iter::once(args[0])
                .chain(std::iter::repeat_n(Type::Scalar(t), args.len() - 1))
                .collect(),
            ret: Type::Array(t, 1),
        }),
        _ => Err("is `arange(T, n)` or `arange(T, start, end)`".into()),
    }
}

fn linspace(args: &[Type]) -> Result<Sig, String> {
    let t = type_arg(args.first())?;
    if !t.is_float() {
        return Err("needs a float element type (`f32` or `f64`)".into());
    }
    count(args, 4)?;
    Ok(Sig {
        params: vec![args[0], Type::Scalar(t), Type::Scalar(t), Type::I64],
        ret: Type::Array(t, 1),
    })
}

fn ones(args: &[Type]) -> Result<Sig, String> {
    let t = type_arg(args.first())?;
    if t == Scalar::Bool {
        return Err("needs a numeric element type".into());
    }
    zeros(args)
}

fn rand_rule(args: &[Type]) -> Result<Sig, String> {
    let t = type_arg(args.first())?;
    if !t.is_float() {
        return Err("needs a float element type (`f32` or `f64`): `rand(f64, seed, n)`".into());
    }
    if args.len() < 3 {
        return Err("needs a type, a seed and 1 to 3 dimensions: `rand(f64, 42, n)`".into());
    }
    let mut params = vec![args[0], Type::I64];
    let d = dims(&args[2..])?;
    let rank = d.len() as u8;
    params.extend(d);
    Ok(Sig {
        params,
        ret: Type::Array(t, rank),
    })
}

fn mean_rule(args: &[Type]) -> Result<Sig, String> {
    numeric_array_to(args, |_| Type::F64)
}

fn dot_rule(args: &[Type]) -> Result<Sig, String> {
    count(args, 2)?;
    match (args[0], args[1]) {
        (Type::Array(s, 1), Type::Array(t, 1)) if s == t && s.is_numeric() => Ok(Sig {
            params: vec![args[0], args[1]],
            ret: Type::Scalar(s),
        }),
        _ => Err(format!(
            "needs two 1-D numeric arrays of one element type, found `{}` and `{}`",
            args[0], args[1]
        )),
    }
}

fn arg_rule(args: &[Type]) -> Result<Sig, String> {
    numeric_array_to(args, |_| Type::I64)
}

fn astype_rule(args: &[Type]) -> Result<Sig, String> {
    count(args, 2)?;
    let Type::Array(_, r) = args[0] else {
        return Err(format!("needs an array first, found `{}`", args[0]));
    };
    let t = type_arg(args.get(1))
        .map_err(|_| "needs an element type second: `astype(a, f64)`".to_string())?;
    Ok(Sig {
        params: vec![args[0], args[1]],
        ret: Type::Array(t, r),
    })
}

fn reshape_rule(args: &[Type]) -> Result<Sig, String> {
    let Some(Type::Array(s, _)) = args.first() else {
        return Err("needs an array and 1 to 3 dimensions: `reshape(a, rows, cols)`".into());
    };
    let d = dims(&args[1..])?;
    let rank = d.len() as u8;
    let mut params = vec![args[0]];
    params.extend(d);
    Ok(Sig {
        params,
        ret: Type::Array(*s, rank),
    })
}

fn any_array(args: &[Type], n: usize) -> Result<(Scalar, u8), String> {
    count(args, n)?;
    match args[0] {
        Type::Array(s, r) => Ok((s, r)),
        t => Err(format!("needs an array, found `{t}`")),
    }
}

fn clone_rule(args: &[Type]) -> Result<Sig, String> {
    any_array(args, 1)?;
    Ok(Sig {
        params: vec![args[0]],
        ret: args[0],
    })
}

fn shape_rule(args: &[Type]) -> Result<Sig, String> {
    any_array(args, 2)?;
    let k = match args[1] {
        Type::IntLit => Type::I32,
        t if t.is_int_like() => t,
        t => return Err(format!("needs an integer axis, found `{t}`")),
    };
    Ok(Sig {
        params: vec![args[0], k],
        ret: Type::I32,
    })
}

fn reduce_rule(args: &[Type]) -> Result<Sig, String> {
    numeric_array_to(args, Type::Scalar)
}

/// One numeric array in, `ret(element type)` out.
fn numeric_array_to(args: &[Type], ret: impl Fn(Scalar) -> Type) -> Result<Sig, String> {
    let (s, _) = any_array(args, 1)?;
    if !s.is_numeric() {
        return Err(format!("needs a numeric array, found `{}`", args[0]));
    }
    Ok(Sig {
        params: vec![args[0]],
        ret: ret(s),
    })
}

fn print_rule(args: &[Type]) -> Result<Sig, String> {
    for (i, a) in args.iter().enumerate() {
        if matches!(a, Type::Unit | Type::TypeArg(_)) {
            return Err(format!("cannot print argument {} (`{a}`)", i + 1));
        }
    }
    Ok(Sig {
        params: args.iter().map(|a| a.defaulted()).collect(),
        ret: Type::Unit,
    })
}

fn arg_parse_rule(args: &[Type], t: Type) -> Result<Sig, String> {
    let n = args.len();
    if !(1..=2).contains(&n)
        || !args[0].is_int_like()
        || args.get(1).is_some_and(|d| !d.is_numeric_like())
    {
        return Err(format!("is `arg_{t}(i)` or `arg_{t}(i, default)`"));
    }
    let mut params = vec![Type::I32];
    if n == 2 {
        params.push(t);
    }
    Ok(Sig { params, ret: t })
}

fn getenv_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [Type::Str] | [Type::Str, Type::Str] => Ok(Sig {
            params: args.to_vec(),
            ret: Type::Str,
        }),
        _ => Err("is `getenv(\"NAME\")` or `getenv(\"NAME\", \"default\")`".into()),
    }
}

fn wait_any_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [t @ Type::Array(Scalar::I32 | Scalar::I64, 1)] => Ok(Sig {
            params: vec![*t],
            ret: Type::I32,
        }),
        _ => Err("takes a 1-D array of queue numbers (`i32[]` or `i64[]`)".into()),
    }
}

/// `acc_memcpy_d2d(dst, src, dst_device, src_device)`: two arrays or
/// sections (reaching the rule as the array and its bounds) of one element
/// type, then two device numbers.
fn memcpy_d2d_rule(args: &[Type]) -> Result<Sig, String> {
    let usage = "is `acc_memcpy_d2d(dst, src, dst_device, src_device)` of two arrays or sections and two device numbers";
    let mut i = 0;
    let (Some((x, _)), Some((y, _))) = (
        lang::builtins::section_arg(args, &mut i),
        lang::builtins::section_arg(args, &mut i),
    ) else {
        return Err(usage.into());
    };
    if x != y {
        return Err(format!(
            "copies between arrays of one element type, not `{x}` and `{y}`"
        ));
    }
    match &args[i..] {
        [d, e] if d.is_int_like() && e.is_int_like() => {
            let mut params = args[..i].to_vec();
            params.extend([Type::I32, Type::I32]);
            Ok(Sig {
                params,
                ret: Type::Unit,
            })
        }
        _ => Err(usage.into()),
    }
}

fn str_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [t @ (Type::Scalar(_) | Type::IntLit | Type::FloatLit | Type::Str)] => Ok(Sig {
            params: vec![t.defaulted()],
            ret: Type::Str,
        }),
        [t] => Err(format!(
            "takes a number, a `bool` or a string, not `{t}` (print an array with `print`)"
        )),
        _ => Err("is `str(x)`".into()),
    }
}

/// `format(fmt, values..)` and `join(separator, values..)`: a string, then
/// anything `print` can show.
fn format_rule(args: &[Type]) -> Result<Sig, String> {
    match args.first() {
        Some(Type::Str) => {}
        Some(t) => return Err(format!("takes a string first, not `{t}`")),
        None => return Err("needs a string first".into()),
    }
    let mut sig = print_rule(args)?;
    sig.ret = Type::Str;
    Ok(sig)
}

fn assert_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [Type::Scalar(Scalar::Bool)] => Ok(Sig {
            params: vec![Type::BOOL],
            ret: Type::Unit,
        }),
        [Type::Scalar(Scalar::Bool), Type::Str] => Ok(Sig {
            params: vec![Type::BOOL, Type::Str],
            ret: Type::Unit,
        }),
        _ => Err("is `assert(condition)` or `assert(condition, \"message\")`".into()),
    }
}

fn write_png_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [Type::Array(Scalar::U8, 2 | 3), Type::Str] => Ok(Sig {
            params: args.to_vec(),
            ret: Type::Unit,
        }),
        [a, Type::Str] => Err(format!(
            "needs a `u8[,]` (gray) or `u8[,,]` (H x W x 3 colour) image, found `{a}`"
        )),
        _ => Err("is `write_png(image, \"file.png\")`".into()),
    }
}

fn save_csv_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [Type::Array(_, 1 | 2), Type::Str] => Ok(Sig {
            params: args.to_vec(),
            ret: Type::Unit,
        }),
        [Type::Array(_, r), Type::Str] => Err(format!(
            "writes an array of rank 1 or 2, not {r} (`reshape` it first)"
        )),
        _ => Err("is `save_csv(array, \"file.csv\")`".into()),
    }
}

fn save_npy_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [Type::Array(..), Type::Str] => Ok(Sig {
            params: args.to_vec(),
            ret: Type::Unit,
        }),
        _ => Err("is `save_npy(array, \"file.npy\")`".into()),
    }
}

macro_rules! load_npy_fn {
    ($name:ident, $rank:expr) => {
        fn $name(args: &[Type]) -> Result<Sig, String> {
            count(args, 2)?;
            let t = type_arg(args.first())?;
            if args[1] != Type::Str {
                return Err("needs a file name as its second argument".into());
            }
            Ok(Sig {
                params: args.to_vec(),
                ret: Type::Array(t, $rank),
            })
        }
    };
}
load_npy_fn!(load_npy1, 1);
load_npy_fn!(load_npy2, 2);
load_npy_fn!(load_npy3, 3);

fn is_present_rule(args: &[Type]) -> Result<Sig, String> {
    let mut i = 0;
    if lang::builtins::section_arg(args, &mut i).is_none() || i != args.len() {
        return Err("needs an array or a section".into());
    }
    Ok(Sig {
        params: args.to_vec(),
        ret: Type::BOOL,
    })
}

/// The table of every builtin function and constant.
pub fn builtins() -> Builtins {
    let mut b = Builtins::new();
    use Effect::*;
    // Math, on host and device.
    add(&mut b, "abs", "abs(x) -> same type", Pure, num1);
    add(&mut b, "min", "min(a, b) -> same type", Pure, num2);
    add(&mut b, "max", "max(a, b) -> same type", Pure, num2);
    add(&mut b, "clamp", "clamp(x, lo, hi) -> same type", Pure, num3);
    for f in [
        "sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
        "cosh", "tanh", "floor", "ceil", "round", "trunc",
    ] {
        add(
            &mut b,
            f,
            &format!("{f}(x: float) -> same type"),
            Pure,
            float1,
        );
    }
    add(
        &mut b,
        "pow",
        "pow(x: float, y: float) -> same type",
        Pure,
        float2,
    );
    add(
        &mut b,
        "atan2",
        "atan2(y: float, x: float) -> same type",
        Pure,
        float2,
    );
    add(
        &mut b,
        "fma",
        "fma(a, b, c: float) -> a * b + c, same type",
        Pure,
        float3,
    );
    // Atomics: `atomic read` and `atomic write` are calls of these.
    b.add(Builtin {
        name: "atomic_read".to_string(),
        typing: Typing::Rule(atomic_read_rule),
        effect: Atomic,
        synopsis: "atomic_read(a[i]) -> a[i], read atomically (`atomic read v = a[i];`)".into(),
        place_arg: true,
        sections: false,
    });
    b.add(Builtin {
        name: "atomic_write".to_string(),
        typing: Typing::Rule(atomic_write_rule),
        effect: Atomic,
        synopsis: "atomic_write(a[i], v): a[i] = v atomically (`atomic write a[i] = v;`)".into(),
        place_arg: true,
        sections: false,
    });
    // Atomics (capture forms).
    for f in ["atomic_add", "atomic_min", "atomic_max", "atomic_xchg"] {
        b.add(Builtin {
            name: f.to_string(),
            typing: Typing::Rule(atomic_rule),
            effect: Atomic,
            synopsis: format!("{f}(a[i], v) -> the old value of a[i]"),
            place_arg: true,
            sections: false,
        });
    }
    // The other operators of `atomic capture` (lang/src/check/atomic_forms.rs).
    for op in lang::ast::AtomicOp::ALL {
        let f = op.builtin();
        if b.lookup(f).is_some() {
            continue;
        }
        let what = match op {
            lang::ast::AtomicOp::RevSub => "a[i] = v - a[i]".to_string(),
            lang::ast::AtomicOp::RevDiv => "a[i] = v / a[i]".to_string(),
            lang::ast::AtomicOp::RevShl => "a[i] = v << a[i]".to_string(),
            lang::ast::AtomicOp::RevShr => "a[i] = v >> a[i]".to_string(),
            op => format!("a[i] {} v", op.symbol()),
        };
        b.add(Builtin {
            name: f.to_string(),
            typing: Typing::Rule(if op.int_only() {
                atomic_int_rule
            } else {
                atomic_rule
            }),
            effect: Atomic,
            synopsis: format!("{f}(a[i], v): {what} atomically -> the old value of a[i]"),
            place_arg: true,
            sections: false,
        });
    }
    // Arrays (host).
    add(
        &mut b,
        "zeros",
        "zeros(T, dims..) -> T array of 1 to 3 dimensions",
        Alloc,
        zeros,
    );
    add(
        &mut b,
        "full",
        "full(T, value, dims..) -> T array filled with value",
        Alloc,
        full,
    );
    add(
        &mut b,
        "ones",
        "ones(T, dims..) -> T array of ones",
        Alloc,
        ones,
    );
    add(
        &mut b,
        "rand",
        "rand(T, seed, dims..) -> f32/f64 array, uniform in [0, 1), the same for the same seed",
        Alloc,
        rand_rule,
    );
    add(
        &mut b,
        "astype",
        "astype(a, T) -> a copy of a with T elements (converted as `as` does)",
        Alloc,
        astype_rule,
    );
    add(
        &mut b,
        "reshape",
        "reshape(a, dims..) -> a copy of a with that shape (same number of elements)",
        Alloc,
        reshape_rule,
    );
    add(&mut b, "mean", "mean(a) -> f64 average", Host, mean_rule);
    add(
        &mut b,
        "dot",
        "dot(a, b) -> sum of a[i] * b[i] (1-D)",
        Host,
        dot_rule,
    );
    add(
        &mut b,
        "argmax",
        "argmax(a) -> i64 flat index of the first largest element",
        Host,
        arg_rule,
    );
    add(
        &mut b,
        "argmin",
        "argmin(a) -> i64 flat index of the first smallest element",
        Host,
        arg_rule,
    );
    add(
        &mut b,
        "arange",
        "arange(T, n) or arange(T, start, end) -> T[]",
        Alloc,
        arange,
    );
    add(
        &mut b,
        "linspace",
        "linspace(T, start, end, n) -> T[] of n evenly spaced values",
        Alloc,
        linspace,
    );
    add(
        &mut b,
        "clone",
        "clone(a) -> a copy of a",
        Alloc,
        clone_rule,
    );
    add(
        &mut b,
        "len",
        "len(a) -> i32 number of elements; len(s) -> i32 characters of a string",
        Host,
        strings::len_rule,
    );
    add(
        &mut b,
        "shape",
        "shape(a, axis) -> i32 extent of that axis",
        Host,
        shape_rule,
    );
    add(&mut b, "sum", "sum(a) -> element type", Host, reduce_rule);
    add(
        &mut b,
        "maxval",
        "maxval(a) -> largest element",
        Host,
        reduce_rule,
    );
    add(
        &mut b,
        "minval",
        "minval(a) -> smallest element",
        Host,
        reduce_rule,
    );
    // Strings (host).
    strings::add(&mut b);
    add(
        &mut b,
        "str",
        "str(x) -> str: a number or bool as print shows it",
        Host,
        str_rule,
    );
    add(
        &mut b,
        "format",
        "format(\"{:.3} {}\", values..) -> str, with Rust's format syntax",
        Host,
        format_rule,
    );
    add(
        &mut b,
        "join",
        "join(separator, values..) -> str: the values as print shows them, separated",
        Host,
        format_rule,
    );
    // The script's parameters and environment (host).
    fixed(
        &mut b,
        "nargs",
        "nargs() -> i32: how many parameters the script was given (accl run FILE -- a b)",
        Host,
        vec![],
        Type::I32,
    );
    fixed(
        &mut b,
        "arg",
        "arg(i) -> str: parameter i (from 0)",
        Host,
        vec![Type::I32],
        Type::Str,
    );
    add(
        &mut b,
        "arg_i32",
        "arg_i32(i) or arg_i32(i, default) -> i32: parameter i as an integer",
        Host,
        |a| arg_parse_rule(a, Type::I32),
    );
    add(
        &mut b,
        "arg_f64",
        "arg_f64(i) or arg_f64(i, default) -> f64: parameter i as a number",
        Host,
        |a| arg_parse_rule(a, Type::F64),
    );
    add(
        &mut b,
        "getenv",
        "getenv(name) or getenv(name, default) -> str: an environment variable (\"\" or default when unset)",
        Host,
        getenv_rule,
    );
    // I/O (host).
    add(&mut b, "print", "print(values..)", Io, print_rule);
    add(&mut b, "println", "println(values..)", Io, print_rule);
    add(&mut b, "eprint", "eprint(values..)", Io, print_rule);
    add(&mut b, "eprintln", "eprintln(values..)", Io, print_rule);
    add(
        &mut b,
        "assert",
        "assert(condition, \"message\")",
        Host,
        assert_rule,
    );
    fixed(
        &mut b,
        "exit",
        "exit(code: i32): end the script now, with this exit status",
        Host,
        vec![Type::I32],
        Type::Unit,
    );
    fixed(
        &mut b,
        "clock",
        "clock() -> f64 seconds",
        Io,
        vec![],
        Type::F64,
    );
    add(
        &mut b,
        "write_png",
        "write_png(image: u8[,] or u8[,,], \"file.png\")",
        Io,
        write_png_rule,
    );
    add(
        &mut b,
        "save_csv",
        "save_csv(array, \"file.csv\"): rank 1 one value per line, rank 2 one row per line",
        Io,
        save_csv_rule,
    );
    add(
        &mut b,
        "load_csv",
        "load_csv(T, \"file.csv\") -> T[,] (rows x columns; a first line without numbers is a header)",
        Io,
        load_npy2,
    );
    add(
        &mut b,
        "save_npy",
        "save_npy(array, \"file.npy\")",
        Io,
        save_npy_rule,
    );
    add(
        &mut b,
        "load_npy",
        "load_npy(T, \"file.npy\") -> T[] (the data, flattened)",
        Io,
        load_npy1,
    );
    add(
        &mut b,
        "load_npy2",
        "load_npy2(T, \"file.npy\") -> T[,]",
        Io,
        load_npy2,
    );
    add(
        &mut b,
        "load_npy3",
        "load_npy3(T, \"file.npy\") -> T[,,]",
        Io,
        load_npy3,
    );
    // Device API (host).
    add(
        &mut b,
        "acc_get_num_devices",
        "acc_get_num_devices() or acc_get_num_devices(type) -> i32: devices (of that type)",
        Host,
        |a| device::typed_query(a, "acc_get_num_devices", Type::I32),
    );
    add(
        &mut b,
        "acc_get_device_num",
        "acc_get_device_num() or acc_get_device_num(type) -> i32: the current device (among those of that type; -1 if it is not one)",
        Host,
        |a| device::typed_query(a, "acc_get_device_num", Type::I32),
    );
    fixed(
        &mut b,
        "acc_get_default_async",
        "acc_get_default_async() -> i32: the queue `async` alone uses (-1: its own)",
        Host,
        vec![],
        Type::I32,
    );
    fixed(
        &mut b,
        "acc_set_default_async",
        "acc_set_default_async(q: i32): the queue `async` alone uses from now on (-1: its own again)",
        Host,
        vec![Type::I32],
        Type::Unit,
    );
    for (name, what) in [
        ("acc_init", "acc_init(type): make the devices of that type ready (they open on first use anyway)"),
        ("acc_shutdown", "acc_shutdown(type): finish the work of the devices of that type (their data stays present)"),
    ] {
        add(&mut b, name, what, Host, device::device_type_only);
    }
    for (name, what) in [
        ("acc_init_device", "acc_init_device(d, type): make device d of that type ready (it opens on first use anyway)"),
        ("acc_shutdown_device", "acc_shutdown_device(d, type): finish the work of device d of that type (its data stays present)"),
    ] {
        add(&mut b, name, what, Host, device::device_num_and_type);
    }
    add(
        &mut b,
        "acc_set_device_type",
        "acc_set_device_type(type): make the first device of that type current (\"host\": run constructs on the host)",
        Host,
        device::device_type_only,
    );
    add(
        &mut b,
        "acc_set_device_num",
        "acc_set_device_num(d) or acc_set_device_num(d, type): make device d (of that type) current",
        Host,
        device::set_device_num,
    );
    b.add(Builtin {
        name: "acc_is_present".to_string(),
        typing: Typing::Rule(is_present_rule),
        effect: Host,
        synopsis: "acc_is_present(a) -> bool: is all of array or section a (or the device copy of a scalar) present on the current device?".to_string(),
        place_arg: false,
        sections: true,
    });
    add(
        &mut b,
        "acc_async_test",
        "acc_async_test(q) -> bool: has all of queue q's work finished? (then as `wait(q)`)",
        Host,
        device::queue_test,
    );
    fixed(
        &mut b,
        "acc_async_test_all",
        "acc_async_test_all() -> bool: has every queue's work finished? (then as `wait`)",
        Host,
        vec![],
        Type::BOOL,
    );
    add(
        &mut b,
        "acc_wait_any",
        "acc_wait_any(queues: i32[] or i64[]) -> i32: wait until one queue's work has finished, then as `wait(q)` for it; its index in `queues` (-1 when empty)",
        Host,
        wait_any_rule,
    );
    device::add_memcpy(&mut b);
    b.add(Builtin {
        name: "acc_memcpy_d2d".to_string(),
        typing: Typing::Rule(memcpy_d2d_rule),
        effect: Host,
        synopsis: "acc_memcpy_d2d(dst, src, dst_device, src_device): copy the device data of array or section src on device src_device into that of dst on device dst_device (each inside one present section there, same element type and count; through host memory, after the pending work of both devices)".to_string(),
        place_arg: false,
        sections: true,
    });
    fixed(
        &mut b,
        "acc_get_device_type",
        "acc_get_device_type() -> str: \"gpu\", \"cpu\" (a CPU Vulkan driver), \"host\" (the host reference) or \"other\"",
        Host,
        vec![],
        Type::Str,
    );
    add(
        &mut b,
        "acc_get_property",
        "acc_get_property(d[, type], \"memory\") -> i64: bytes of device memory of device d",
        Host,
        |a| device::property(a, "acc_get_property", Type::I64),
    );
    add(
        &mut b,
        "acc_get_property_string",
        "acc_get_property_string(d[, type], \"name\" | \"vendor\" | \"driver\") -> str",
        Host,
        |a| device::property(a, "acc_get_property_string", Type::Str),
    );
    add(
        &mut b,
        "acc_on_device",
        "acc_on_device([t]) -> bool: true in code running on a Vulkan device; with a device type t, true where the code runs on a device of that type (acc_device_host on the host and the host reference, acc_device_not_host, acc_device_default or the device's own type in a compute construct on a Vulkan device)",
        Pure,
        |a| device::typed_query(a, "acc_on_device", Type::BOOL),
    );
    // MPI (host): signatures in their own module.
    crate::mpi::add_builtins(&mut b);
    // Constants.
    macro_rules! consts {
        ($owner:literal, $t:ty, $ctor:path, [$($n:ident),*]) => {
            $( b.add_const($owner, stringify!($n), $ctor(<$t>::$n)); )*
        };
    }
    consts!(
        "f32",
        f32,
        Value::F32,
        [MAX, MIN, EPSILON, INFINITY, NEG_INFINITY, NAN, MIN_POSITIVE]
    );
    consts!(
        "f64",
        f64,
        Value::F64,
        [MAX, MIN, EPSILON, INFINITY, NEG_INFINITY, NAN, MIN_POSITIVE]
    );
    consts!("i32", i32, Value::I32, [MAX, MIN]);
    consts!("i64", i64, Value::I64, [MAX, MIN]);
    consts!("u32", u32, Value::U32, [MAX, MIN]);
    consts!("u8", u8, Value::U8, [MAX, MIN]);
    // OpenACC's async arguments, by their bare names: -1 is `async` alone
    // (the default queue), -2 synchronous, -3 the default queue by name.
    b.add_const("", "acc_async_noval", Value::I32(-1));
    b.add_const("", "acc_async_sync", Value::I32(-2));
    b.add_const("", "acc_async_default", Value::I32(-3));
    b.add_const("f32", "PI", Value::F32(std::f32::consts::PI));
    b.add_const("f64", "PI", Value::F64(std::f64::consts::PI));
    b.add_const("f32", "E", Value::F32(std::f32::consts::E));
    b.add_const("f64", "E", Value::F64(std::f64::consts::E));
    b
}
