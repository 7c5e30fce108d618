//! The string builtins a script reaches for first: length, search,
//! replacement, trimming, prefixes and suffixes, and numbers parsed from
//! text, and the parts of a string between separators (all host code:
//! strings never reach a device).

use lang::{Builtin, Builtins, Effect, Sig, Type, Typing};

fn host(b: &mut Builtins, name: &str, synopsis: &str, params: Vec<Type>, ret: Type) {
    b.add(Builtin {
        name: name.to_string(),
        typing: Typing::Fixed { params, ret },
        effect: Effect::Host,
        synopsis: synopsis.to_string(),
        place_arg: false,
        sections: false,
    });
}

/// `len(a)` of an array, or `len(s)` of a string (its characters).
pub fn len_rule(args: &[Type]) -> Result<Sig, String> {
    match args {
        [Type::Str] => Ok(Sig {
            params: vec![Type::Str],
            ret: Type::I32,
        }),
        [t] if t.is_array() => Ok(Sig {
            params: vec![*t],
            ret: Type::I32,
        }),
        [t] => Err(format!("takes an array or a string, not `{t}`")),
        _ => Err("is `len(a)` of an array or `len(s)` of a string".into()),
    }
}

/// Add the string builtins (besides `len`, `str`, `format` and `join`).
pub fn add(b: &mut Builtins) {
    let s = Type::Str;
    host(
        b,
        "find",
        "find(s, part) -> i32: the character index where part first occurs in s, or -1",
        vec![s, s],
        Type::I32,
    );
    host(
        b,
        "replace",
        "replace(s, from, to) -> str: s with every occurrence of from replaced by to",
        vec![s, s, s],
        s,
    );
    host(
        b,
        "trim",
        "trim(s) -> str: s without white space at either end",
        vec![s],
        s,
    );
    host(
        b,
        "starts_with",
        "starts_with(s, prefix) -> bool",
        vec![s, s],
        Type::BOOL,
    );
    host(
        b,
        "ends_with",
        "ends_with(s, suffix) -> bool",
        vec![s, s],
        Type::BOOL,
    );
    host(
        b,
        "parse_i32",
        "parse_i32(s) -> i32: the integer s spells (white space around it allowed), else an error at the call",
        vec![s],
        Type::I32,
    );
    host(
        b,
        "parse_f64",
        "parse_f64(s) -> f64: the number s spells (white space around it allowed), else an error at the call",
        vec![s],
        Type::F64,
    );
    host(
        b,
        "split_count",
        "split_count(s, sep) -> i32: how many parts `split(s, sep)` gives (separators + 1)",
        vec![s, s],
        Type::I32,
    );
    host(
        b,
        "split_part",
        "split_part(s, sep, i) -> str: part i (from 0) of s between the separators sep",
        vec![s, s, Type::I32],
        s,
    );
    host(
        b,
        "char_at",
        "char_at(s, i) -> str: character i of s (from 0)",
        vec![s, Type::I32],
        s,
    );
}
