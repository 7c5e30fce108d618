//! `accl lsp` on arbitrary input (docs/fuzzing.md): the first byte picks
//! the framing (the rest as the server's stdin) or a session of edits (the
//! rest split at NUL bytes into the texts of a document, each opened or
//! changed in turn, with every request asked at positions from the last
//! chunk's bytes). Beyond "no panic": no request is answered with an
//! internal error and no text gets an `accl::internal` diagnostic (the
//! server catches panics of its handlers and of the front end and says so
//! there).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    if data.len() > 8192 {
        return;
    }
    if pick % 2 == 0 {
        let _ = accl_lsp::fuzzing::frames(rest);
        return;
    }
    let mut chunks: Vec<&[u8]> = rest.split(|&b| b == 0).collect();
    let where_bytes = if chunks.len() > 1 { chunks.pop().unwrap_or_default() } else { &[] };
    let texts: Vec<String> = chunks
        .iter()
        .take(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let positions: Vec<(u32, u32)> = where_bytes
        .chunks(2)
        .take(8)
        .map(|p| (p[0] as u32 % 16, *p.get(1).unwrap_or(&0) as u32 % 64))
        .collect();
    let failures = accl_lsp::fuzzing::edits(&texts, &positions);
    assert!(failures.is_empty(), "{failures:?}");
});
