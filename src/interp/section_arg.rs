//! Array arguments that may be sections (`a[lo:count, ..]`), of the
//! builtins that take them ([`lang::Builtin::sections`]: the MPI ones,
//! `acc_memcpy_to_device`, `acc_memcpy_from_device`, `acc_memcpy_device`). Each arrives as
//! the array and, per axis, `lo` and `count` (the checker's expansion); it
//! is evaluated into a box exactly as a data clause's section is, with the
//! same `accl::run::bad_section` diagnostic, and moved as its contiguous
//! runs ([`Region::runs`]), so a column travels as one element per row.

use super::error;
use super::machine::Ctx;
use super::region::Region;
use super::value::{RtVal, R};
use lang::builtins::WHOLE_AXIS;
use lang::Span;
use stdlib::Array;

/// A section argument, evaluated.
pub struct Section {
    pub array: Array,
    pub region: Region,
    pub span: Span,
}

impl Section {
    /// The box's elements, packed in row-major order (a buffer the system
    /// refuses is `accl::run::out_of_memory` at the section).
    pub fn pack(&self) -> R<Vec<u8>> {
        let size = self.array.scalar().size();
        let mut out = buffer(self.region.len(self.array.shape()) * size, self.span)?;
        let d = self.array.data();
        let bytes = d.bytes();
        for (first, len) in self.region.runs(self.array.shape()) {
            out.extend_from_slice(&bytes[first * size..(first + len) * size]);
        }
        Ok(out)
    }

    /// Write packed elements back into the box.
    pub fn unpack(&self, buf: &[u8]) {
        let size = self.array.scalar().size();
        let mut d = self.array.data_mut();
        let mut at = 0;
        for (first, len) in self.region.runs(self.array.shape()) {
            d.write_bytes(first * size, &buf[at..at + len * size]);
            at += len * size;
        }
    }
}

/// An empty buffer with room for `bytes`, or `accl::run::out_of_memory`
/// at `span` when the system refuses it (never an abort).
pub fn buffer(bytes: usize, span: Span) -> R<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(bytes)
        .map_err(|_| error::out_of_memory(span, "MPI buffer", bytes))?;
    Ok(v)
}

fn int(v: &RtVal) -> i128 {
    match v {
        RtVal::Scalar(v) => v.as_i128().unwrap_or(0),
        _ => 0,
    }
}

/// The source text at `span` (for naming a section in a diagnostic).
pub fn text(cx: &Ctx, span: Span) -> String {
    cx.source
        .as_deref()
        .and_then(|s| s.text.get(span.range()))
        .unwrap_or("the array")
        .to_string()
}

/// The section argument at `args[*i]`; advances `*i` past its bounds.
pub fn section(args: &[RtVal], spans: &[Span], i: &mut usize, cx: &Ctx) -> R<Section> {
    let span = spans.get(*i).copied().unwrap_or_default();
    let RtVal::Array(array) = &args[*i] else {
        return Err(error::internal(span, "expected an array argument"));
    };
    let shape = array.shape().to_vec();
    let mut axes = Vec::with_capacity(shape.len());
    let mut written = Vec::with_capacity(shape.len());
    let mut bad = None;
    for (k, &dim) in shape.iter().enumerate() {
        let lo = args.get(*i + 1 + 2 * k).map_or(0, int);
        let n = args.get(*i + 2 + 2 * k).map_or(0, int);
        if lo == WHOLE_AXIS as i128 && n == WHOLE_AXIS as i128 {
            axes.push((0, dim));
            written.push(None);
        } else {
            written.push(Some((lo, n)));
            if lo < 0 || n < 0 || lo + n > dim as i128 {
                bad.get_or_insert(k);
                axes.push((0, 0));
            } else {
                axes.push((lo as usize, (lo + n) as usize));
            }
        }
    }
    *i += 1 + 2 * shape.len();
    if let Some(k) = bad {
        // Name it as written: the whole axes past the last cut one are left out.
        while written.last() == Some(&None) {
            written.pop();
        }
        let t = text(cx, span);
        let name = t.split('[').next().unwrap_or("a").trim();
        return Err(error::bad_section(span, name, &written, k, &shape));
    }
    Ok(Section {
        array: array.clone(),
        region: Region::new(&shape, &axes),
        span,
    })
}
