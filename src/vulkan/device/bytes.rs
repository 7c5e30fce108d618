//! Moving bytes between host arrays and staging memory: the pieces of a
//! staged strided copy, writing them back into the host array, and the
//! copy itself. Below the transfers that use them (`super::transfer`,
//! `super::strided`) and the device state that keeps pieces until their
//! copy lands.

use stdlib::Array;

/// A piece of a staged strided copy: `len` bytes at `host` in the host
/// array and at `staged` in the staging buffer.
#[derive(Debug, Clone, Copy)]
pub struct Piece {
    pub host: usize,
    pub staged: usize,
    pub len: usize,
}

/// Write the staged `pieces` of `src` into the host array.
pub(super) fn scatter(array: &Array, pieces: &[Piece], src: &[u8]) {
    let mut data = array.data_mut();
    for p in pieces {
        let Some(from) = src.get(p.staged..p.staged + p.len) else {
            continue;
        };
        match data.bytes_mut() {
            Some(b) if p.host + p.len <= b.len() => {
                copy_bytes(&mut b[p.host..p.host + p.len], from)
            }
            _ => data.write_bytes(p.host, from),
        }
    }
}

/// Copies of at least this many bytes are split over threads.
const PAR_COPY: usize = 1 << 20;

/// `dst.copy_from_slice(src)`, on several threads when large: moving bytes
/// between staging memory and host arrays is the host's share of every
/// transfer, and one core moves only a few GB/s of it.
pub(super) fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    if src.len() < PAR_COPY {
        dst.copy_from_slice(src);
        return;
    }
    dst.par_chunks_mut(PAR_COPY / 4)
        .zip(src.par_chunks(PAR_COPY / 4))
        .for_each(|(d, s)| d.copy_from_slice(s));
}
