//! Fuzz target `surfaces`: the ways data and text come into a script other
//! than its source, each on arbitrary bytes. The first byte picks one:
//!
//! - 0: `format(fmt, args..)` (`stdlib::text::format_within`, what the
//!   builtin calls): the format string up to the first NUL, then arguments
//!   made from the bytes after it (integers, floats, strings, small arrays),
//!   under a 1 MiB cap on the result;
//! - 1: a CSV table (`stdlib::csvio::read_table`, what `load_csv` reads), as
//!   each element type, at most 2^16 values;
//! - 2: a `.npy` file (`stdlib::npy::decode`, what `load_npy` reads), as
//!   each element type and rank;
//! - 3: script parameters: NUL-separated strings given to an engine
//!   (`Engine::set_args`, as `accl run FILE -- ARGS` does) that reads them
//!   with `nargs`, `arg`, `arg_i32` and `arg_f64`, formats and joins them,
//!   with the pipeline target's limits and a 1 MiB memory limit.
//!
//! Oracle: no panic, no hang, no sanitizer report, no allocation past
//! libFuzzer's `-rss_limit_mb`; a format result never grows much past its
//! cap, and a table never holds more values than allowed.

#![no_main]

use lang::{Scalar, Value};
use libfuzzer_sys::fuzz_target;
use std::time::Duration;
use stdlib::text::Arg;
use stdlib::Array;

const TYPES: [Scalar; 7] = Scalar::ALL;

const PARAMS_SCRIPT: &str = r#"
let n = nargs();
let all = "";
for i in 0..n {
    let s = arg(i);
    let k = arg_i32(i, 0);
    let x = arg_f64(i, 0.5);
    all = all + format("{}|{:>8}|{:.3}|{:x};", s, k, x, k);
    all = join(",", all, len(s) as i64, k, x);
}
let first = arg(0, "none");
"#;

fn format_case(data: &[u8]) {
    let (fmt, rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(fmt) = std::str::from_utf8(fmt) else {
        return;
    };
    let arrays: Vec<Array> = rest
        .chunks(9)
        .filter(|c| c[0] % 5 == 4)
        .map(|c| {
            let v: Vec<f32> = c[1..].iter().map(|&b| b as f32 - 100.0).collect();
            let n = v.len();
            Array::from_vec(v, vec![n.max(1)]).unwrap_or_else(|_| {
                Array::from_vec(vec![0.0f32], vec![1]).unwrap()
            })
        })
        .collect();
    let mut next_array = arrays.iter();
    let mut args = Vec::new();
    for c in rest.chunks(9) {
        let mut b = [0u8; 8];
        b[..c.len() - 1].copy_from_slice(&c[1..]);
        let bits = u64::from_le_bytes(b);
        args.push(match c[0] % 5 {
            0 => Arg::Scalar(Value::I32(bits as i32)),
            1 => Arg::Scalar(Value::I64(bits as i64)),
            2 => Arg::Scalar(Value::F64(f64::from_bits(bits))),
            3 => Arg::Str(std::str::from_utf8(&c[1..]).unwrap_or("s")),
            _ => match next_array.next() {
                Some(a) => Arg::Array(a),
                None => Arg::Scalar(Value::Bool(bits & 1 == 1)),
            },
        });
        if args.len() >= 16 {
            break;
        }
    }
    const CAP: usize = 1 << 20;
    if let Ok(Ok(s)) = stdlib::text::format_within(fmt, &args, CAP) {
        // A placeholder adds at most 2^16 of width, or its argument.
        assert!(s.len() <= CAP + (1 << 16) + 4 * rest.len() + 64);
    }
    if let Ok(s) = stdlib::text::format(fmt, &args) {
        let _ = s.len();
    }
}

fn csv_case(data: &[u8]) {
    let Some((&k, body)) = data.split_first() else {
        return;
    };
    let t = TYPES[k as usize % TYPES.len()];
    let max = 1usize << 16;
    match stdlib::csvio::read_table(body, t, max) {
        Ok(Ok(a)) => {
            assert!(a.len() <= max);
            assert_eq!(a.shape().len(), 2);
        }
        Ok(Err(e)) => {
            let _ = e.to_string();
        }
        Err(n) => assert!(n > max),
    }
}

fn npy_case(data: &[u8]) {
    let Some((&k, body)) = data.split_first() else {
        return;
    };
    let t = TYPES[k as usize % TYPES.len()];
    let rank = match (k / 7) % 4 {
        0 => None,
        r => Some(r as usize),
    };
    match stdlib::npy::decode(body, t, rank) {
        Ok(a) => {
            assert!(a.len() * t.size() <= body.len());
            // What decode reads, encode writes back.
            let again = stdlib::npy::encode(&a);
            let b = stdlib::npy::decode(&again, t, None).expect("a written .npy reads back");
            assert_eq!(b.len(), a.len());
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

fn params_case(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let args: Vec<&str> = text.split('\0').take(8).collect();
    let mut e = accl::Engine::new();
    e.set_max_operations(200_000)
        .set_max_call_depth(64)
        .set_max_array_bytes(1 << 20)
        .set_time_limit(Some(Duration::from_secs(1)))
        .set_print(|_| {})
        .set_args(&args);
    if let Err(err) = e.eval(PARAMS_SCRIPT) {
        assert!(!err.diags.is_empty(), "an error without diagnostics");
        let _ = err.render(80);
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 8192 {
        return;
    }
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 4 {
        0 => format_case(rest),
        1 => csv_case(rest),
        2 => npy_case(rest),
        _ => params_case(rest),
    }
});
