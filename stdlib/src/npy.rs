//! The NumPy `.npy` format (versions 1.0, 2.0 and 3.0), done by hand.
//!
//! Written: version 1.0 (2.0 when the header does not fit in 64 KiB),
//! little-endian, C order, header padded with spaces to a multiple of 64
//! bytes and ended by `\n`, exactly as `numpy.save` writes it. Read: any of
//! the three versions, either byte order (`<`, `>`, `|`, `=`), C or Fortran
//! order (Fortran data is reordered to row-major); the element type must be
//! the one asked for (no silent conversion). Every malformed input is an
//! error, never a panic.

use crate::array::{Array, Data};
use lang::Scalar;
use std::fmt;

#[derive(Debug)]
pub enum NpyError {
    Io(std::io::Error),
    Format(String),
    Type { want: Scalar, found: String },
    Rank { want: usize, found: usize },
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Io(e) => write!(f, "{e}"),
            NpyError::Format(m) => write!(f, "not a valid .npy file: {m}"),
            NpyError::Type { want, found } => {
                write!(f, "the file holds `{found}` elements, not `{want}`")
            }
            NpyError::Rank { want, found } => write!(
                f,
                "the file holds a {found}-dimensional array, not {want}-dimensional"
            ),
        }
    }
}

fn descr(t: Scalar) -> &'static str {
    match t {
        Scalar::Bool => "|b1",
        Scalar::I32 => "<i4",
        Scalar::I64 => "<i8",
        Scalar::U32 => "<u4",
        Scalar::U8 => "|u1",
        Scalar::F32 => "<f4",
        Scalar::F64 => "<f8",
    }
}

/// The header of a `.npy` file holding `a` (the element bytes follow it).
fn header(a: &Array) -> Vec<u8> {
    let shape = match a.shape() {
        [n] => format!("({n},)"),
        s => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr(a.scalar())
    );
    let (version, len_bytes) = if dict.len() + 1 + 10 < 65536 {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let pre = 6 + 2 + len_bytes;
    let total = (pre + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - pre;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY");
    out.extend_from_slice(&[version, 0]);
    if len_bytes == 2 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Writes the elements of `a` little-endian: its own bytes on a
/// little-endian machine, with no copy.
fn write_body(a: &Array, w: &mut impl std::io::Write) -> std::io::Result<()> {
    let d = a.data();
    if cfg!(target_endian = "little") {
        return w.write_all(d.bytes());
    }
    let s = a.scalar().size();
    let swapped: Vec<u8> = d
        .bytes()
        .chunks(s)
        .flat_map(|c| c.iter().rev())
        .copied()
        .collect();
    w.write_all(&swapped)
}

/// The bytes of a `.npy` file holding `a`.
pub fn encode(a: &Array) -> Vec<u8> {
    let mut out = header(a);
    out.reserve(a.len() * a.scalar().size());
    let _ = write_body(a, &mut out);
    out
}

/// Write `a` to `path`: the header, then the array's bytes straight from
/// its storage.
pub fn save(a: &Array, path: &std::path::Path) -> Result<(), NpyError> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(NpyError::Io)?;
    let head = header(a);
    f.write_all(&head).map_err(NpyError::Io)?;
    reserve(&f, head.len(), a.len() * a.scalar().size());
    write_body(a, &mut f).map_err(NpyError::Io)?;
    f.flush().map_err(NpyError::Io)
}

/// Reserve the file's blocks for `len` bytes from `offset` before they are
/// written, as NumPy's `save` does: one large write then runs 2-3 times as
/// fast on ext4 (no block allocation on the way). Only advice: the size
/// stays as written, and a refusal changes nothing.
fn reserve(f: &std::fs::File, offset: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if len >= 1 << 20 {
            // SAFETY: the descriptor is open for writing for the call's
            // duration; fallocate reads no memory of this process.
            unsafe {
                libc::fallocate(
                    f.as_raw_fd(),
                    libc::FALLOC_FL_KEEP_SIZE,
                    offset as libc::off_t,
                    len as libc::off_t,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (f, offset, len);
}

/// Read `path` as an array of element type `t`; `rank` None accepts any rank
/// and flattens it. The header is read first, then the elements straight
/// into the new array's storage (one read, no conversion when the byte
/// order is the machine's and the order is C's).
pub fn load(path: &std::path::Path, t: Scalar, rank: Option<usize>) -> Result<Array, NpyError> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(NpyError::Io)?;
    let len = f.metadata().map_err(NpyError::Io)?.len();
    // The magic, the version and the header's length, then the header.
    let mut head = Vec::with_capacity(1 << 12);
    let take = |f: &mut std::fs::File, head: &mut Vec<u8>, n: usize| {
        f.by_ref()
            .take(n.saturating_sub(head.len()) as u64)
            .read_to_end(head)
            .map_err(NpyError::Io)
    };
    take(&mut f, &mut head, 10)?;
    if head.get(6).is_some_and(|&v| v >= 2) {
        take(&mut f, &mut head, 12)?;
    }
    let (_, end) = header_len(&head)?;
    take(&mut f, &mut head, end)?;
    let h = parse_header(&head, t, rank)?;
    let body = usize::try_from(len.saturating_sub(h.start as u64)).unwrap_or(usize::MAX);
    fill(h, body, |dst| f.read_exact(dst).map_err(NpyError::Io))
}

fn bad(m: impl Into<String>) -> NpyError {
    NpyError::Format(m.into())
}

/// What the header says.
struct Header {
    t: Scalar,
    swap: bool,
    fortran: bool,
    /// The array's shape, as the file gives it.
    shape: Vec<usize>,
    /// The rank asked for (None: any, flattened).
    rank: Option<usize>,
    /// Where the elements start.
    start: usize,
}

/// The header's length and where it ends, from the first 10 or 12 bytes.
fn header_len(bytes: &[u8]) -> Result<(usize, usize), NpyError> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("missing the \\x93NUMPY magic"));
    }
    let (hlen, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(format!("unknown version {v}"))),
    };
    let end = start
        .checked_add(hlen)
        .ok_or_else(|| bad("truncated header"))?;
    Ok((start, end))
}

/// Parse the header at the start of `bytes` (which hold at least all of it).
fn parse_header(bytes: &[u8], t: Scalar, rank: Option<usize>) -> Result<Header, NpyError> {
    let (start, end) = header_len(bytes)?;
    if end > bytes.len() {
        return Err(bad("truncated header"));
    }
    let header = std::str::from_utf8(&bytes[start..end]).map_err(|_| bad("header is not text"))?;
    let descr = dict_str(header, "descr")?;
    let fortran = match dict_raw(header, "fortran_order")?.trim_start() {
        s if s.starts_with("True") => true,
        s if s.starts_with("False") => false,
        _ => return Err(bad("bad fortran_order")),
    };
    let shape = dict_shape(header)?;
    let (order, code) = descr.split_at(descr.len().min(1));
    let found = match code {
        "b1" => Scalar::Bool,
        "i4" => Scalar::I32,
        "i8" => Scalar::I64,
        "u4" => Scalar::U32,
        "u1" => Scalar::U8,
        "f4" => Scalar::F32,
        "f8" => Scalar::F64,
        _ => {
            return Err(NpyError::Type {
                want: t,
                found: descr.to_string(),
            })
        }
    };
    if found != t {
        return Err(NpyError::Type {
            want: t,
            found: found.name().to_string(),
        });
    }
    let swap = match order {
        "<" | "|" => cfg!(target_endian = "big"),
        ">" => cfg!(target_endian = "little"),
        "=" => false,
        _ => return Err(bad(format!("unknown byte order in `{descr}`"))),
    };
    if let Some(r) = rank {
        if shape.len() != r {
            return Err(NpyError::Rank {
                want: r,
                found: shape.len(),
            });
        }
    }
    let dims: Vec<i128> = shape.iter().map(|&d| d as i128).collect();
    let shape = crate::array::shape_of(&dims, t).map_err(|e| bad(e.to_string()))?;
    Ok(Header {
        t,
        swap,
        fortran,
        shape,
        rank,
        start: end,
    })
}

/// The array `h` describes, its element bytes (`body` of them available)
/// put in place by `read`.
fn fill(
    h: Header,
    body: usize,
    read: impl FnOnce(&mut [u8]) -> Result<(), NpyError>,
) -> Result<Array, NpyError> {
    let (t, size) = (h.t, h.t.size());
    let n: usize = h.shape.iter().product();
    if n.checked_mul(size).is_none_or(|b| body < b) {
        return Err(bad(format!(
            "{body} data bytes for {n} elements of {size} bytes"
        )));
    }
    let mut data = Data::try_zeros(t, n).ok_or_else(|| {
        NpyError::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("no memory for {n} elements"),
        ))
    })?;
    match data.bytes_mut() {
        Some(dst) => {
            crate::array::advise_huge_pages(dst);
            read(dst)?
        }
        None => {
            // `bool`: read as bytes, then each made 0 or 1.
            let mut raw = vec![0u8; n];
            read(&mut raw)?;
            data.write_bytes(0, &raw);
        }
    }
    if h.swap && size > 1 {
        if let Some(b) = data.bytes_mut() {
            b.chunks_mut(size).for_each(|c| c.reverse());
        }
    }
    if h.fortran && h.shape.len() > 1 {
        let raw = data.bytes().to_vec();
        let mut c_order = vec![0u8; raw.len()];
        let s = &h.shape;
        for (fi, chunk) in raw.chunks(size).enumerate() {
            // Fortran index fi → (i0, i1, i2) with i0 fastest.
            let mut rem = fi;
            let mut idx = [0usize; 3];
            for (k, &d) in s.iter().enumerate() {
                idx[k] = rem % d;
                rem /= d;
            }
            let ci = idx
                .iter()
                .zip(s.iter())
                .fold(0, |acc, (&i, &d)| acc * d + i);
            c_order[ci * size..(ci + 1) * size].copy_from_slice(chunk);
        }
        data.write_bytes(0, &c_order);
    }
    let shape = if h.rank.is_none() { vec![n] } else { h.shape };
    Array::new(data, shape).map_err(|e| bad(e.to_string()))
}

/// Parse the bytes of a `.npy` file.
pub fn decode(bytes: &[u8], t: Scalar, rank: Option<usize>) -> Result<Array, NpyError> {
    let h = parse_header(bytes, t, rank)?;
    let body = &bytes[h.start..];
    fill(h, body.len(), |dst| {
        dst.copy_from_slice(&body[..dst.len()]);
        Ok(())
    })
}

fn dict_raw<'h>(header: &'h str, key: &str) -> Result<&'h str, NpyError> {
    for q in ['\'', '"'] {
        let pat = format!("{q}{key}{q}");
        if let Some(p) = header.find(&pat) {
            let rest = header[p + pat.len()..].trim_start();
            return rest
                .strip_prefix(':')
                .ok_or_else(|| bad(format!("no value for `{key}`")));
        }
    }
    Err(bad(format!("no `{key}` in the header")))
}

fn dict_str<'h>(header: &'h str, key: &str) -> Result<&'h str, NpyError> {
    let v = dict_raw(header, key)?.trim_start();
    let q = v
        .chars()
        .next()
        .filter(|c| *c == '\'' || *c == '"')
        .ok_or_else(|| bad(format!("`{key}` is not a string")))?;
    let v = &v[1..];
    let e = v
        .find(q)
        .ok_or_else(|| bad(format!("unterminated `{key}`")))?;
    Ok(&v[..e])
}

fn dict_shape(header: &str) -> Result<Vec<usize>, NpyError> {
    let v = dict_raw(header, "shape")?.trim_start();
    let v = v
        .strip_prefix('(')
        .ok_or_else(|| bad("shape is not a tuple"))?;
    let e = v.find(')').ok_or_else(|| bad("unterminated shape"))?;
    let mut out = Vec::new();
    for part in v[..e].split(',') {
        let p = part.trim().trim_end_matches('L');
        if p.is_empty() {
            continue;
        }
        out.push(
            p.parse::<usize>()
                .map_err(|_| bad(format!("bad dimension `{p}`")))?,
        );
    }
    if out.is_empty() {
        // A 0-d array: one element.
        out.push(1);
    }
    if out.len() > 3 {
        return Err(bad(format!(
            "{} dimensions (accl arrays have 1 to 3)",
            out.len()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_type() {
        let a = Array::from_vec(vec![1.5f32, -2.0, 3.25, 4.0, 5.0, 6.0], vec![2, 3]).unwrap();
        let b = decode(&encode(&a), Scalar::F32, Some(2)).unwrap();
        assert_eq!(a, b);

        let h = encode(&a);
        assert_eq!((h.len() - 24) % 64, 0);
        let bo = Array::from_vec(vec![true, false, true], vec![3]).unwrap();
        assert_eq!(decode(&encode(&bo), Scalar::Bool, None).unwrap(), bo);
        assert!(matches!(
            decode(&encode(&bo), Scalar::U8, None),
            Err(NpyError::Type { .. })
        ));
        assert!(decode(b"\x93NUMPY\x01\x00\xff\xff", Scalar::U8, None).is_err());
    }

    #[test]
    fn fortran_and_big_endian() {
        // numpy: np.array([[1,2,3],[4,5,6]], dtype='>i4', order='F')
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        let dict = "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }";
        let mut h = dict.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
        f.extend_from_slice(h.as_bytes());
        for v in [1i32, 4, 2, 5, 3, 6] {
            f.extend_from_slice(&v.to_be_bytes());
        }
        let a = decode(&f, Scalar::I32, Some(2)).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn files_are_read_into_the_array_and_checked_for_length() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        let a = Array::from_vec(vec![1.5f64, -2.0, 3.25, 4.0, 5.0, 6.0], vec![3, 2]).unwrap();
        save(&a, &p).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), encode(&a));
        assert_eq!(load(&p, Scalar::F64, Some(2)).unwrap(), a);
        assert_eq!(load(&p, Scalar::F64, None).unwrap().shape(), &[6]);
        let bo = Array::from_vec(vec![true, false, true], vec![3]).unwrap();
        save(&bo, &p).unwrap();
        assert_eq!(load(&p, Scalar::Bool, None).unwrap(), bo);
        // One element's bytes short.
        save(&a, &p).unwrap();
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.truncate(bytes.len() - 8);
        std::fs::write(&p, &bytes).unwrap();
        let e = load(&p, Scalar::F64, None).unwrap_err().to_string();
        assert_eq!(
            e,
            "not a valid .npy file: 40 data bytes for 6 elements of 8 bytes"
        );
        std::fs::write(&p, b"\x93NUMPY\x01\x00\xff\x00{'descr'").unwrap();
        let e = load(&p, Scalar::F64, None).unwrap_err().to_string();
        assert_eq!(e, "not a valid .npy file: truncated header");
    }
}
