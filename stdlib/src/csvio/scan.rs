//! The fast path of `load_csv`: the text is read in large blocks cut at a
//! line end, each block split into line-aligned parts parsed on every core
//! (rayon), fields parsed straight from the bytes (`fast-float2` for
//! floats) into a typed vector, with no allocation per value or per line.
//! Errors carry the same line and field numbers as the `csv` crate's path
//! ([`super::read_quoted`]), which still reads comma-separated text that
//! quotes its fields.

use super::error::CsvError;
use crate::array::{Array, Elem};
use lang::Scalar;
use rayon::prelude::*;
use std::io::Read;

/// Bytes read at a time: the text in memory at once, beside the values.
const BLOCK: usize = 64 << 20;
/// A block is parsed on several threads from this size on.
const PARALLEL_FROM: usize = 1 << 20;

/// How the fields of a line are separated.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Sep {
    Comma,
    White,
}

/// Whether the first line that is not blank has a comma in it (else the
/// columns are separated by white space). Looks only at `head`: a first
/// line longer than it is read as comma-separated if it holds a comma.
pub(super) fn separator(head: &[u8]) -> Sep {
    let first = head
        .split(|&b| b == b'\n')
        .find(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
        .unwrap_or(&[]);
    if first.contains(&b',') {
        Sep::Comma
    } else {
        Sep::White
    }
}

/// An element type read from a field's text.
pub(super) trait Field: Elem + Send {
    fn parse(b: &[u8]) -> Option<Self>;
}

impl Field for f64 {
    #[inline]
    fn parse(b: &[u8]) -> Option<Self> {
        fast_float2::parse(b).ok()
    }
}

impl Field for f32 {
    #[inline]
    fn parse(b: &[u8]) -> Option<Self> {
        // Through f64, as before (and as NumPy's `loadtxt` reads float32).
        fast_float2::parse::<f64, _>(b).ok().map(|x| x as f32)
    }
}

impl Field for bool {
    #[inline]
    fn parse(b: &[u8]) -> Option<Self> {
        match b {
            b"true" | b"1" => Some(true),
            b"false" | b"0" => Some(false),
            _ => None,
        }
    }
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            #[inline]
            fn parse(b: &[u8]) -> Option<Self> {
                std::str::from_utf8(b).ok()?.parse::<i64>().ok()?.try_into().ok()
            }
        }
    )*};
}
int_field!(i32, i64, u32, u8);

/// The fields of one line (without its `\n`), trimmed; a comma-separated
/// line always has at least one (perhaps empty) field.
fn fields(line: &[u8], sep: Sep) -> impl Iterator<Item = &[u8]> {
    let (comma, white) = match sep {
        Sep::Comma => (
            Some(line.split(|&b| b == b',').map(<[u8]>::trim_ascii)),
            None,
        ),
        Sep::White => (
            None,
            Some(
                line.split(u8::is_ascii_whitespace)
                    .filter(|f| !f.is_empty()),
            ),
        ),
    };
    comma
        .into_iter()
        .flatten()
        .chain(white.into_iter().flatten())
}

/// What one line held.
enum Row<'a> {
    /// No field with text in it: skipped.
    Blank,
    /// This many values, pushed.
    Values(usize),
    /// Field `k` (from 1) is not of the element type.
    Bad(usize, &'a [u8]),
}

#[inline]
fn row<'a, T: Field>(line: &'a [u8], sep: Sep, out: &mut Vec<T>) -> Row<'a> {
    let (mut n, mut text, mut empty) = (0, false, None);
    // One loop per separator, so that each splits with no dispatch per field.
    macro_rules! each {
        ($fields:expr) => {
            for f in $fields {
                n += 1;
                if f.is_empty() {
                    empty.get_or_insert(n);
                    continue;
                }
                text = true;
                match T::parse(f) {
                    Some(v) => out.push(v),
                    // The first field that is not a value, empty or not.
                    None => return empty.map_or(Row::Bad(n, f), |k| Row::Bad(k, b"")),
                }
            }
        };
    }
    match sep {
        Sep::Comma => each!(line.split(|&b| b == b',').map(<[u8]>::trim_ascii)),
        Sep::White => each!(line
            .split(u8::is_ascii_whitespace)
            .filter(|f| !f.is_empty())),
    }
    match empty {
        _ if !text => Row::Blank,
        Some(k) => Row::Bad(k, b""),
        None => Row::Values(n),
    }
}

/// Why a part stopped early, at a line counted from the part's start.
enum Halt {
    Parse { field: usize, text: String },
    Ragged { found: usize },
    Over,
}

/// One line-aligned part of a block, parsed.
struct Part<T> {
    vals: Vec<T>,
    rows: usize,
    /// Its lines (all of them when it did not stop).
    lines: u64,
    stop: Option<(u64, Halt)>,
}

fn parse_part<T: Field>(text: &[u8], sep: Sep, cols: usize, max: usize) -> Part<T> {
    let mut p = Part {
        vals: Vec::with_capacity((text.len() / 8).min(max.saturating_add(1))),
        rows: 0,
        lines: 0,
        stop: None,
    };
    let mut start = 0;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        let line = &text[start..end];
        p.lines += 1;
        start = end + 1;
        let before = p.vals.len();
        let halt = match row(line, sep, &mut p.vals) {
            Row::Blank => continue,
            Row::Bad(field, t) => Halt::Parse {
                field,
                text: String::from_utf8_lossy(t).into_owned(),
            },
            Row::Values(n) if n != cols => Halt::Ragged { found: n },
            Row::Values(_) if p.vals.len() > max => Halt::Over,
            Row::Values(_) => {
                p.rows += 1;
                continue;
            }
        };
        if !matches!(halt, Halt::Over) {
            p.vals.truncate(before);
        }
        p.stop = Some((p.lines, halt));
        break;
    }
    p
}

/// Splits `text` into about `n` parts, each ending at a line end.
fn split_lines(text: &[u8], n: usize) -> Vec<&[u8]> {
    let mut parts = Vec::with_capacity(n);
    let mut rest = text;
    let size = text.len().div_ceil(n.max(1));
    while rest.len() > size {
        let cut = memchr::memchr(b'\n', &rest[size..]).map_or(rest.len(), |i| size + i + 1);
        let (a, b) = rest.split_at(cut);
        parts.push(a);
        rest = b;
    }
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts
}

/// The table being read, across blocks.
struct Table<T> {
    t: Scalar,
    sep: Sep,
    max: usize,
    /// Lines before the next block's first.
    line: u64,
    /// The first row's width, once a row has been read.
    cols: Option<usize>,
    /// Whether a line that is not blank has been seen (the next is no header).
    seen: bool,
    rows: usize,
    vals: Vec<T>,
}

/// Why reading stopped early.
enum Stop {
    Err(CsvError),
    /// More values than allowed: this many so far.
    Over(usize),
}

impl<T: Field> Table<T> {
    fn halt(&self, rel: u64, h: Halt, vals: usize) -> Stop {
        let line = self.line + rel;
        match h {
            Halt::Parse { field, text } => Stop::Err(CsvError::Parse {
                line,
                field,
                text,
                ty: self.t,
            }),
            Halt::Ragged { found } => Stop::Err(CsvError::Ragged {
                line,
                found,
                want: self.cols.unwrap_or(0),
            }),
            Halt::Over => Stop::Over(vals),
        }
    }

    /// Lines of `text` up to the first row: blank lines, and a first line
    /// with no number in it (a header), are skipped; the first row sets the
    /// table's width. Returns the bytes after them.
    fn first_row<'a>(&mut self, mut text: &'a [u8]) -> Result<&'a [u8], Stop> {
        let mut scratch: Vec<T> = Vec::new();
        while self.cols.is_none() && !text.is_empty() {
            let end = memchr::memchr(b'\n', text).map_or(text.len(), |i| i + 1);
            let line = text[..end].strip_suffix(b"\n").unwrap_or(&text[..end]);
            text = &text[end..];
            self.line += 1;
            scratch.clear();
            let r = row(line, self.sep, &mut scratch);
            let first = !self.seen;
            self.seen |= !matches!(r, Row::Blank);
            match r {
                Row::Blank => {}
                Row::Bad(..)
                    if first
                        && fields(line, self.sep)
                            .all(|f| fast_float2::parse::<f64, _>(f).is_err()) => {}
                Row::Bad(field, t) => {
                    let text = String::from_utf8_lossy(t).into_owned();
                    return Err(self.halt(0, Halt::Parse { field, text }, 0));
                }
                Row::Values(n) if n > self.max => return Err(Stop::Over(n)),
                Row::Values(n) => {
                    self.cols = Some(n);
                    self.rows = 1;
                    self.vals.append(&mut scratch);
                }
            }
        }
        Ok(text)
    }

    /// Parse `text` (whole lines), on every core when it is large.
    fn block(&mut self, text: &[u8]) -> Result<(), Stop> {
        let text = self.first_row(text)?;
        let Some(cols) = self.cols else {
            return Ok(());
        };
        let threads = rayon::current_num_threads();
        let n = if text.len() >= PARALLEL_FROM && threads > 1 {
            threads * 4
        } else {
            1
        };
        let parts = split_lines(text, n);
        let left = self.max.saturating_sub(self.vals.len());
        let parsed: Vec<Part<T>> = if parts.len() > 1 {
            parts
                .par_iter()
                .map(|p| parse_part(p, self.sep, cols, left))
                .collect()
        } else {
            parts
                .iter()
                .map(|p| parse_part(p, self.sep, cols, left))
                .collect()
        };
        self.vals.reserve(parsed.iter().map(|p| p.vals.len()).sum());
        for p in parsed {
            self.vals.extend_from_slice(&p.vals);
            self.rows += p.rows;
            if self.vals.len() > self.max {
                return Err(Stop::Over(self.vals.len()));
            }
            if let Some((rel, h)) = p.stop {
                return Err(self.halt(rel, h, self.vals.len()));
            }
            self.line += p.lines;
        }
        Ok(())
    }
}

/// Reads `src` (whose first `head` bytes are already in `buf`) as a table
/// of `T`s separated by `sep`.
fn read_typed<T: Field>(
    mut src: impl Read,
    mut buf: Vec<u8>,
    t: Scalar,
    sep: Sep,
    max: usize,
    block: usize,
) -> Result<Result<Array, CsvError>, usize> {
    let mut table = Table::<T> {
        t,
        sep,
        max,
        line: 0,
        cols: None,
        seen: false,
        rows: 0,
        vals: Vec::new(),
    };
    let stop = loop {
        let eof = match fill(&mut src, &mut buf, block) {
            Ok(eof) => eof,
            Err(e) => break Some(Stop::Err(CsvError::Io(e))),
        };
        // Whole lines now; the part line after them waits for the next block.
        let cut = if eof {
            buf.len()
        } else {
            memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1)
        };
        if cut == 0 && !eof {
            // One line longer than a block: read on until it ends.
            continue;
        }
        if let Err(s) = table.block(&buf[..cut]) {
            break Some(s);
        }
        buf.drain(..cut);
        if eof {
            break None;
        }
    };
    match stop {
        Some(Stop::Err(e)) => return Ok(Err(e)),
        Some(Stop::Over(n)) => return Err(n),
        None => {}
    }
    let cols = table.cols.unwrap_or(0);
    let shape = vec![table.rows, cols];
    Ok(Array::new(T::into_data(table.vals), shape).map_err(|e| {
        CsvError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            e.to_string(),
        ))
    }))
}

/// Read `block` bytes more into `buf`; true when `src` ended first.
fn fill(src: &mut impl Read, buf: &mut Vec<u8>, block: usize) -> std::io::Result<bool> {
    buf.reserve(block);
    let n = src.by_ref().take(block as u64).read_to_end(buf)?;
    Ok(n < block)
}

/// Whether this text is for the fast path: comma-separated text with a
/// quote, or a line ended by `\r` alone, goes to the `csv` crate.
pub(super) fn plain(head: &[u8], sep: Sep) -> bool {
    sep == Sep::White
        || (memchr::memchr(b'"', head).is_none()
            && memchr::memchr_iter(b'\r', head).all(|i| head.get(i + 1) == Some(&b'\n')))
}

/// The table in `src`, whose first bytes `head` have been read already.
pub(super) fn read(
    src: impl Read,
    head: Vec<u8>,
    t: Scalar,
    sep: Sep,
    max: usize,
) -> Result<Result<Array, CsvError>, usize> {
    match t {
        Scalar::Bool => read_typed::<bool>(src, head, t, sep, max, BLOCK),
        Scalar::I32 => read_typed::<i32>(src, head, t, sep, max, BLOCK),
        Scalar::I64 => read_typed::<i64>(src, head, t, sep, max, BLOCK),
        Scalar::U32 => read_typed::<u32>(src, head, t, sep, max, BLOCK),
        Scalar::U8 => read_typed::<u8>(src, head, t, sep, max, BLOCK),
        Scalar::F32 => read_typed::<f32>(src, head, t, sep, max, BLOCK),
        Scalar::F64 => read_typed::<f64>(src, head, t, sep, max, BLOCK),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::Value;

    fn fast(text: &str, t: Scalar, block: usize) -> Result<Result<Array, CsvError>, usize> {
        let sep = separator(text.as_bytes());
        read_typed_any(text.as_bytes(), t, sep, usize::MAX, block)
    }

    fn read_typed_any(
        src: &[u8],
        t: Scalar,
        sep: Sep,
        max: usize,
        block: usize,
    ) -> Result<Result<Array, CsvError>, usize> {
        match t {
            Scalar::F64 => read_typed::<f64>(src, Vec::new(), t, sep, max, block),
            Scalar::I32 => read_typed::<i32>(src, Vec::new(), t, sep, max, block),
            _ => unreachable!("the tests read f64 and i32"),
        }
    }

    #[test]
    fn lines_are_counted_across_blocks_and_parts() {
        // 300,000 lines in blocks of 1 KiB, and one block of 2.4 MB cut into
        // parts parsed on several threads: the same values and line numbers.
        let mut text: String = (0..300_000).map(|i| format!("{i}.5\n")).collect();
        for block in [1 << 10, BLOCK] {
            let a = fast(&text, Scalar::F64, block).unwrap().unwrap();
            assert_eq!(a.shape(), &[300_000, 1]);
            assert_eq!(a.data().get(0), Some(Value::F64(0.5)));
            assert_eq!(a.data().get(299_999), Some(Value::F64(299_999.5)));
        }
        // Line 250,001 holds `250000.5`; make it bad, then ragged.
        let at = text.find("\n250000.5\n").unwrap() + 1;
        text.replace_range(at..at + 8, "25x000.5");
        for block in [1 << 10, BLOCK] {
            let e = fast(&text, Scalar::F64, block).unwrap().unwrap_err();
            assert_eq!(
                e.to_string(),
                "line 250001, field 1: `25x000.5` is not a `f64`"
            );
        }
        text.replace_range(at..at + 8, "250000 5");
        for block in [1 << 10, BLOCK] {
            let e = fast(&text, Scalar::F64, block).unwrap().unwrap_err();
            assert_eq!(
                e.to_string(),
                "line 250001 has 2 fields, but the first row has 1"
            );
        }
    }

    #[test]
    fn a_line_longer_than_a_block_is_read_whole() {
        let row: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let text = format!("{}\n{}", row.join(" "), row.join(" "));
        let a = fast(&text, Scalar::I32, 16).unwrap().unwrap();
        assert_eq!(a.shape(), &[2, 100]);
        assert_eq!(a.data().get(199), Some(Value::I32(99)));
    }

    #[test]
    fn empty_fields_and_the_limit() {
        // An empty field among others is the first bad field; a line of
        // empty fields is blank.
        let e = fast("1,2\n,\n3,,x\n", Scalar::I32, BLOCK)
            .unwrap()
            .unwrap_err();
        assert_eq!(e.to_string(), "line 3, field 2: `` is not a `i32`");
        let src = "1 2\n3 4\n5 6\n";
        let r = read_typed_any(src.as_bytes(), Scalar::I32, Sep::White, 5, BLOCK);
        assert!(matches!(r, Err(6)), "{r:?}");
        let r = read_typed_any(src.as_bytes(), Scalar::I32, Sep::White, 6, BLOCK);
        assert_eq!(r.unwrap().unwrap().shape(), &[3, 2]);
    }
}
