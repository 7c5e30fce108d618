//! Typing rules of the device routines that take an optional device type
//! (a `str`, as `acc_get_device_type()` gives it): with one, devices are
//! numbered among those of the type.

use lang::builtins::Sig;
use lang::Type;

/// `f()` or `f(device_type)`, giving `ret`.
pub(super) fn typed_query(args: &[Type], name: &str, ret: Type) -> Result<Sig, String> {
    match args {
        [] | [Type::Str] => Ok(Sig {
            params: args.to_vec(),
            ret,
        }),
        _ => Err(format!("is `{name}()` or `{name}(device_type)`")),
    }
}

/// `acc_set_device_num(d)` or `acc_set_device_num(d, device_type)`.
pub(super) fn set_device_num(args: &[Type]) -> Result<Sig, String> {
    match args {
        [d] | [d, Type::Str] if d.is_int_like() => {
            let mut params = vec![Type::I32];
            params.extend(args.get(1).copied());
            Ok(Sig {
                params,
                ret: Type::Unit,
            })
        }
        _ => Err("is `acc_set_device_num(d)` or `acc_set_device_num(d, device_type)`".into()),
    }
}

/// `f(d, property)` or `f(d, device_type, property)`, giving `ret`.
pub(super) fn property(args: &[Type], name: &str, ret: Type) -> Result<Sig, String> {
    match args {
        [d, Type::Str] | [d, Type::Str, Type::Str] if d.is_int_like() => {
            let mut params = vec![Type::I32];
            params.extend_from_slice(&args[1..]);
            Ok(Sig { params, ret })
        }
        _ => Err(format!(
            "is `{name}(d, \"property\")` or `{name}(d, device_type, \"property\")`"
        )),
    }
}

/// `acc_init(device_type)`, `acc_shutdown(device_type)`.
pub(super) fn device_type_only(args: &[Type]) -> Result<Sig, String> {
    match args {
        [Type::Str] => Ok(Sig {
            params: vec![Type::Str],
            ret: Type::Unit,
        }),
        _ => Err(
            "takes a device type (`acc_get_device_type()`, \"gpu\", \"cpu\", \"host\", \"any\")"
                .into(),
        ),
    }
}

/// `acc_init_device(d, device_type)`, `acc_shutdown_device(d, device_type)`:
/// device `d` among those of the type.
pub(super) fn device_num_and_type(args: &[Type]) -> Result<Sig, String> {
    match args {
        [d, Type::Str] if d.is_int_like() => Ok(Sig {
            params: vec![Type::I32, Type::Str],
            ret: Type::Unit,
        }),
        _ => Err("takes a device number and a device type (`acc_get_device_type()`, \"gpu\", \"cpu\", \"host\", \"any\")".into()),
    }
}

/// `acc_async_test(q)`: a queue number of any integer type (as `async(q)`
/// takes one).
pub(super) fn queue_test(args: &[Type]) -> Result<Sig, String> {
    match args {
        [q] if q.is_int_like() => Ok(Sig {
            params: vec![if *q == Type::IntLit { Type::I64 } else { *q }],
            ret: Type::BOOL,
        }),
        _ => Err("is `acc_async_test(q)`, q a queue number".into()),
    }
}

/// `acc_memcpy_to_device(dst, src)`, `acc_memcpy_from_device(dst, src)`
/// and `acc_memcpy_device(dst, src)`, each an array or section (reaching the rule as the array and its
/// bounds), of one element type; `_async` forms take a queue last.
pub(super) fn memcpy_host(args: &[Type], name: &str, queued: bool) -> Result<Sig, String> {
    let usage = if queued {
        format!("is `{name}(dst, src, q)` with arrays or sections `dst`, `src` and a queue `q`")
    } else {
        format!("is `{name}(dst, src)` with arrays or sections `dst` and `src`")
    };
    let mut i = 0;
    let (Some((x, _)), Some((y, _))) = (
        lang::builtins::section_arg(args, &mut i),
        lang::builtins::section_arg(args, &mut i),
    ) else {
        return Err(usage);
    };
    if x != y {
        return Err(format!(
            "copies between arrays of one element type, not `{x}` and `{y}`"
        ));
    }
    let mut params = args[..i].to_vec();
    match (&args[i..], queued) {
        ([], false) => {}
        ([q], true) if q.is_int_like() => params.push(Type::I64),
        _ => return Err(usage),
    }
    Ok(Sig {
        params,
        ret: Type::Unit,
    })
}

/// `acc_memcpy_device`, `acc_memcpy_to_device`, `acc_memcpy_from_device`
/// and their `_async` forms, whose arguments may be sections.
pub(super) fn add_memcpy(b: &mut lang::Builtins) {
    let memcpy: [(&str, &str, lang::builtins::TypingRule); 5] = [
        (
            "acc_memcpy_device",
            "acc_memcpy_device(dst, src): copy the device copy of array or section src into that of dst, on the device (each inside one present section; same element type and count)",
            |a| memcpy_host(a, "acc_memcpy_device", false),
        ),
        (
            "acc_memcpy_to_device",
            "acc_memcpy_to_device(dst, src): copy the host data of array or section src into the device copy of dst (present; same element type and count)",
            |a| memcpy_host(a, "acc_memcpy_to_device", false),
        ),
        (
            "acc_memcpy_to_device_async",
            "acc_memcpy_to_device_async(dst, src, q): acc_memcpy_to_device after the earlier work of queue q",
            |a| memcpy_host(a, "acc_memcpy_to_device_async", true),
        ),
        (
            "acc_memcpy_from_device",
            "acc_memcpy_from_device(dst, src): copy the device copy of array or section src (present) into the host data of dst (same element type and count)",
            |a| memcpy_host(a, "acc_memcpy_from_device", false),
        ),
        (
            "acc_memcpy_from_device_async",
            "acc_memcpy_from_device_async(dst, src, q): acc_memcpy_from_device after the earlier work of queue q",
            |a| memcpy_host(a, "acc_memcpy_from_device_async", true),
        ),
    ];
    for (name, synopsis, rule) in memcpy {
        b.add(lang::Builtin {
            name: name.to_string(),
            typing: lang::Typing::Rule(rule),
            effect: lang::Effect::Host,
            synopsis: synopsis.to_string(),
            place_arg: false,
            sections: true,
        });
    }
}
